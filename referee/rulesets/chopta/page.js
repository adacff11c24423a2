// CHOPTA on the pages (served as /rulesets/chopta/page.js, loaded by name by spectator.js and
// play.js): every play area and pool size, and the dice a seat clicks to place or swap.

import { die, el, hiddenDie, timeLeft } from "/static/common.js";

/** The board of a game's public view: whose turn it is, and every play area. */
export function drawBoard(view, kit) {
  const { seatName } = kit;
  const over = view.status === "finished";
  const header = el("p", { cls: "round-turn" },
    over ? "Game over" : `Round ${view.round + 1} · ${view.turn === null ? "between turns" : `${seatName(view.seats[view.turn])} to play`}`);
  const areas = view.seats.map((seat) => {
    const groups = seat.arrangement.groups.map((g) => el("span", { cls: `group ${g.kind}`, title: `${g.kind}: ${g.points} points` },
      el("span", { cls: "kind", text: `${g.kind} ${g.points}` }), g.dice.map((d) => die(d))));
    const unused = seat.arrangement.unused.map((d) => die(d, "unused"));
    const pool = [];
    for (let i = 0; i < seat.pool_size; i += 1) pool.push(hiddenDie());
    return el("section", { cls: `area${view.turn === seat.seat ? " deciding" : ""}`, "aria-label": `${seatName(seat)}'s play area`, "data-seat": seat.seat },
      el("h3", {}, el("span", { cls: "name", text: seatName(seat) }), seat.retired ? el("span", { cls: "badge retired", text: "retired" }) : null, " ", timeLeft(seat.deadline)),
      el("p", { cls: "arranged" }, "play area: ", groups.length || unused.length ? [groups, unused] : "empty", el("span", { cls: "small", text: ` (this round: ${seat.arrangement.points})` })),
      el("p", { cls: "pool" }, `pool (${seat.pool_size}): `, pool.length ? pool : "empty"),
      el("p", { cls: "rounds" }, "rounds: ", seat.rounds.join(" + ") || "—", " = ", el("strong", { cls: "seat-total", text: seat.total })));
  });
  return el("div", {}, header, el("div", { cls: "areas" }, areas));
}

/** What a seat clicks to choose (``choosing``: its pool's dice, the others' areas' dice to
 * take), or sees while it waits (its pool). */
export function pickRows(turn, kit, choosing) {
  const pool = turn.view.you.pool;
  const dice = choosing ? pool.map((d, i) => kit.pick(`pool:${d}`, `pool#${i}`, d)) : pool.map((d) => die(d));
  const rows = [kit.row(`your pool (${pool.length}, hidden from the others)`, dice)];
  if (choosing) {
    turn.view.seats.filter((s) => s.seat !== turn.seat).forEach((s) => {
      rows.push(kit.row(`${kit.nameOf(s.seat)}'s area`, s.area.map((d, i) => kit.pick(`area${s.seat}:${d}`, `area${s.seat}#${i}`, d))));
    });
  }
  return rows;
}

/** A move in words, as the event feed tells it (past tense). */
export function describeMove(move, nameOf) {
  switch (move.type) {
    case "place": return `placed a ${move.die}`;
    case "swap": return `swapped a ${move.die} into ${nameOf(move.opponent)}'s area for a ${move.take}`;
    default: return move.type;
  }
}

/** A legal move as a choice: what playing it does. */
export function choiceText(move, nameOf) {
  if (move.type === "place") return `place a ${move.die} in your area`;
  if (move.type === "swap") return `swap a ${move.die} into ${nameOf(move.opponent)}'s area for their ${move.take}`;
  return describeMove(move, nameOf);
}

/** The clicks that choose a move: a die of the pool, then (a swap) the die it takes. */
export function clicksOf(move) {
  switch (move.type) {
    case "place": return [[[`pool:${move.die}`]]];
    case "swap": return [[[`pool:${move.die}`], [`area${move.opponent}:${move.take}`]]];
    default: return [[]];
  }
}
