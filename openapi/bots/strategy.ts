// The strategy both generated clients' bots play: it reads the seat's view through the
// contract's types only (openapi-typescript's), narrowed by `ruleset` and a move's `type`.
import type { components } from "../generated/openapi-typescript/schema";

export type Turn = components["schemas"]["Turn"];
export type Move = Turn["legal_moves"][number];
export type Ruleset = "choice" | "choice-specials" | "chopta";

/** Which of legal_moves to send (each client sends its own typed element): CHOPTA, the
 * highest die of the seat's own pool; CHOICE, the highest fifth die already on the seat's
 * sheet; else the first. */
export function choose(turn: Turn): number {
  const view = turn.view;
  if (view === null) throw new Error("a turn to decide comes with the seat's view");
  const moves: Move[] = turn.legal_moves;
  if (moves.length === 0) throw new Error("a turn to decide has legal moves");
  let best = 0;
  let score = -1;
  moves.forEach((move, index) => {
    let value = -1;
    if (view.ruleset === "chopta") {
      if (move.type === "place" && view.you.pool.includes(move.die)) value = move.die;
    } else if (move.type === "mark") {
      const chosen = view.you.sheet.fifth_dice.map((fifth) => fifth.value);
      if (chosen.includes(move.fifth)) value = move.fifth;
    }
    if (value > score) [best, score] = [index, value];
  });
  return best;
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}
