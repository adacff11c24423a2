#!/usr/bin/env node
// A webhook bot in Node with no package at all: the referee POSTs each turn to it, signed
// per the Standard Webhooks spec, and takes the answer's body as the move.
// Run it with `WEBHOOK_SECRET=whsec_... node bot.js PORT`. It plays
// legal_moves[seq % legal_moves.length]: put your strategy in choose().
"use strict";
const crypto = require("node:crypto");
const http = require("node:http");

const secret = Buffer.from(process.env.WEBHOOK_SECRET.replace(/^whsec_/, ""), "base64");

function choose(turn) {
  const moves = turn.legal_moves;
  return moves[turn.seq % moves.length];
}

// Standard Webhooks: HMAC-SHA256 of "id.timestamp.body", base64, sent as "v1,<sig>"
function signedByTheReferee(headers, body) {
  const id = headers["webhook-id"] || "";
  const timestamp = headers["webhook-timestamp"] || "0";
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false; // a replay
  const expected = crypto
    .createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]))
    .digest();
  return (headers["webhook-signature"] || "").split(" ").some((signature) => {
    const given = Buffer.from(signature.replace(/^v1,/, ""), "base64");
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

http
  .createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      if (!signedByTheReferee(request.headers, body)) {
        response.writeHead(401).end();
        return;
      }
      const message = JSON.parse(body); // {"type": "turn" | "start" | "end", "game_id", "turn"}
      if (message.type !== "turn") {
        response.writeHead(204).end();
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(choose(message.turn)));
    });
  })
  .listen(Number(process.argv[2]), "127.0.0.1");
