// A ruleset with no module of its own on the pages (no ``page_script`` in its package): the
// referee serves this one as its /rulesets/{id}/page.js. Each seat's figures and each move
// are shown as the view has them.

import { el, timeLeft } from "/static/common.js";

const HIDDEN = ["seat", "name", "claimed", "deadline"];

export function drawBoard(view, kit) {
  const figures = (seat) => Object.entries(seat)
    .filter(([key]) => !HIDDEN.includes(key))
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(" · ");
  return el("div", { cls: "seats-plain" }, view.seats.map((seat) => el("section", { "data-seat": seat.seat, "aria-label": kit.seatName(seat) },
    el("h3", {}, el("span", { cls: "name", text: kit.seatName(seat) }), " ", timeLeft(seat.deadline)),
    el("p", { cls: "small", text: figures(seat) }))));
}

export function pickRows() {
  return [];
}

export function clicksOf() {
  return [[]]; // no dice to click: each move is offered as it is
}

export function describeMove(move) {
  const { type, ...rest } = move;
  const told = Object.entries(rest).map(([key, value]) => `${key} ${JSON.stringify(value)}`).join(", ");
  return `${type.replaceAll("_", " ")}${told ? ` ${told}` : ""}`;
}

export function choiceText(move) {
  return describeMove(move);
}
