// Plays full games against a running referee at REFEREE_URL (the Python suite starts one).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  RefereeError,
  claimSeat,
  createGame,
  createTournament,
  getGame,
  getTournament,
  getTurn,
  referee,
  register,
  runArena,
  runBot,
  runEntrant,
  submitMove,
} from "../src/index.js";

const url = process.env.REFEREE_URL;

test("two bots play a CHOICE game to the end", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const client = referee(url!);
  const game = await createGame(client, {
    ruleset: "choice",
    seats: [{ name: "ts-a" }, { name: "ts-b" }],
    deadline_s: 0,
  });
  const finals = await Promise.all(
    game.seats.map((seat) => runBot(url!, seat.token!, (turn) => turn.legal_moves[0])),
  );
  assert.ok(finals.every((turn) => turn.status === "finished"));
  const view = await getGame(client, game.id);
  assert.equal(view.status, "finished");
  assert.equal(view.ruleset, "choice");
  assert.equal(view.ranking?.length, 2);
});

test("four entrants play a CHOPTA tournament to the end", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const client = referee(url!);
  const tournament = await createTournament(client, { ruleset: "chopta", entrants: 4, deadline_s: 0, options: { target: 10 } });
  const entrants = [];
  for (const name of ["ts-a", "ts-b", "ts-c", "ts-d"]) entrants.push(await register(client, tournament.id, name));
  await Promise.all(entrants.map((entrant) => runEntrant(url!, entrant.token, (turn) => turn.legal_moves[0], 5)));
  const view = await getTournament(client, tournament.id);
  assert.equal(view.status, "finished");
  assert.equal(view.ruleset, "chopta");
  assert.equal(view.standings.length, 4);
  assert.ok(view.standings.every((standing) => standing.games === 3));
  assert.ok(view.seed);
});

test("a CHOPTA game with swaps plays out", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const game = await createGame(referee(url!), {
    ruleset: "chopta",
    seats: [{ name: "ts-a" }, { name: "ts-b" }],
    options: { target: 10 },
    deadline_s: 0,
  });
  const finals = await Promise.all(
    game.seats.map((seat) => runBot(url!, seat.token!, (turn) => turn.legal_moves[turn.legal_moves.length - 1])),
  );
  assert.ok(finals.every((turn) => turn.status === "finished"));
});

test("a refusal names the rule", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const client = referee(url!);
  const game = await createGame(client, { ruleset: "chopta", seats: [{ name: "a" }, { name: "b" }] });
  const token = game.seats[1].token!;
  const turn = await getTurn(client, token);
  await assert.rejects(
    submitMove(client, token, turn.seq, { type: "place", die: 1 }),
    (error: unknown) => error instanceof RefereeError && error.code === "not-your-turn",
  );
});

test("a lone seat's bot sends one request per decision", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const client = referee(url!);
  const game = await createGame(client, { ruleset: "choice", seats: [{ name: "solo" }], deadline_s: 0 });
  const sent: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const reply = await realFetch(input, init);
    // a request the referee's rate limit turned away (and the client sent again) is not counted
    if (reply.status !== 429) sent.push(input instanceof Request ? input.method : (init?.method ?? "GET"));
    return reply;
  };
  try {
    const final = await runBot(url!, game.seats[0].token!, (turn) => turn.legal_moves[0]);
    assert.equal(final.status, "finished");
  } finally {
    globalThis.fetch = realFetch;
  }
  const record = (await (await realFetch(`${url}/v1/games/${game.id}/record`)).json()) as { decisions: unknown[] };
  assert.equal(sent.filter((method) => method === "GET").length, 1);
  assert.equal(sent.filter((method) => method === "POST").length, record.decisions.length);
});

test("a creation sent again with its idempotency key is made once", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const client = referee(url!);
  const body = { ruleset: "choice" as const, seats: [{ name: "ts-a" }, {}], deadline_s: 0 };
  const key = crypto.randomUUID();
  const first = await createGame(client, body, key);
  const again = await createGame(client, body, key);
  assert.deepEqual(again, first);
  const seatKey = crypto.randomUUID();
  const seat = await claimSeat(client, first.id, "ts-b", undefined, seatKey);
  assert.deepEqual(await claimSeat(client, first.id, "ts-b", undefined, seatKey), seat);
  const view = await getGame(client, first.id);
  assert.deepEqual(
    view.seats.map((s) => s.claimed),
    [true, true],
  );
  await assert.rejects(
    createGame(client, { ...body, deadline_s: 5 }, key),
    (error: unknown) => error instanceof RefereeError && error.code === "idempotency-key-reused",
  );
});

test("two bot accounts play the arena and leave it when stopped", { skip: !url && "REFEREE_URL is not set" }, async () => {
  const suffix = `${Date.now() % 1_000_000}`;
  const names = [`ts arena ${suffix} a`, `ts arena ${suffix} b`];
  const tokens: string[] = [];
  for (const name of names) {
    const reply = await fetch(`${url}/v1/bots`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name }),
    });
    assert.equal(reply.status, 201);
    tokens.push(((await reply.json()) as { token: string }).token);
  }
  const stop = new AbortController();
  const runs = tokens.map((token) =>
    runArena(url!, token, "choice", (turn) => turn.legal_moves[0], stop.signal, { deadlineS: 30, wait: 1 }),
  );
  const rated = async () => {
    for (const name of names) {
      const profile = (await (await fetch(`${url}/v1/bots/${encodeURIComponent(name)}`)).json()) as {
        ratings: { games: number }[];
      };
      if (!profile.ratings.length || profile.ratings[0].games < 1) return false;
    }
    return true;
  };
  const deadline = Date.now() + 60_000;
  while (!(await rated()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
  stop.abort();
  const made = await Promise.all(runs);
  assert.ok(await rated());
  assert.ok(made.every((count) => count > 0));
  for (const name of names) {
    const profile = (await (await fetch(`${url}/v1/bots/${encodeURIComponent(name)}`)).json()) as { in_arena: boolean };
    assert.equal(profile.in_arena, false);
  }
});
