// A whole game of one ruleset, two seats, through the SDK @hey-api/openapi-ts generates from
// openapi.json: `tsx bots/hey_api_bot.ts URL RULESET`.
import { createClient } from "../generated/hey-api/client";
import { createGame, getGame, getRecord, getTurn, submitMove } from "../generated/hey-api";
import type { Turn } from "../generated/hey-api";
import { check, choose, type Ruleset } from "./strategy";

const [url, ruleset] = process.argv.slice(2) as [string, Ruleset];
const client = createClient({ baseUrl: url });

/** Sends one of the turn's legal moves; the answer holds the seat's next turn. */
async function decide(token: string, turn: Turn): Promise<Turn | null | undefined> {
  const sent = await submitMove({
    client,
    path,
    query: { wait: 0 },
    auth: token,
    body: { seq: turn.seq, move: turn.legal_moves[choose(turn)]! },
  });
  check(sent.data?.accepted, JSON.stringify(sent.error));
  return sent.data.turn;
}

const created = await createGame({
  client,
  body: { ruleset, seats: [{ name: "a" }, { name: "b" }], deadline_s: 0 },
});
check(created.data, JSON.stringify(created.error));
const game = created.data;
const path = { game_id: game.id };
let decisions = 0;
for (let round = 0; round < 2000; round++) {
  const { data: view } = await getGame({ client, path });
  check(view?.ruleset === ruleset, "the public view is of the game's ruleset");
  if (view.status === "finished") break;
  for (const seat of view.to_decide) {
    const token = game.seats[seat]?.token;
    check(token, "a named seat's token is shown when the game is created");
    let turn: Turn | null | undefined = (await getTurn({ client, path, auth: token })).data;
    while (turn?.status === "your_turn") {
      turn = await decide(token, turn);
      decisions += 1;
    }
  }
}
const { data: final } = await getGame({ client, path });
check(final?.status === "finished" && final.ranking?.length === 2, "the game is over");
const { data: record } = await getRecord({ client, path });
check(record?.finished && record.seed === final.seed, "the record shows the seed");
check(record.decisions.length === decisions, "the record holds every decision");
console.log(JSON.stringify({ client: "hey-api", ruleset, decisions, ranking: final.ranking }));
