// A person at a seat (/games/{id}/play): the seat's turn is long-polled with its token, its
// legal moves are chosen by clicking dice (each click keeps only the moves it fits), and the
// choice is posted as any bot posts it. The token stays in this tab (sessionStorage); it is
// sent only in the Authorization header, never in a URL.

import { FACES, api, el, keepFocus, refusal, rendererOf, timeLeft } from "./common.js";

const SHOWN = 24; // moves listed at once; clicking dice narrows the rest
const storageKey = (gameId) => `referee.seat.${gameId}`;

/** Keep a seat's token for this tab, where the play page finds it. */
function rememberSeat(gameId, token) {
  sessionStorage.setItem(storageKey(gameId), token);
}

/** On ``form``'s submit, ``takeSeat()`` (a game created, a seat claimed: [game id, seat
 * token]) and then the seat's play page, this tab holding the token; a refusal is told in
 * ``problem``. */
export function playOnSubmit(form, problem, takeSeat) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const [gameId, token] = await takeSeat();
      rememberSeat(gameId, token);
      location.assign(`/games/${gameId}/play`);
    } catch (error) {
      problem.hidden = false;
      problem.textContent = refusal(error);
    }
  });
}

/** The seat token this tab holds for a game. One handed over in the address's fragment
 * (``#token=...``, which browsers never send) is kept, and the fragment cleared. */
export function seatToken(gameId) {
  const handed = new URLSearchParams(location.hash.slice(1)).get("token");
  if (handed) {
    rememberSeat(gameId, handed);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(storageKey(gameId));
}

/** Whether ``picks`` (tokens, in click order) start one of a move's variants; ``whole``: all of it. */
function fits(variants, picks, whole = false) {
  return variants.some((groups) => {
    let at = 0;
    for (const group of groups) {
      const left = [...group];
      for (const token of picks.slice(at, at + group.length)) {
        const found = left.indexOf(token);
        if (found < 0) return false;
        left.splice(found, 1);
      }
      at += group.length;
      if (at >= picks.length) return !whole || (at === picks.length && groups.at(-1) === group);
    }
    return picks.length === 0 && (!whole || groups.length === 0);
  });
}

/**
 * The panel of a seat played in the browser: ``view()`` is the latest public view (for the
 * seats' names). It runs until the game is over or the token is refused.
 */
export function seatPanel(gameId, token, view) {
  // the seats' names from the latest public view, or from the turn's own view before it
  const nameOf = (seat) => view()?.seats[seat]?.name ?? state.turn?.view?.seats?.[seat]?.name ?? `seat ${seat + 1}`;
  const heading = el("h2");
  const prompt = el("p", { cls: "prompt", "aria-live": "polite" });
  const rows = el("div", { cls: "pick-rows" });
  const actions = el("p", { cls: "pick-actions" });
  const moves = el("ol", { cls: "moves", "aria-label": "Moves that fit your picks" });
  const message = el("p", { cls: "message", role: "status" });
  const node = el("section", { cls: "seat-panel", "aria-label": "Your seat" }, heading, prompt, rows, actions, moves, message);
  // picks: the tokens clicked, in order; where: the die or card each click took
  const state = { turn: null, renderer: null, picks: [], where: [], busy: false };

  function say(text, problem = false) {
    message.textContent = text;
    message.classList.toggle("problem", problem);
  }

  async function show(turn) {
    state.renderer ??= await rendererOf(turn.ruleset);
    state.turn = turn;
    state.picks = [];
    state.where = [];
    draw();
  }

  /** What the ruleset's module draws the picks with: ``open`` tells which tokens still fit. */
  function kit(open) {
    const pick = (token, where, shown, kind = "die") => pickButton(token, where, shown, open, kind);
    return { row, pick, picks: state.picks, nameOf };
  }

  /** The panel drawn again, the keyboard focus kept on the die, card or button it was on. */
  function draw() {
    const inside = node.contains(document.activeElement);
    keepFocus(node, drawPanel);
    // the button that had it is gone or disabled (a die picked, the last pick undone): the
    // focus stays in the panel, on the first die or move that can be clicked
    if (inside && !node.contains(document.activeElement)) {
      node.querySelector(".pick:not([disabled]), button.move:not([disabled])")?.focus();
    }
  }

  function drawPanel() {
    const turn = state.turn;
    drawHeading();
    rows.replaceChildren();
    actions.replaceChildren();
    moves.replaceChildren();
    if (turn.status === "finished") {
      // a seat's total as its ruleset's view shows it (CHOICE's under its score sheet)
      const totals = turn.view.seats.filter((s) => (s.total ?? s.score?.total) !== undefined)
        .map((s) => `${nameOf(s.seat)} ${s.total ?? s.score.total}`).join(", ");
      prompt.textContent = `The game is over${totals ? `: ${totals}` : ""}.`;
      return;
    }
    if (turn.status !== "your_turn") {
      prompt.textContent = turn.game_status === "waiting" ? "Waiting for the other seats to be taken…" : "Waiting for the others to decide…";
      if (turn.view) rows.append(...state.renderer.pickRows(turn, kit(() => false), false));
      return;
    }
    const variants = turn.legal_moves.map((move) => state.renderer.clicksOf(move));
    const fitting = turn.legal_moves.map((move, i) => [move, i]).filter(([, i]) => fits(variants[i], state.picks));
    const open = (token) => fitting.some(([, i]) => fits(variants[i], [...state.picks, token]));
    prompt.textContent = state.picks.length
      ? `${fitting.length === 1 ? "1 move fits" : `${fitting.length} moves fit`} your picks.`
      : "Your turn: click dice (and cards) to choose, or pick a move below.";
    rows.append(...state.renderer.pickRows(turn, kit(open), true));
    actions.append(
      el("button", { type: "button", text: "Undo pick", disabled: !state.picks.length, onclick: undo }), " ",
      el("button", { type: "button", text: "Clear picks", disabled: !state.picks.length, onclick: () => show(turn) }),
    );
    const complete = fitting.filter(([, i]) => fits(variants[i], state.picks, true));
    const ordered = [...complete, ...fitting.filter((f) => !complete.includes(f))];
    for (const [move, i] of ordered.slice(0, SHOWN)) {
      const whole = complete.some(([, j]) => j === i);
      moves.append(el("li", {}, el("button", {
        type: "button", cls: `move${whole ? " whole" : ""}`, "data-move": JSON.stringify(move), disabled: state.busy,
        text: `Play: ${state.renderer.choiceText(move, nameOf)}`, onclick: () => submit(move),
      })));
    }
    if (ordered.length > SHOWN) moves.append(el("li", { cls: "more", text: `${ordered.length - SHOWN} more fit: click dice to narrow them.` }));
  }

  function row(label, buttons) {
    return el("p", { cls: "pick-row" }, el("span", { cls: "label", text: `${label}: ` }), buttons.length ? buttons : "none");
  }

  /** A die, a card or another thing to click (``kind``, which its label names): ``token`` is
   * what it picks, ``where`` the one physical thing. */
  function pickButton(token, where, shown, open, kind = "die") {
    const order = state.where.indexOf(where) + 1;
    const picked = order > 0;
    const label = kind === "die" ? `die showing ${shown}` : `${kind} ${shown}`;
    return el("button", {
      type: "button", cls: `pick ${kind}${picked ? " picked" : ""}`, "data-token": token, "aria-pressed": String(picked),
      "aria-label": picked ? `${label}, pick ${order}` : label, disabled: picked || state.busy || !open(token),
      text: kind === "die" ? FACES[shown - 1] : shown,
      onclick: () => {
        state.picks.push(token);
        state.where.push(where);
        draw();
      },
    });
  }

  function undo() {
    state.picks.pop();
    state.where.pop();
    draw();
  }

  async function submit(move) {
    state.busy = true;
    draw();
    say("Sending…");
    try {
      const answer = await api(`/v1/games/${gameId}/moves?wait=25`, { token, body: { seq: state.turn.seq, move } });
      say(`Played: ${state.renderer.choiceText(move, nameOf)}.`);
      state.busy = false;
      if (answer.turn) show(answer.turn);
      else await next();
    } catch (error) {
      state.busy = false;
      say(refusal(error), true);
      await next(); // the turn may have moved on (a deadline passed): ask again
    }
  }

  /** Long-poll the seat's turn until it is this seat's to decide, or the game is over. */
  async function next() {
    for (;;) {
      let turn;
      try {
        turn = await api(`/v1/games/${gameId}/turn?wait=25`, { token });
      } catch (error) {
        if (error.status === 401 || error.status === 403 || error.status === 404) {
          prompt.textContent = `This tab's seat token is refused: ${error.message}`;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 2000));
        continue;
      }
      show(turn);
      if (turn.status !== "waiting") return;
    }
  }

  /** "You: <name>", once the name is known (the public view, read beside the turn). */
  function drawHeading() {
    const turn = state.turn;
    const name = view()?.seats[turn.seat]?.name ?? turn.view?.seats?.[turn.seat]?.name;
    const deadline = turn.status === "your_turn" ? timeLeft(turn.deadline) : null;
    heading.replaceChildren(name ? `You: ${name} ` : "Your seat ", ...(deadline ? [deadline] : []));
  }

  return { node, start: next, named: () => state.turn && drawHeading() };
}
