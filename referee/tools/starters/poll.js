#!/usr/bin/env node
// A polling bot in Node with no package at all (fetch is built in): it asks for its turn
// (long-polled), posts a move, and gets its next turn in the answer, until the game is over.
// Run it with `node bot.js URL SEAT_TOKEN`. It plays legal_moves[seq % legal_moves.length]:
// put your strategy in choose().
"use strict";
const [url, token] = process.argv.slice(2);
const game = token.split(".")[0]; // a seat token starts with its game's id

function choose(turn) {
  const moves = turn.legal_moves;
  return moves[turn.seq % moves.length];
}

async function call(method, path, body) {
  const answer = await fetch(url.replace(/\/$/, "") + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await answer.json();
  if (!answer.ok) throw new Error(JSON.stringify(json)); // the problem names the rule
  return json;
}

async function main() {
  let turn = await call("GET", `/v1/games/${game}/turn?wait=30`);
  while (turn.status !== "finished") {
    if (turn.status !== "your_turn") {
      turn = await call("GET", `/v1/games/${game}/turn?wait=30`);
      continue;
    }
    try { // the answer holds the next turn (?wait=30)
      const body = { seq: turn.seq, move: choose(turn) };
      turn = (await call("POST", `/v1/games/${game}/moves?wait=30`, body)).turn;
    } catch (refused) {
      console.error(refused.message);
      turn = await call("GET", `/v1/games/${game}/turn?wait=30`);
    }
  }
  console.error("final:", JSON.stringify(turn.view));
}

main();
