/**
 * A thin client for the referee. Types come from openapi/openapi.json (generated into
 * src/schema.d.ts by `npm ci`), requests from openapi-fetch. A bot is one function:
 * choose(turn) => move; runBot does the long-poll, posts, retries and stops at the end.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type Turn = components["schemas"]["Turn"];
export type Move = Turn["legal_moves"][number];
export type Problem = components["schemas"]["Problem"];
/** A decision accepted; `turn` is the seat's next turn when it was sent with a wait. */
export type MoveAccepted = Omit<components["schemas"]["MoveAccepted"], "turn"> & { turn?: Turn | null };
export type Choose = (turn: Turn) => Move | Move[] | Promise<Move | Move[]>;
/** A new game: one shape per ruleset, told apart by `ruleset`. */
export type CreateGame = paths["/v1/games"]["post"]["requestBody"]["content"]["application/json"];
export type CreateTournament = paths["/v1/tournaments"]["post"]["requestBody"]["content"]["application/json"];
/** A game's public view and a tournament's: the contract's unions, one shape per ruleset. */
export type GameView = components["schemas"]["GameView"];
export type TournamentView = components["schemas"]["TournamentView"];
export type NextDecision = Omit<components["schemas"]["NextDecision"], "turn"> & { turn?: Turn | null };

export class RefereeError extends Error {
  constructor(public readonly problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
  }
  get code(): string {
    return this.problem.code;
  }
}

/** Refusals that mean the game moved on: fetch the turn again instead of retrying. */
const STALE = new Set(["seq-already-decided", "seq-mismatch", "not-your-turn", "game-over"]);

/** Answers that changed nothing and invite a retry: a limit, or a referee restarting. */
const AGAIN = new Set([429, 503]);
/** A proxy's answers when the referee behind it died or was too slow: again only if safe. */
const PROXY_LOST = new Set([502, 504]);

function pauseMs(reply: Response | null, attempt: number): number {
  const after = Number(reply?.headers.get("retry-after") ?? NaN);
  return after > 0 ? Math.min(60, after) * 1000 : Math.min(5000, 100 * 2 ** attempt);
}

/**
 * fetch that waits out a rate limit (429), a referee restarting (503, connection refused)
 * and, for requests safe to repeat (reads, decisions, which the referee dedupes by seq, and
 * creations with an Idempotency-Key, whose first answer it gives again), a proxy's 502 or 504
 * or a connection lost mid-request: for up to `patienceMs`, then the last answer or error.
 * A 409 idempotency-key-in-progress (the key's first request still running) is waited out too.
 */
export function patientFetch(patienceMs = 120_000): (input: Request) => Promise<Response> {
  return async (input: Request) => {
    const stop = Date.now() + patienceMs;
    const keyed = input.headers.has("idempotency-key");
    const safe = input.method === "GET" || new URL(input.url).pathname.endsWith("/moves") || keyed;
    for (let attempt = 0; ; attempt++) {
      let reply: Response | null = null;
      try {
        reply = await fetch(input.clone());
        const inProgress = keyed && reply.status === 409 && reply.headers.has("retry-after");
        const again = AGAIN.has(reply.status) || (safe && PROXY_LOST.has(reply.status)) || inProgress;
        if (!again || Date.now() > stop) return reply;
        await reply.body?.cancel();
      } catch (error) {
        const refused = (error as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
        if (!(refused || safe) || Date.now() > stop) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs(reply, attempt)));
    }
  };
}

/** A client of the referee at `baseUrl`; it waits out limits and restarts (`patientFetch`). */
export function referee(baseUrl: string, patienceMs = 120_000) {
  return createClient<paths>({ baseUrl, fetch: patientFetch(patienceMs) });
}

export type Referee = ReturnType<typeof referee>;

function unwrap<T>(result: { data?: T; error?: unknown }): T {
  if (result.error !== undefined) throw new RefereeError(result.error as Problem);
  return result.data as T;
}

/** A seat token starts with its game's id. */
export function gameOf(token: string): string {
  return token.split(".", 1)[0];
}

/** An Idempotency-Key for a creation: the one given, else a new random one. Every retry of
 * the request (`patientFetch`) sends it again, so none makes twice. */
function keyed(idempotencyKey?: string): { "Idempotency-Key": string } {
  return { "Idempotency-Key": idempotencyKey ?? crypto.randomUUID() };
}

/** A game; its named seats' tokens are in the answer (shown once). Safe to retry. */
export async function createGame(
  client: Referee,
  body: CreateGame,
  idempotencyKey?: string,
): Promise<components["schemas"]["GameCreated"]> {
  return unwrap(await client.POST("/v1/games", { body, headers: keyed(idempotencyKey) }));
}

/** Claim an open seat of a game; its token is in the answer (shown once). Safe to retry. */
export async function claimSeat(
  client: Referee,
  gameId: string,
  name: string,
  inviteCode?: string,
  idempotencyKey?: string,
): Promise<components["schemas"]["Claimed"]> {
  const body = inviteCode === undefined ? { name } : { name, invite_code: inviteCode };
  return unwrap(
    await client.POST("/v1/games/{game_id}/seats", {
      params: { path: { game_id: gameId } },
      body,
      headers: keyed(idempotencyKey),
    }),
  );
}

/** The public view of a game, told apart by `ruleset`. */
export async function getGame(client: Referee, gameId: string): Promise<GameView> {
  return unwrap(await client.GET("/v1/games/{game_id}", { params: { path: { game_id: gameId } } }));
}

export async function getTurn(client: Referee, token: string, wait = 0): Promise<Turn> {
  const result = await client.GET("/v1/games/{game_id}/turn", {
    params: { path: { game_id: gameOf(token) }, query: { wait } },
    headers: { Authorization: `Bearer ${token}` },
  });
  // openapi-fetch widens the contract's fixed-length tuples to arrays; the body is a Turn
  return unwrap(result) as Turn;
}

/**
 * Submit one move (or a postal round's moves). With `wait`, the answer also holds the seat's
 * next turn (`turn`), long-polled up to `wait` seconds: one request per decision. A game's
 * own seat token names its game; a tournament's seat token (`nextDecision`'s) does not, so
 * pass its `game_id`.
 */
export async function submitMove(
  client: Referee,
  token: string,
  seq: number,
  move: Move | Move[],
  wait?: number,
  gameId: string = gameOf(token),
): Promise<MoveAccepted> {
  const body = Array.isArray(move) ? { seq, moves: move } : { seq, move };
  const result = await client.POST("/v1/games/{game_id}/moves", {
    params: { path: { game_id: gameId }, query: wait === undefined ? {} : { wait } },
    headers: { Authorization: `Bearer ${token}` },
    body,
  });
  return unwrap(result) as MoveAccepted;
}

/** Play a seat until its game is over, one request per decision; returns the final turn. */
export async function runBot(baseUrl: string, token: string, choose: Choose, wait = 30): Promise<Turn> {
  const client = referee(baseUrl);
  let turn: Turn | null = null;
  for (;;) {
    if (turn === null || turn.status === "waiting") turn = await getTurn(client, token, wait);
    if (turn.status === "finished") return turn;
    if (turn.status !== "your_turn") continue;
    const decided: Turn = turn;
    let move: Move | Move[] | null = await choose(decided);
    turn = null;
    for (let attempt = 0; attempt < 5 && move !== null; attempt++) {
      try {
        turn = (await submitMove(client, token, decided.seq, move, wait)).turn ?? null;
        break;
      } catch (error) {
        if (error instanceof RefereeError) {
          if (STALE.has(error.code)) break;
          console.error(`the referee refused seat ${decided.seat}'s move at seq ${decided.seq}: ${error.message}`);
          move = move === decided.legal_moves[0] ? null : decided.legal_moves[0];
        } else {
          // a transport failure: the same seq again is safe, the referee dedupes it
          await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
        }
      }
    }
  }
}

/** A tournament (with an organizer key where the referee has them); it starts when full. */
export async function createTournament(
  client: Referee,
  body: CreateTournament,
  idempotencyKey?: string,
): Promise<components["schemas"]["TournamentCreated"]> {
  return unwrap(await client.POST("/v1/tournaments", { body, headers: keyed(idempotencyKey) }));
}

/** Register an entrant; its entrant token (shown once) is what `nextDecision` takes. Safe to
 * retry. */
export async function register(
  client: Referee,
  tournamentId: string,
  name: string,
  inviteCode?: string,
  idempotencyKey?: string,
): Promise<components["schemas"]["Registered"]> {
  const body = inviteCode === undefined ? { name } : { name, invite_code: inviteCode };
  return unwrap(
    await client.POST("/v1/tournaments/{tournament_id}/entrants", {
      params: { path: { tournament_id: tournamentId } },
      body,
      headers: keyed(idempotencyKey),
    }),
  );
}

/** Rounds, tables and standings (by rating, highest first, then points). */
export async function getTournament(client: Referee, tournamentId: string): Promise<TournamentView> {
  return unwrap(
    await client.GET("/v1/tournaments/{tournament_id}", { params: { path: { tournament_id: tournamentId } } }),
  );
}

/** An entrant's next decision across all of its games, long-polled up to `wait` seconds. */
export async function nextDecision(client: Referee, entrantToken: string, wait = 0): Promise<NextDecision> {
  const result = await client.GET("/v1/me/next", {
    params: { query: { wait } },
    headers: { Authorization: `Bearer ${entrantToken}` },
  });
  return unwrap(result) as NextDecision;
}

/** Play every decision of a tournament entrant, across all of its games, until it is over. */
export async function runEntrant(baseUrl: string, entrantToken: string, choose: Choose, wait = 30): Promise<void> {
  const client = referee(baseUrl);
  for (;;) {
    const step = await nextDecision(client, entrantToken, wait);
    if (step.status === "finished") return;
    if (step.status !== "your_turn" || !step.turn || !step.seat_token || !step.game_id) continue;
    const turn = step.turn;
    let move = await choose(turn);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await submitMove(client, step.seat_token, turn.seq, move, undefined, step.game_id);
        break;
      } catch (error) {
        if (!(error instanceof RefereeError) || STALE.has(error.code)) break; // asked again next
        console.error(`the referee refused a move at seq ${turn.seq}: ${error.message}`);
        move = turn.legal_moves[0];
      }
    }
  }
}

/** Seek arena games with a bot account's token (`POST /v1/arena`); they come through `nextDecision`. */
export async function joinArena(
  client: Referee,
  botToken: string,
  ruleset: string,
  seats = 2,
  deadlineS = 10,
): Promise<components["schemas"]["ArenaSeek"]> {
  const result = await client.POST("/v1/arena", {
    body: { ruleset, seats, deadline_s: deadlineS },
    headers: { Authorization: `Bearer ${botToken}` },
  });
  return unwrap(result);
}

/** Leave the arena's pool (games in play go on). */
export async function leaveArena(client: Referee, botToken: string): Promise<void> {
  const result = await client.DELETE("/v1/arena", { headers: { Authorization: `Bearer ${botToken}` } });
  if (result.error !== undefined) unwrap(result);
}

/** A bot's decision in one of its games; the answer is its next decision in any of them
 * (`decideNext`: one request per decision). */
export async function decideNext(
  client: Referee,
  botToken: string,
  gameId: string,
  seq: number,
  move: Move | Move[],
  wait = 0,
): Promise<NextDecision> {
  const body = Array.isArray(move) ? { seq, moves: move } : { seq, move };
  const result = await client.POST("/v1/me/games/{game_id}/moves", {
    params: { path: { game_id: gameId }, query: { wait } },
    headers: { Authorization: `Bearer ${botToken}` },
    body,
  });
  return unwrap(result) as NextDecision;
}

/**
 * Play a bot account's arena games until `signal` aborts: seek games of `ruleset`, play each
 * turn with one request per decision, decline challenges ("later"), and leave the pool when
 * stopped. Returns the number of decisions made.
 */
export async function runArena(
  baseUrl: string,
  botToken: string,
  ruleset: string,
  choose: Choose,
  signal: AbortSignal,
  { seats = 2, deadlineS = 10, wait = 5 } = {},
): Promise<number> {
  const client = referee(baseUrl);
  let made = 0;
  await joinArena(client, botToken, ruleset, seats, deadlineS);
  try {
    let step = await nextDecision(client, botToken, wait);
    while (!signal.aborted) {
      if (step.status === "challenged") {
        for (const challenge of step.challenges ?? []) {
          await client.POST("/v1/challenges/{challenge_id}/decline", {
            params: { path: { challenge_id: challenge.id } },
            headers: { Authorization: `Bearer ${botToken}` },
            body: { reason: "later" },
          });
        }
      }
      if (step.status !== "your_turn" || !step.turn || !step.game_id) {
        step = await nextDecision(client, botToken, wait);
        continue;
      }
      const turn = step.turn;
      const move = await choose(turn);
      try {
        step = await decideNext(client, botToken, step.game_id, turn.seq, move, wait);
        made++;
      } catch (error) {
        if (!(error instanceof RefereeError)) throw error;
        if (!STALE.has(error.code)) console.error(`the referee refused a move at seq ${turn.seq}: ${error.message}`);
        step = await nextDecision(client, botToken, wait);
      }
    }
  } finally {
    await leaveArena(client, botToken);
  }
  return made;
}
