// A whole game of one ruleset, two seats, through openapi-fetch and the types
// openapi-typescript generates from openapi.json: `tsx bots/openapi_fetch_bot.ts URL RULESET`.
import createClient from "openapi-fetch";
import type { paths } from "../generated/openapi-typescript/schema";
import { check, choose, type Ruleset, type Turn } from "./strategy";

const [url, ruleset] = process.argv.slice(2) as [string, Ruleset];
const api = createClient<paths>({ baseUrl: url });
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Sends one of the turn's legal moves; the answer holds the seat's next turn. */
async function decide(token: string, turn: Turn): Promise<Turn | null | undefined> {
  const sent = await api.POST("/v1/games/{game_id}/moves", {
    params: { path, query: { wait: 0 } },
    headers: bearer(token),
    body: { seq: turn.seq, move: turn.legal_moves[choose(turn)]! },
  });
  check(sent.data?.accepted, JSON.stringify(sent.error));
  return sent.data.turn;
}

const created = await api.POST("/v1/games", {
  body: { ruleset, seats: [{ name: "a" }, { name: "b" }], deadline_s: 0 },
});
check(created.data, JSON.stringify(created.error));
const game = created.data;
const path = { game_id: game.id };
let decisions = 0;
for (let round = 0; round < 2000; round++) {
  const { data: view } = await api.GET("/v1/games/{game_id}", { params: { path } });
  check(view?.ruleset === ruleset, "the public view is of the game's ruleset");
  if (view.status === "finished") break;
  for (const seat of view.to_decide) {
    const token = game.seats[seat]?.token;
    check(token, "a named seat's token is shown when the game is created");
    const asked = await api.GET("/v1/games/{game_id}/turn", { params: { path }, headers: bearer(token) });
    let turn: Turn | null | undefined = asked.data;
    while (turn?.status === "your_turn") {
      turn = await decide(token, turn);
      decisions += 1;
    }
  }
}
const { data: final } = await api.GET("/v1/games/{game_id}", { params: { path } });
check(final?.status === "finished" && final.ranking?.length === 2, "the game is over");
const { data: record } = await api.GET("/v1/games/{game_id}/record", { params: { path } });
check(record?.finished && record.seed === final.seed, "the record shows the seed");
check(record.decisions.length === decisions, "the record holds every decision");
console.log(JSON.stringify({ client: "openapi-fetch", ruleset, decisions, ranking: final.ranking }));
