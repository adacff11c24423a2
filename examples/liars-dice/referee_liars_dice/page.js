// Liar's dice on the referee's pages (the ruleset's ``page_script``, served as
// /rulesets/liars-dice/page.js and imported by name by the referee's spectator.js and play.js):
// the bids, whose turn, each seat's dice (hidden until the call: the public view holds none
// before it), and what a seat clicks to bid (a face, then a quantity) or to call.

import { die, el, hiddenDie, timeLeft } from "/static/common.js";

const bidText = (bid) => `${bid.quantity} × ${bid.face}`;

/** The board of a game's public view: the bid to beat, every seat's dice (a "?" each until
 * the call shows them), the bids in order, and the call's outcome. */
export function drawBoard(view, kit) {
  const { seatName } = kit;
  const over = view.status === "finished";
  const nameOf = (seat) => seatName(view.seats[seat]);
  const header = el("p", { cls: "round-turn" },
    over ? "Game over" : view.turn == null ? "Waiting" : `${nameOf(view.turn)} to bid or call`,
    ` · ${view.total_dice} dice in play, sixes wild · `,
    view.bid ? `${over ? "last bid" : "bid to beat"}: ${nameOf(view.bid.seat)}'s ${bidText(view.bid)}` : "no bid yet");
  const seats = view.seats.map((seat) => {
    const dice = seat.dice ? seat.dice.map((d) => die(d)) : Array.from({ length: seat.dice_count }, () => hiddenDie());
    return el("section", { cls: `area${view.turn === seat.seat ? " deciding" : ""}`, "aria-label": `${seatName(seat)}'s dice`, "data-seat": seat.seat },
      el("h3", {}, el("span", { cls: "name", text: seatName(seat) }), seat.retired ? el("span", { cls: "badge retired", text: "retired" }) : null, " ", timeLeft(seat.deadline)),
      el("p", { cls: "cup" }, `dice (${seat.dice_count}${seat.dice ? ", shown" : ", hidden"}): `, dice),
      el("p", { cls: "small" }, `${seat.timeouts} missed deadline${seat.timeouts === 1 ? "" : "s"} · total `, el("strong", { cls: "seat-total", text: seat.total })));
  });
  const bids = el("ol", { cls: "bids", "aria-label": "The bids, first to last" },
    view.bids.map((bid) => el("li", { "data-seat": bid.seat, text: `${nameOf(bid.seat)}: ${bidText(bid)}` })));
  const parts = [header, el("div", { cls: "areas" }, seats), el("h2", { text: `Bids (${view.bids.length})` }), view.bids.length ? bids : el("p", { text: "None yet." })];
  if (view.call) {
    const c = view.call;
    parts.push(el("p", { cls: "call" },
      `${nameOf(c.caller)} called ${nameOf(c.bidder)}'s ${bidText(c)} a lie: ${c.matches} ${c.matches === 1 ? "die matches" : "dice match"}, `,
      el("strong", { text: `${nameOf(c.winner)} wins, ${nameOf(c.loser)} loses` })));
  }
  return el("div", { cls: "liars-dice" }, parts);
}

/** What a seat sees of its own (its dice, hidden from the others), and, when it decides, the
 * faces and quantities it clicks to make a bid. */
export function pickRows(turn, kit, choosing) {
  const mine = turn.view?.you?.dice ?? [];
  const rows = [kit.row("your dice (hidden from the others)", mine.map((d) => die(d)))];
  if (choosing) {
    const bids = turn.legal_moves.filter((m) => m.type === "bid");
    const faces = [...new Set(bids.map((m) => m.face))].sort((a, b) => a - b);
    const quantities = [...new Set(bids.map((m) => m.quantity))].sort((a, b) => a - b);
    rows.push(
      kit.row("face", faces.map((f) => kit.pick(`face:${f}`, `face#${f}`, f))),
      kit.row("quantity", quantities.map((q) => kit.pick(`quantity:${q}`, `quantity#${q}`, q, "quantity"))),
    );
  }
  return rows;
}

/** The clicks that choose a move: a bid's face and quantity, in either order; a call has
 * none (it is offered as it is). */
export function clicksOf(move) {
  return move.type === "bid" ? [[[`face:${move.face}`, `quantity:${move.quantity}`]]] : [[]];
}

/** A move in words, as the event feed and the replay's steps tell it (past tense). */
export function describeMove(move) {
  if (move.type === "bid") return `bid ${bidText(move)}`;
  if (move.type === "liar") return "called the last bid a lie";
  return move.type;
}

/** A legal move as a choice: what playing it does. */
export function choiceText(move) {
  if (move.type === "bid") return `bid at least ${move.quantity} dice showing ${move.face}`;
  if (move.type === "liar") return "call the last bid a lie (every die is shown)";
  return move.type;
}
