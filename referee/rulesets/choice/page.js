// CHOICE on the pages (served as /rulesets/choice/page.js, loaded by name by spectator.js and
// play.js): the board a spectator sees, and the dice a seat clicks to choose its move.
// choice-specials' module builds on this one (``specials``: cards and the leftovers plate).

import { die, el, timeLeft } from "/static/common.js";

const CARDS = { fdh: "FdH", null: "Null", kur: "KUR", minus1: "−1", minus2: "−2", suppen_kasper: "Suppen-Kasper" };

// the rulebook's points value of each sum (RULES.md, CHOICE 5.)
const POINTS = { 2: 100, 3: 70, 4: 60, 5: 50, 6: 40, 7: 30, 8: 40, 9: 50, 10: 60, 11: 70, 12: 100 };

/** The board of a game's public view: the postal round's rolls, and every sheet. */
export function drawBoard(view, kit, specials = false) {
  const rolls = el("section", { cls: "rolls", "aria-label": "Current rolls", hidden: !(view.rolls || []).length },
    el("h2", { text: `Postal round ${view.batch + 1}` }),
    (view.rolls || []).map((roll, i) => el("p", { cls: "roll" }, el("span", { cls: "label", text: `roll ${view.first_roll + i + 1}` }), roll.map((d) => die(d)))));
  const sheets = el("div", { cls: "sheets" }, view.seats.map((seat) => sheet(seat, view, specials, kit.seatName)));
  return el("div", {}, rolls, sheets);
}

function sheet(seat, view, specials, seatName) {
  const deciding = view.to_decide.includes(seat.seat);
  const rows = seat.score.sums.map((row) => {
    const boxes = [];
    for (let i = 0; i < 10; i += 1) boxes.push(el("span", { cls: i < row.marks ? "box marked" : "box", "aria-hidden": "true" }));
    return el("tr", { cls: row.points > 0 ? "plus" : row.points < 0 ? "minus" : "" },
      el("th", { scope: "row", text: row.sum }),
      el("td", { cls: "value", text: POINTS[row.sum] }),
      el("td", { cls: "boxes", "aria-label": `${row.marks} marks` }, boxes, row.marks > 10 ? el("span", { cls: "extra", text: `+${row.marks - 10}` }) : null),
      el("td", { cls: "points", text: row.points }));
  });
  const slots = [0, 1, 2].map((i) => {
    const fifth = seat.fifth_dice[i];
    const toward = view.end_marks;
    const boxes = [];
    for (let j = 0; j < toward; j += 1) boxes.push(el("span", { cls: fifth && j < fifth.marks ? "box marked" : "box", "aria-hidden": "true" }));
    return el("tr", {},
      el("th", { scope: "row" }, fifth ? die(fifth.value) : el("span", { cls: "empty-slot", text: "—" })),
      el("td", { cls: "boxes", "aria-label": fifth ? `${fifth.marks} of ${toward}` : "empty slot" }, boxes),
      el("td", { text: fifth ? `${fifth.marks}/${toward}` : "" }));
  });
  const state = seat.retired ? "retired" : seat.done ? "done" : deciding ? "deciding" : seat.decided ? "decided" : "";
  const parts = [
    el("h3", {}, el("span", { cls: "name", text: seatName(seat) }), " ", state ? el("span", { cls: `badge ${state}`, text: state }) : null, " ", timeLeft(seat.deadline)),
    el("table", { cls: "score" },
      el("caption", { text: "sums 2 to 12: points value, marks, points" }),
      el("tbody", {}, rows),
      el("tfoot", {},
        el("tr", {}, el("th", { scope: "row", text: "plus" }), el("td", { colspan: 3, text: seat.score.plus })),
        el("tr", {}, el("th", { scope: "row", text: "minus" }), el("td", { colspan: 3, text: seat.score.minus })),
        el("tr", { cls: "total" }, el("th", { scope: "row", text: "total" }), el("td", { colspan: 3, cls: "seat-total", text: seat.score.total })))),
    el("table", { cls: "fifth" }, el("caption", { text: `fifth die: marks toward ${view.end_marks}` }), el("tbody", {}, slots)),
    el("p", { cls: "small", text: `${seat.rounds} rounds · ${seat.free_throws} free throws` }),
  ];
  if (specials) {
    parts.push(
      el("p", { cls: "cards" }, "cards left: ", seat.cards.length ? seat.cards.map((c) => el("span", { cls: "card", text: CARDS[c] })) : "none"),
      el("p", { cls: "plate" }, "leftovers plate: ", seat.plate.length ? seat.plate.map((d) => die(d)) : "empty"),
    );
  }
  return el("section", { cls: `sheet${deciding ? " deciding" : ""}`, "aria-label": `${seatName(seat)}'s sheet`, "data-seat": seat.seat }, parts);
}

/** What a seat clicks to choose (``choosing``), or sees while it waits: the roll it decides
 * (and, with ``specials``, its cards, its plate, and the plate's dice it eats). */
export function pickRows(turn, kit, choosing, specials = false) {
  if (!choosing) return [];
  const mine = turn.view.you;
  const roll = turn.view.rolls[mine.roll_index];
  const rows = [kit.row(`roll ${turn.view.first_roll + mine.roll_index + 1}`, roll.map((d, i) => kit.pick(`roll:${d}`, `roll#${i}`, d)))];
  if (specials) {
    const sheet = turn.view.seats[turn.seat];
    rows.push(kit.row("your cards", sheet.cards.map((card) => kit.pick(`card:${card}`, `card#${card}`, CARDS[card], "card"))));
    if (sheet.plate.length) rows.push(kit.row("your plate", sheet.plate.map((d, i) => kit.pick(`plate:${d}`, `plate#${i}`, d))));
    const eaten = kit.picks.filter((t) => t.startsWith("plate:")).map((t) => Number(t.slice(6)));
    if (eaten.length === 5) rows.push(kit.row("eaten", eaten.map((d, i) => kit.pick(`eaten:${d}`, `eaten#${i}`, d))));
  }
  return rows;
}

const sum = (pair) => pair[0] + pair[1];
// the sums a move marks, as players say them: "sums 7 and 9 (3+4, 4+5)"
const pairs = (two) => `${two.length === 2 && sum(two[0]) === sum(two[1]) ? `sum ${sum(two[0])} twice` : `sums ${two.map(sum).join(" and ")}`} (${two.map((p) => p.join("+")).join(", ")})`;

/** A move in words, in the players' terms: the sums marked and the fifth die (every CHOICE
 * move, cards included). */
export function describeMove(move, nameOf) {
  switch (move.type) {
    case "mark": return `${pairs(move.pairs)}, fifth die ${move.fifth}`;
    case "free_throw": return `free throw: ${pairs(move.pairs)}, ${move.set_aside} set aside`;
    case "pass": return "sheet complete: the rest of the postal round passed";
    case "fdh": {
      const last = move.fifth ? `fifth die ${move.fifth}` : move.set_aside ? `set aside ${move.set_aside}` : "no fifth die";
      return `card FdH: sum ${sum(move.pair)} (${move.pair.join("+")}), ${last}, ${move.remove.join(" and ")} to the plate`;
    }
    case "null": return `card Null: ${pairs(move.pairs)}, ${move.plate} to the plate`;
    case "kur": return `card KUR: fifth die ${move.fifth}, the other four to the plate`;
    case "minus1": return "card −1: the roll refused, all five to the plate";
    case "minus2": return `card −2: the roll refused, a mark off fifth die ${move.value}`;
    case "suppen_kasper": return `card Suppen-Kasper: eats ${move.eat.join(" ")} from the plate, then ${describeMove(move.round, nameOf)}`;
    default: return move.type;
  }
}

export const choiceText = describeMove;

/** The clicks that choose a move: the roll's dice (the two pairs in either order), a card,
 * the plate's dice a Suppen-Kasper eats and then the eaten dice. */
export function clicksOf(move, from = "roll") {
  const dice = (values, source = from) => values.map((d) => `${source}:${d}`);
  const twoPairs = (head, [a, b]) => [[...head, dice(a), dice(b)], [...head, dice(b), dice(a)]];
  switch (move.type) {
    case "mark": return twoPairs([dice([move.fifth])], move.pairs);
    case "free_throw": return twoPairs([dice([move.set_aside])], move.pairs);
    case "pass": return [[]]; // no dice to click: the move is offered as it is
    case "fdh": {
      const last = move.fifth ?? move.set_aside;
      return [[["card:fdh"], dice(move.remove), dice(move.pair), ...(last ? [dice([last])] : [])]];
    }
    case "null": return twoPairs([["card:null"], dice([move.plate])], move.pairs);
    case "kur": return [[["card:kur"], dice([move.fifth])]];
    case "minus1":
    case "minus2": return [[[`card:${move.type}`]]];
    case "suppen_kasper":
      return clicksOf(move.round, "eaten").map((round) => [["card:suppen_kasper"], dice(move.eat, "plate"), ...round]);
    default: return [[]];
  }
}
