// Plays Liar's dice, a ruleset installed from outside the referee (examples/liars-dice), with
// the client's bot loops, against a referee at REFEREE_URL that has it installed. The client's
// types are generated from that referee's own contract (GET /docs/openapi.json), which lists
// the plug-in's game and tournament bodies, moves and views (its ``views``: the Liar's dice
// members of SeatView, GameView and GameRecord); the committed contract does not (the Python
// suite's test_typescript_client.py generates them, type-checks this file, runs it).
import assert from "node:assert/strict";
import { test } from "node:test";
import { createGame, createTournament, getGame, getTournament, referee, register, runBot, runEntrant, type Turn } from "../src/index.js";

const url = process.env.REFEREE_URL;

/** A bid most of the time (one of the three lowest), else the call once there is a bid; the
 * seat's view is typed: its own dice, and the bid to beat (absent before the first). */
function bidder(turn: Turn) {
  const view = turn.view;
  if (view?.ruleset === "liars-dice") {
    assert.equal(view.you.dice.length, view.seats[view.you.seat].dice_count);
    assert.ok(view.bid === undefined ? view.bids.length === 0 : view.bids.at(-1)?.face === view.bid.face);
  }
  const bids = turn.legal_moves.filter((move) => move.type === "bid");
  const call = turn.legal_moves.find((move) => move.type === "liar");
  if (bids.length && (!call || Math.random() < 0.7)) return bids[Math.floor(Math.random() * Math.min(3, bids.length))];
  return call ?? turn.legal_moves[0];
}

test("three bots play a Liar's dice game to the end", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const client = referee(url!);
  const game = await createGame(client, {
    ruleset: "liars-dice",
    seats: [{ name: "ts-a" }, { name: "ts-b" }, { name: "ts-c" }],
    options: { dice_per_seat: 3, bidding_rule: "reset-quantity" },
    deadline_s: 0,
  });
  const finals = await Promise.all(game.seats.map((seat) => runBot(url!, seat.token!, bidder)));
  assert.ok(finals.every((turn) => turn.status === "finished" && turn.ruleset === "liars-dice"));
  // the plug-in declares its views, so the contract's GameView has its public view: told
  // apart by ``ruleset``, every field typed
  const view = await getGame(client, game.id);
  assert.equal(view.status, "finished");
  assert.ok(view.ruleset === "liars-dice");
  assert.deepEqual([...(view.ranking ?? [])].sort(), [1, 2, 3]);
  assert.equal(view.turn, undefined);
  const call = view.call!;
  assert.notEqual(call.winner, call.loser);
  assert.ok(view.seats.every((seat) => seat.dice?.length === 3));
  const replay = (await (await fetch(`${url}/v1/games/${game.id}/replay`)).json()) as { verified: boolean };
  assert.equal(replay.verified, true);
});

test("three entrants play a Liar's dice tournament to the end", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const client = referee(url!);
  const tournament = await createTournament(client, { ruleset: "liars-dice", entrants: 3, deadline_s: 0, options: { dice_per_seat: 2 } });
  const entrants = [];
  for (const name of ["ts-a", "ts-b", "ts-c"]) entrants.push(await register(client, tournament.id, name));
  await Promise.all(entrants.map((entrant) => runEntrant(url!, entrant.token, bidder, 5)));
  const view = await getTournament(client, tournament.id);
  assert.equal(view.status, "finished");
  assert.equal(view.ruleset, "liars-dice");
  assert.equal(view.standings.length, 3);
  assert.ok(view.standings.every((standing) => standing.games === 2));
  assert.equal(view.standings.reduce((sum, standing) => sum + standing.points, 0), 0);
});
