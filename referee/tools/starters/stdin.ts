// A stdin bot in TypeScript with no runtime dependency: one Turn JSON line in, one move line
// out. Build it with `npm ci && npm run build` (tsc writes dist/bot.js), then play a seat with
// `referee bot --exec "node dist/bot.js" --url URL --seat-token TOKEN`.
// It plays legal_moves[seq % legal_moves.length]: put your strategy in choose().
import * as readline from "node:readline";

/** What the referee sends each turn (GET /v1/games/{id}/turn; docs/CONNECTING.md). */
interface Turn {
  ruleset: string;
  status: "your_turn";
  game_status: string;
  seat: number;
  seq: number;
  /** every legal move, verbatim: answer one of them */
  legal_moves: Record<string, unknown>[];
  /** seconds since the epoch; null when the game has no deadline */
  deadline: number | null;
  /** the game as this seat sees it; its shape depends on the ruleset */
  view: Record<string, unknown> | null;
}

function choose(turn: Turn): unknown {
  const moves = turn.legal_moves;
  return moves[turn.seq % moves.length];
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line: string) => {
  const turn = JSON.parse(line) as Turn;
  process.stdout.write(JSON.stringify(choose(turn)) + "\n");
  process.stderr.write(`seq ${turn.seq}: ${turn.legal_moves.length} legal moves\n`);
});
