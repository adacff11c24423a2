#!/usr/bin/env node
// A stdin bot in Node with no package at all: one Turn JSON line in, one move line out.
// Run it with `referee bot --exec "node bot.js" --url URL --seat-token TOKEN`.
// It plays legal_moves[seq % legal_moves.length]: put your strategy in choose().
"use strict";
const readline = require("node:readline");

function choose(turn) {
  const moves = turn.legal_moves;
  return moves[turn.seq % moves.length];
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  const turn = JSON.parse(line);
  process.stdout.write(JSON.stringify(choose(turn)) + "\n");
  process.stderr.write(`seq ${turn.seq}: ${turn.legal_moves.length} legal moves\n`);
});
