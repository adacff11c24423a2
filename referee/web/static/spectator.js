// The spectator pages' one script (referee/web/pages.py serves the shells): it reads only the
// public endpoints (and, in the pages' compact forms, a live game's public view as patches and
// a finished game's replay, made from the public replay), so a spectator sees exactly what the
// public view shows. No build step, no
// library, nothing from another origin (the pages' Content-Security-Policy forbids it).
//
// Nothing is redrawn that did not change: the replay's controls, a tournament's tables and
// lists are built once and then only their values change, so what a reader opened stays open
// and the keyboard focus stays where it was.

import { api, colourOf, el, keepFocus, rendererOf, tickDeadlines } from "./common.js";
import { playOnSubmit, seatPanel, seatToken } from "./play.js";

const app = document.getElementById("app");
const EVENTS = [
  "game_created", "seat_claimed", "game_started", "decision", "timeout", "rolls", "rolls_decided",
  "seat_done", "played", "round_over", "game_over",
];
const SPEEDS = [["0.5×", 1600], ["1×", 800], ["2×", 400], ["4×", 200], ["8×", 100]];

function when(epoch) {
  return new Date(epoch * 1000).toLocaleString();
}

function seatName(seat) {
  return seat.name ?? `seat ${seat.seat + 1} (open)`;
}

function fail(error, root = app) {
  root.replaceChildren(el("p", { cls: "problem", role: "alert", text: `Cannot show this: ${error.message}` }));
}

function setText(node, text) {
  const value = String(text);
  if (node.textContent !== value) node.textContent = value;
}

// -- the listing ---------------------------------------------------------------------------------

async function indexPage() {
  const games = listing("Games", "/v1/games", "games", gameRow, ["Game", "Ruleset", "Status", "Seats", "Created"]);
  const tournaments = listing(
    "Tournaments", "/v1/tournaments", "tournaments", tournamentRow, ["Tournament", "Ruleset", "Format", "Status", "Entrants", "Created"],
  );
  const tv = el("section", { cls: "tv", "aria-label": "Featured live game" });
  app.replaceChildren(el("h1", { text: "Live and recent" }), tv, practiceForm(), games.section, tournaments.section);
  await Promise.all([games.load(), tournaments.load(), feature(tv)]);
  // the newest page follows what happens, until the watcher pages back
  setInterval(() => { games.refresh(); feature(tv); }, 5000);
  setInterval(() => tournaments.refresh(), 5000);
}

/** The home page as a TV: the closest or highest-rated running game (the referee picks it:
 * /featured.json, referee/web/featured.py), playing live; when it ends, the next. */
let featured = null;
const WHY = { rated: "the highest-rated game", closest: "the closest game", newest: "the newest game" };
async function feature(tv) {
  if (featured && !featured.over()) return;
  let live;
  try {
    live = await api("/featured.json");
  } catch {
    return;
  }
  if (!live.id) {
    if (!featured) tv.replaceChildren();
    return;
  }
  if (featured && featured.id === live.id) return;
  const board = el("div", { cls: "tv-board" });
  tv.dataset.why = live.why;
  tv.replaceChildren(
    el("h2", {}, `Now playing, ${WHY[live.why] ?? "live"}: `, el("a", { href: `/games/${live.id}`, text: `${live.ruleset} · ${live.seats.join(", ")}` })),
    board,
  );
  featured = { id: live.id, ...gamePage(board, live.id, { embed: true }) };
}

/** A game against the referee's house bots, played in this tab. */
function practiceForm() {
  const field = (id, label, input) => el("p", {}, el("label", { for: id, text: label }), input);
  const select = (id, options, chosen) => el("select", { id, name: id }, options.map((o) => el("option", { value: o, text: o, selected: o === chosen })));
  const name = el("input", { id: "practice-name", required: true, maxlength: 64, value: "me", autocomplete: "nickname" });
  const ruleset = select("practice-ruleset", [], null);
  const rules = el("a", { href: "#", text: "its rules" });
  // every ruleset the referee plays, the first (its default) chosen
  api("/v1/rulesets").then((all) => {
    ruleset.replaceChildren(...all.map((r, i) => el("option", { value: r.id, text: r.title ? `${r.title}` : r.id, selected: i === 0 })));
    rules.href = `/rulesets/${encodeURIComponent(ruleset.value)}/rules`;
  }).catch(fail);
  ruleset.addEventListener("change", () => (rules.href = `/rulesets/${encodeURIComponent(ruleset.value)}/rules`));
  const bots = select("practice-bots", ["1", "2", "3"], "1");
  const level = select("practice-level", ["random", "greedy", "strong"], "strong");
  const deadline = el("input", { id: "practice-deadline", type: "number", min: 0, max: 3600, value: 300, inputmode: "numeric" });
  const key = el("input", { id: "practice-key", type: "password", autocomplete: "off" });
  const problem = el("p", { cls: "problem", role: "alert", hidden: true });
  const form = el("form", { cls: "practice", "aria-label": "Play against the house bots" },
    el("h2", { text: "Play against the house bots" }),
    el("div", { cls: "fields" },
      field("practice-name", "Your name", name), field("practice-ruleset", "Ruleset", ruleset),
      field("practice-bots", "House bots", bots), field("practice-level", "Their level", level),
      field("practice-deadline", "Seconds per decision (0: none)", deadline),
      field("practice-key", "Organizer key (if this referee asks for one)", key)),
    el("p", { cls: "form-actions" }, el("button", { type: "submit", text: "Start a game" }), " ", rules), problem);
  playOnSubmit(form, problem, async () => {
    const seats = [{ name: name.value }, ...Array.from({ length: Number(bots.value) }, () => ({ bot: level.value }))];
    const body = { ruleset: ruleset.value, seats, deadline_s: Number(deadline.value) };
    const game = await api("/v1/games", { body, token: key.value || undefined });
    return [game.id, game.seats[0].token];
  });
  return form;
}

function listing(title, path, key, row, headers) {
  const body = el("tbody");
  const more = el("button", { type: "button", text: `Older ${title.toLowerCase()}` });
  const section = el(
    "section", { cls: "listing", "aria-label": title },
    el("h2", { text: title }),
    el("div", { cls: "scroll" }, el("table", {}, el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col", text: h })))), body)),
    more,
  );
  let next = null;
  let paged = false;
  async function load(before) {
    const page = await api(`${path}?limit=20${before ? `&before=${before}` : ""}`);
    if (before) body.append(...page[key].map(row));
    else keyedRows(body, page[key], row);
    if (!page[key].length && !before) body.replaceChildren(el("tr", {}, el("td", { colspan: headers.length, text: "None yet." })));
    next = page.next;
    more.hidden = !next;
    return page[key];
  }
  more.addEventListener("click", () => {
    paged = true;
    load(next).catch(fail);
  });
  return { section, load: () => load(null), refresh: () => (paged ? null : load(null).catch(() => null)) };
}

/** ``body``'s rows as ``items`` (each keyed by its id): a row whose item did not change is kept
 * as it is (a link being focused stays focused), one that changed is replaced in place. */
function keyedRows(body, items, row) {
  const kept = new Map([...body.children].map((tr) => [tr.dataset.key, tr]));
  const rows = items.map((item) => {
    const stamp = JSON.stringify(item);
    const old = kept.get(item.id);
    if (old && old.dataset.stamp === stamp) return old;
    const made = row(item);
    made.dataset.key = item.id;
    made.dataset.stamp = stamp;
    return made;
  });
  rows.forEach((tr, i) => {
    if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] ?? null);
  });
  while (body.children.length > rows.length) body.lastElementChild.remove();
}

function status(value) {
  return el("span", { cls: `status ${value}`, text: value });
}

function gameRow(game) {
  return el(
    "tr", {},
    el("td", {}, el("a", { href: `/games/${game.id}`, text: game.id })),
    el("td", { text: game.ruleset }),
    el("td", {}, status(game.status), tableOf(game)),
    el("td", { cls: "names", text: game.seats.map((s) => s ?? "(open)").join(", ") }),
    el("td", { text: when(game.created) }),
  );
}

/** A tournament's table names its tournament, linked (a table created before the referee kept
 * it says only that it is one). */
function tableOf(game) {
  if (game.tournament_id) {
    return [" · ", el("a", { href: `/tournaments/${game.tournament_id}`, text: "tournament" })];
  }
  return game.tournament ? " · tournament" : "";
}

function tournamentRow(t) {
  return el(
    "tr", {},
    el("td", {}, el("a", { href: `/tournaments/${t.id}`, text: t.id })),
    el("td", { text: t.ruleset }),
    el("td", { text: t.format }),
    el("td", {}, status(t.status)),
    el("td", { text: `${t.entrants} / ${t.seats}` }),
    el("td", { text: when(t.created) }),
  );
}

// -- a game ----------------------------------------------------------------------------------------

/** A finished game's replay in the pages' compact form (/games/{id}/replay.json): its first
 * view and per step a patch; every frame is made here, sharing what a step did not change. */
export function framesOf(compact) {
  const frames = [{ view: compact.start, decision: null }];
  for (const step of compact.steps) frames.push({ view: applyPatch(frames.at(-1).view, step.patch), decision: step.decision });
  return frames;
}

/** ``view`` with ``patch``'s operations applied (``[path, value]`` sets, ``[path]`` deletes),
 * copying only the objects on the paths it changes. */
export function applyPatch(view, patch) {
  if (!patch.length) return view;
  const copied = new Set();
  const copy = (value) => {
    const made = Array.isArray(value) ? [...value] : { ...value };
    copied.add(made);
    return made;
  };
  let root = copy(view);
  for (const op of patch) {
    const path = op[0];
    if (!path.length) {
      root = op[1];
      continue;
    }
    let node = root;
    for (const key of path.slice(0, -1)) {
      if (!copied.has(node[key])) node[key] = copy(node[key]);
      node = node[key];
    }
    const last = path.at(-1);
    if (op.length === 1) {
      if (Array.isArray(node)) node.splice(last, 1);
      else delete node[last];
    } else node[last] = op[1];
  }
  return root;
}

/** A game as it happens (or its replay), drawn into ``root``; ``playing``: this tab also
 * plays a seat of it; ``embed``: the board alone (an embedded view, the home page's TV). */
function gamePage(root, gameId, { playing = false, embed = false } = {}) {
  const watch = { view: null, renderer: null, feed: [], replay: null, frame: 0, stream: null, timer: null, playTimer: null };
  const head = el("div", { cls: "game-head" });
  const outcome = el("section", { cls: "outcome", hidden: true, "aria-label": "Result" });
  const seats = el("div", { cls: "your-seat" });
  const live = el("p", { cls: "live-status", role: "status", "aria-live": "polite" });
  const controls = el("div", { cls: "replay", hidden: true });
  const board = el("div", { cls: "board" });
  const moves = el("section", { cls: "moves-list", hidden: true }, el("h2", { text: "Moves" }));
  const feed = el("ul", { cls: "feed", "aria-label": "What happened, newest first" });
  const verify = el("section", { cls: "verify", hidden: true, "aria-label": "Verify this game" });
  if (embed) root.replaceChildren(el("p", { cls: "embed-head" }, el("a", { href: `/games/${gameId}`, target: "_top", text: "referee · open the game" })), live, controls, board);
  else root.replaceChildren(head, outcome, seats, live, controls, el("div", { cls: "board-and-moves" }, board, moves), verify, el("section", { cls: "events" }, el("h2", { text: "Events" }), feed));
  const token = embed ? null : seatToken(gameId);
  if (playing && token) {
    const panel = seatPanel(gameId, token, () => watch.view);
    watch.panel = panel;
    seats.replaceChildren(panel.node);
    panel.start();
  } else if (playing) {
    seats.replaceChildren(el("p", { cls: "problem", role: "alert" },
      "This tab holds no seat of this game: take an open seat on ", el("a", { href: `/games/${gameId}`, text: "the game's page" }),
      ", or open this page with your seat's token after # (", el("code", { text: `/games/${gameId}/play#token=…` }), ")."));
  }

  async function refresh() {
    try {
      watch.view = await liveView();
      watch.renderer ??= await rendererOf(watch.view.ruleset);
    } catch (error) {
      fail(error, root);
      return;
    }
    if (!embed) drawHead(head, watch.view, watch.replay);
    watch.panel?.named();
    if (!playing && !embed) drawJoin(seats, watch.view, token);
    if (!watch.replay) {
      // a finished game's board is its last frame: drawn at once, while its replay loads
      board.replaceChildren(drawGame(watch.view, watch.renderer));
      setText(live, liveStatus(watch.view));
    }
    if (watch.view.status === "finished" && !watch.replay && !watch.view.sealed) {
      await loadReplay();
      setText(live, "");
    }
  }

  /** The public view as it is now: whole the first time, then only what changed since the
   * version this page holds (/games/{id}/view.json?since=V; whole again if the referee no
   * longer keeps that version). */
  async function liveView() {
    const answer = await api(`/games/${gameId}/view.json${watch.version ? `?since=${watch.version}` : ""}`);
    watch.version = answer.version;
    return answer.patch ? applyPatch(watch.view, answer.patch) : answer.view;
  }

  async function loadReplay() {
    const compact = await api(`/games/${gameId}/replay.json`);
    watch.replay = { ...compact, frames: framesOf(compact) };
    const wanted = /^#ply=(\d+)$/.exec(location.hash);
    watch.frame = embed || !wanted ? watch.replay.frames.length - 1 : Number(wanted[1]);
    if (!embed) {
      drawHead(head, watch.view, watch.replay);
      drawOutcome(outcome, watch.replay);
      drawVerify(verify, watch.replay);
      buildMoveList();
    }
    buildControls();
    // the last frame is the board already drawn from the view
    go(watch.frame, false, watch.frame !== watch.replay.frames.length - 1);
  }

  /** The replay's controls, built once: afterwards only their values change (``go``). */
  function buildControls() {
    const last = watch.replay.frames.length - 1;
    const button = (text, label, onclick) => el("button", { type: "button", text, "aria-label": label, title: label, onclick });
    watch.slider = el("input", {
      type: "range", min: 0, max: last, value: watch.frame, "aria-label": "Step of the replay",
      oninput: (event) => go(Number(event.target.value)),
    });
    watch.playButton = button("Play", "Play", () => toggleAutoplay());
    watch.speed = el("select", { "aria-label": "Speed" }, SPEEDS.map(([text, ms], i) => el("option", { value: ms, text, selected: i === 1 })));
    watch.speed.addEventListener("change", () => watch.playTimer && (stopAutoplay(), toggleAutoplay()));
    watch.stepText = el("p", { cls: "step", "aria-live": "polite" });
    controls.hidden = false;
    controls.replaceChildren(
      el("div", { cls: "buttons" },
        button("|◀", "First step", () => go(0)),
        button("◀", "Step back", () => go(watch.frame - 1)),
        watch.playButton,
        button("▶", "Step forward", () => go(watch.frame + 1)),
        button("▶|", "Last step", () => go(last)),
        el("label", { cls: "speed" }, "speed ", watch.speed)),
      watch.slider,
      watch.stepText,
    );
    root.addEventListener("keydown", onKey);
    if (!embed) document.addEventListener("keydown", (event) => event.target === document.body && onKey(event));
    if (!embed) window.addEventListener("hashchange", () => {
      const wanted = /^#ply=(\d+)$/.exec(location.hash);
      if (wanted) go(Number(wanted[1]), false);
    });
  }

  function onKey(event) {
    if (!watch.replay || ["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName)) return;
    if (event.key === " " && event.target.tagName === "BUTTON") return; // the button's own press
    const keys = { ArrowLeft: () => go(watch.frame - 1), ArrowRight: () => go(watch.frame + 1), Home: () => go(0), End: () => go(Infinity), " ": () => toggleAutoplay() };
    if (!keys[event.key] || event.defaultPrevented) return;
    event.preventDefault();
    keys[event.key]();
  }

  function toggleAutoplay() {
    if (watch.playTimer) return stopAutoplay();
    if (watch.frame >= watch.replay.frames.length - 1) go(0);
    watch.playButton.textContent = "Pause";
    watch.playButton.setAttribute("aria-label", "Pause");
    watch.playButton.title = "Pause";
    watch.playTimer = setInterval(() => {
      if (watch.frame >= watch.replay.frames.length - 1) stopAutoplay();
      else go(watch.frame + 1);
    }, Number(watch.speed.value));
  }

  function stopAutoplay() {
    clearInterval(watch.playTimer);
    watch.playTimer = null;
    watch.playButton.textContent = "Play";
    watch.playButton.setAttribute("aria-label", "Play");
    watch.playButton.title = "Play";
  }

  /** Step ``index`` of the replay: the board drawn, the controls' values set, the address's
   * ``#ply=N`` kept (``mark``), the move list's current move shown. */
  function go(index, mark = true, draw = true) {
    const frames = watch.replay.frames;
    watch.frame = Math.max(0, Math.min(frames.length - 1, Number.isFinite(index) ? index : frames.length - 1));
    const frame = frames[watch.frame];
    if (Number(watch.slider.value) !== watch.frame) watch.slider.value = watch.frame;
    watch.slider.setAttribute("aria-valuetext", `step ${watch.frame} of ${frames.length - 1}`);
    const took = timeTaken(watch.frame);
    setText(watch.stepText, `step ${watch.frame} of ${frames.length - 1}: ${describeDecision(frame.decision, frame.view, watch.renderer)}${took}`);
    if (draw) board.replaceChildren(drawGame(frame.view, watch.renderer));
    if (mark && !embed) history.replaceState(null, "", `#ply=${watch.frame}`);
    if (watch.moveItems) {
      watch.current?.removeAttribute("aria-current");
      watch.current = watch.moveItems[watch.frame - 1] ?? null;
      watch.current?.setAttribute("aria-current", "step");
      if (watch.current) showInList(watch.current);
    }
  }

  /** The list scrolled (not the page) so that the current move shows. */
  function showInList(item) {
    const list = item.closest(".moves-of-game");
    const top = item.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - item.offsetHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }

  /** The time the step's decision took: since the decision before it (the first: none). */
  function timeTaken(index) {
    const frames = watch.replay.frames;
    const at = frames[index]?.decision?.at;
    const before = frames[index - 1]?.decision?.at;
    return at && before ? ` (${Math.max(0, at - before).toFixed(1)} s)` : "";
  }

  /** Every move of the replay, in the players' terms, each a link to its step. */
  function buildMoveList() {
    const frames = watch.replay.frames;
    const list = el("ol", { cls: "moves-of-game" });
    const items = [];
    frames.slice(1).forEach((frame, i) => {
      const link = el("a", {
        href: `#ply=${i + 1}`, text: `${describeDecision(frame.decision, frames[i].view, watch.renderer)}${timeTaken(i + 1)}`,
        onclick: (event) => {
          event.preventDefault();
          go(i + 1);
        },
      });
      items.push(link);
      list.append(el("li", {}, link));
    });
    watch.moveItems = items;
    moves.append(list);
    moves.hidden = false;
  }

  function heard(event) {
    const data = JSON.parse(event.data);
    watch.feed.unshift(describeEvent(data, watch.view, watch.renderer));
    watch.feed.length = Math.min(watch.feed.length, 40);
    feed.replaceChildren(...watch.feed.map((line) => el("li", { text: line })));
    clearTimeout(watch.timer);
    watch.timer = setTimeout(refresh, 50);
    if (data.type === "game_over") watch.stream.close();
  }

  refresh().then(() => {
    if (!watch.view) return;
    if (watch.view.sealed) {
      setInterval(refresh, 5000); // a sealed game shows only who sits where, until it is unsealed
      return;
    }
    if (watch.view.status === "finished") return;
    watch.stream = new EventSource(`/v1/games/${gameId}/events`);
    for (const type of EVENTS) watch.stream.addEventListener(type, heard);
  });
  setInterval(() => tickDeadlines(root), 250);
  return { over: () => watch.view?.status === "finished" && !!watch.replay };
}

/** What a live game waits for, in words (the one part of a live board read out as it changes). */
function liveStatus(view) {
  if (view.status === "waiting") return `Waiting for ${view.seats.filter((s) => s.name === null).length} seat(s) to be taken`;
  if (view.status === "finished") return "The game is over";
  const names = view.to_decide.map((s) => seatName(view.seats[s]));
  if (!names.length) return "Playing";
  return names.length > 3 ? `${names.length} seats to decide` : `${names.join(", ")} to decide`;
}

function drawHead(head, view, replay) {
  const parts = [
    el("h1", {}, `${view.ruleset} · `, status(view.status)),
    el("p", { cls: "meta" },
      `${view.seats.length} seats · ${view.deadline_s ? `${view.deadline_s} s per decision` : "no deadline"} · `,
      el("a", { href: `/rulesets/${encodeURIComponent(view.ruleset)}/rules`, text: "rules" }), " · ",
      el("a", { href: `/games/${view.id}/report`, text: "turn report" }),
      " · ", el("a", { href: `/v1/games/${view.id}/record`, text: "record (JSON)" }),
      replay?.tournament_id ? [" · ", el("a", { href: `/tournaments/${replay.tournament_id}`, text: "its tournament" })] : null),
  ];
  if (view.status !== "finished") parts.push(el("p", { cls: "commitment" }, "commitment ", el("code", { text: view.commitment })));
  if (view.sealed) {
    parts.push(el("p", { cls: "sealed", text: "Sealed: other tables of its tournament round are dealt the same dice and still play. The board is shown when they are all over." }));
  }
  if (replay) {
    parts.push(
      el("p", { cls: replay.verified ? "verified" : "problem", "data-verified": String(replay.verified) },
        replay.verified
          ? "✓ verified: the record replays from the seed to exactly what the referee published"
          : `✗ not verified: ${replay.problems.join("; ")}`),
    );
  }
  keepFocus(head, () => head.replaceChildren(...parts));
}

/** A finished game's result: who won, and every seat's place and total (equal totals share
 * a place: the rules have no tie-break). */
function drawOutcome(node, replay) {
  const order = replay.seats.map((name, seat) => ({ name, seat, place: replay.ranking[seat], total: replay.totals[seat] }))
    .sort((a, b) => a.place - b.place || a.seat - b.seat);
  const winners = order.filter((s) => s.place === 1);
  const shared = (place) => order.filter((s) => s.place === place).length > 1;
  const banner = winners.length === 1
    ? `Winner: ${winners[0].name}, with ${winners[0].total}`
    : `Shared win: ${winners.map((w) => w.name).join(" and ")}, each with ${winners[0]?.total}`;
  node.hidden = false;
  node.replaceChildren(
    el("p", { cls: "winner", text: banner }),
    el("div", { cls: "scroll" }, el("table", { cls: "ranking" },
      el("caption", { text: "Final ranking: highest total first; equal totals share the place (no tie-break)" }),
      el("thead", {}, el("tr", {}, ["Place", "Seat", "Total"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, order.map((s) => el("tr", { cls: s.place === 1 ? "first" : "", "data-seat": s.seat },
        el("td", { cls: "place", text: `${s.place}${shared(s.place) ? " (tie)" : ""}` }),
        el("th", { scope: "row" }, swatch(s.seat), s.name),
        el("td", { cls: "final-total", text: s.total })))))),
  );
}

/** A seat's or entrant's colour, as a small bar beside its name (styled here: the pages'
 * policy allows no style attribute in markup, only set by the script). */
function swatch(index) {
  const bar = el("span", { cls: "swatch", "aria-hidden": "true" });
  bar.style.background = colourOf(index);
  return bar;
}

/** How to check the game oneself: the commitment against the seed, and ``referee verify``. */
function drawVerify(node, replay) {
  const url = new URL(`/v1/games/${replay.id}/record`, location.href).href;
  const verdict = el("span", { cls: "verdict", "data-check": "page" });
  const command = `curl -s ${url} > record.json && referee verify record.json${replay.chain ? ` --chain ${replay.chain}` : ""}`;
  node.hidden = false;
  node.replaceChildren(
    el("h2", { text: "Verify it yourself" }),
    el("p", { cls: "commitment" }, "commitment (published at the start) ", el("code", { text: replay.commitment })),
    el("p", { cls: "seed" }, "seed (revealed at the end) ", el("code", { text: replay.seed ?? "—" }), " ", verdict),
    el("p", {}, "Replay the record on your machine; the commitment it prints must be the one above:"),
    el("pre", { cls: "command" }, el("code", { text: command })),
  );
  if (replay.seed) checkCommitment(replay.seed, replay.commitment).then((text) => (verdict.textContent = text));
}

/** On a game's page: a link to play the seat this tab holds, or a form to take an open seat. */
function drawJoin(node, view, token) {
  if (view.status === "finished") return node.replaceChildren();
  if (token) {
    if (node.querySelector(".join a")) return;
    return node.replaceChildren(el("p", { cls: "join" }, "This tab holds a seat of this game: ", el("a", { href: `/games/${view.id}/play`, text: "play it" }), "."));
  }
  const open = view.seats.filter((s) => s.name === null);
  if (view.status !== "waiting" || !open.length) return node.replaceChildren();
  if (node.querySelector("form")) return; // keep what is being typed
  const name = el("input", { id: "join-name", name: "name", required: true, maxlength: 64, autocomplete: "nickname" });
  const code = el("input", { id: "join-code", name: "invite_code", maxlength: 128 });
  const problem = el("p", { cls: "problem", role: "alert", hidden: true });
  const form = el("form", { cls: "join", "aria-label": "Take a seat" },
    el("h2", { text: `Take a seat (${open.length} open)` }),
    el("p", {}, el("label", { for: "join-name", text: "Your name" }), name),
    el("p", {}, el("label", { for: "join-code", text: "Invite code (if the game has one)" }), code),
    el("button", { type: "submit", text: "Take a seat and play" }), problem);
  playOnSubmit(form, problem, async () => {
    const body = { name: name.value, ...(code.value ? { invite_code: code.value } : {}) };
    const claimed = await api(`/v1/games/${view.id}/seats`, { body });
    return [view.id, claimed.token];
  });
  node.replaceChildren(form);
}

/** SHA-256 of the seed against the commitment, in the page (where the browser offers it). */
async function checkCommitment(seed, commitment) {
  if (!globalThis.crypto?.subtle) return "(this page cannot hash here: open it over https or localhost)";
  const bytes = new Uint8Array(seed.match(/../g).map((h) => parseInt(h, 16)));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  return hex === commitment ? "✓ its SHA-256 is the commitment (checked in this page)" : "✗ its SHA-256 is NOT the commitment";
}

/** The board, drawn by the game's ruleset's module (``rendererOf``), once the game runs. */
function drawGame(view, renderer) {
  if (view.sealed || view.status === "waiting") {
    return el("div", { cls: "seats-only" },
      el("h2", { text: view.status === "waiting" ? "Waiting for its seats" : "Seats" }),
      el("ul", {}, view.seats.map((s) => el("li", { text: seatName(s) }))));
  }
  return renderer.drawBoard(view, { seatName, colourOf });
}

function describeDecision(decision, view, renderer) {
  if (!decision) return "the start";
  const who = seatName(view.seats[decision.seat]);
  const moves = decision.moves.map((move) => renderer.describeMove(move, (s) => seatName(view.seats[s]))).join("; ");
  return `${who}${decision.timeout ? " (timed out)" : ""}: ${moves}`;
}

function describeEvent(event, view, renderer) {
  const name = (seat) => (view && view.seats[seat] ? seatName(view.seats[seat]) : `seat ${seat + 1}`);
  switch (event.type) {
    case "played": return `${name(event.seat)} ${renderer.describeMove(event.move, name)}${event.auto ? " (retired: placed for it)" : ""}`;
    case "decision": return `${name(event.seat)} decided`;
    case "timeout": return `${name(event.seat)} timed out`;
    case "rolls": return `postal round ${event.batch + 1}: ${event.rolls.map((r) => r.join(" ")).join(" | ")}`;
    case "rolls_decided": return `postal round ${event.batch + 1} decided by all`;
    case "seat_done": return `${name(event.seat)} is ${event.retired ? "retired" : "done"}`;
    case "round_over": return `round ${event.round + 1} over: ${event.totals.join(" / ")}`;
    case "game_over": return `game over: totals ${event.totals.join(" / ")}`;
    case "seat_claimed": return `a seat was claimed`;
    default: return event.type.replaceAll("_", " ");
  }
}

// -- a tournament ----------------------------------------------------------------------------------

/** A tournament, followed through its event stream (its view, then patches of what changed:
 * referee/web/tournament_stream.py) until it is over, or read every 2 s if the stream fails:
 * its parts are built once and then only what changed is redrawn (a round opened stays open;
 * focus stays). ``planned``: its round count, which the page's shell states (``data-rounds``). */
async function tournamentPage(tournamentId, planned) {
  const title = el("h1");
  const meta = el("p", { cls: "meta", role: "status", "aria-live": "polite" });
  const seed = el("section", { cls: "verify" });
  const table = standingsTable();
  const chart = el("section", { cls: "chart" }, el("h2", { text: "Ratings over rounds" }));
  const roundList = el("div");
  app.replaceChildren(title, meta, table.section, chart, el("section", { cls: "rounds" }, el("h2", { text: "Rounds" }), roundList), seed);
  let drawnRatings = -1;
  function draw(t) {
    if (title.dataset.status !== t.status) {
      title.dataset.status = t.status;
      title.replaceChildren(`${t.ruleset} tournament · `, status(t.status));
    }
    const total = planned || t.rounds.length;
    const round = t.status === "finished" ? `${total} rounds played` : t.rounds.length ? `round ${t.round + 1} of ${total}` : `${total} rounds`;
    setText(meta, `${t.spec.format} · ${t.entrants.length} of ${t.spec.entrants} entrants · ${round}`);
    table.update(t);
    if (t.ratings.length !== drawnRatings) {
      drawnRatings = t.ratings.length;
      chart.replaceChildren(chart.firstChild, ...ratingChart(t));
    }
    rounds(roundList, t);
    drawSeed(seed, t);
    return t.status;
  }
  const poll = async () => {
    app.dataset.follow = "polling";
    try {
      if (draw(await api(`/v1/tournaments/${tournamentId}`)) !== "finished") setTimeout(poll, 2000);
    } catch (error) {
      fail(error);
    }
  };
  if (!window.EventSource) return poll();
  let held = null;
  const stream = new EventSource(`/tournaments/${tournamentId}/events`);
  const show = (t) => {
    held = t;
    if (draw(t) === "finished") stream.close();
  };
  stream.addEventListener("tournament", (e) => {
    app.dataset.follow = "events";
    show(JSON.parse(e.data).view);
  });
  stream.addEventListener("patch", (e) => show(applyPatch(held, JSON.parse(e.data).patch)));
  // a stream that never opened (a proxy that buffers it, a refusal) gives way to polling;
  // one that dropped is opened again by the browser, and starts with the view whole
  stream.addEventListener("error", () => {
    if (held === null || stream.readyState === EventSource.CLOSED) {
      stream.close();
      if (held?.status !== "finished") poll();
    }
  });
}

/** The standings table: a row per entrant, moved and changed in place as the standings
 * change; the rating's change over the last round beside it. */
function standingsTable() {
  const body = el("tbody");
  const headers = ["#", "Entrant", "Games", "Wins", "Points", "Rating", "±", "μ", "σ"];
  const section = el("section", { cls: "standings" }, el("h2", { text: "Standings" }),
    el("div", { cls: "scroll" }, el("table", {}, el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col", text: h })))), body)));
  const rows = new Map();
  function update(t) {
    const last = t.ratings.at(-1);
    const before = t.ratings.at(-2);
    t.standings.forEach((s, i) => {
      let row = rows.get(s.entrant);
      if (!row) {
        row = el("tr", { "data-entrant": s.entrant },
          el("td"), el("th", { scope: "row" }, swatch(s.entrant), el("span", { cls: "entrant-name" })),
          el("td"), el("td"), el("td"), el("td", { cls: "rating" }), el("td", { cls: "change" }), el("td"), el("td"));
        rows.set(s.entrant, row);
      }
      const delta = last && before ? last[s.entrant] - before[s.entrant] : last ? last[s.entrant] : 0;
      const cells = row.children;
      setText(cells[0], i + 1);
      setText(row.querySelector(".entrant-name"), s.name);
      [s.games, s.wins, s.points, s.rating.toFixed(3)].forEach((v, j) => setText(cells[2 + j], v));
      setText(cells[6], last ? `${delta >= 0 ? "+" : "−"}${Math.abs(delta).toFixed(2)}` : "");
      cells[6].className = `change ${delta > 0 ? "up" : delta < 0 ? "down" : ""}`;
      setText(cells[7], s.mu.toFixed(3));
      setText(cells[8], s.sigma.toFixed(3));
      if (body.children[i] !== row) body.insertBefore(row, body.children[i] ?? null);
    });
  }
  return { section, update };
}

function ratingChart(t) {
  if (!t.ratings.length) return [el("p", { text: "No round is over yet." })];
  const rounds = [t.entrants.map(() => 0), ...t.ratings]; // every rating starts at 0 (μ − 3σ of a fresh one, rounded up)
  const all = rounds.flat();
  const low = Math.min(...all);
  const high = Math.max(...all, low + 1);
  const width = 640;
  const height = 240;
  const x = (i) => 40 + (i * (width - 100)) / Math.max(rounds.length - 1, 1);
  const y = (v) => 20 + ((high - v) * (height - 40)) / (high - low);
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-labelledby": "chart-title chart-desc" },
    el("title", { id: "chart-title", text: "Each entrant's rating after each round" }),
    el("desc", { id: "chart-desc", text: t.entrants.map((name, e) => `${name}: ${rounds.map((r) => r[e].toFixed(1)).join(", ")}`).join("; ") }),
    el("line", { x1: 40, x2: width - 60, y1: y(0), y2: y(0), cls: "axis" }),
    [...new Set([high, 0, low])].map((v) => el("text", { x: 34, y: y(v) + 4, "text-anchor": "end", cls: "tick", text: v.toFixed(1) })),
    t.entrants.map((name, e) => el("polyline", {
      points: rounds.map((r, i) => `${x(i)},${y(r[e])}`).join(" "), fill: "none", stroke: colourOf(e), "stroke-width": 2.5,
      "stroke-dasharray": e >= 16 ? ["", "6 3", "2 3", "8 3 2 3"][Math.floor(e / 16) % 4] : undefined,
    })),
    // each line is labelled at its end, so that colours need not be told apart
    t.entrants.map((name, e) => el("text", { x: x(rounds.length - 1) + 4, y: y(rounds.at(-1)[e]) + 4, cls: "tick end-label", fill: colourOf(e), text: name.slice(0, 8) })),
    rounds.map((_, i) => el("text", { x: x(i), y: height - 4, "text-anchor": "middle", cls: "tick", text: i === 0 ? "start" : `r${i}` })));
  const legend = el("ul", { cls: "legend" }, t.entrants.map((name, e) => el("li", {}, swatch(e), name)));
  return [svg, legend];
}

/** The rounds, one disclosure each: a new round is added (opened, the one before closed
 * unless the reader opened it), a table's line changes only when its result does. */
function rounds(node, t) {
  t.rounds.forEach((tables, r) => {
    let round = node.children[r];
    if (!round) {
      const previous = node.children[r - 1];
      // (closed unless the reader opened or closed it, or is in it: focus is never lost)
      if (previous && !previous.dataset.touched && !previous.contains(document.activeElement)) {
        previous.open = previous.drawnOpen = false;
      }
      round = el("details", { open: true }, el("summary", { text: `Round ${r + 1}` }), el("ul"));
      round.drawnOpen = true;
      // (a toggle event follows every change, the page's own too: only the reader's count)
      round.addEventListener("toggle", () => {
        if (round.open !== round.drawnOpen) round.dataset.touched = "1";
      });
      node.append(round);
    }
    const list = round.querySelector("ul");
    tables.forEach((table, i) => {
      let item = list.children[i];
      if (!item) {
        item = el("li", {}, el("a", { href: `/games/${table.game_id}`, text: table.game_id }), " ", el("span"));
        list.append(item);
      }
      setText(item.querySelector("span"), `${table.entrants.map((e) => t.entrants[e]).join(" vs ")}${table.result ? ` — ${table.result.totals.join(" : ")}` : " — playing"}`);
    });
  });
}

/** The tournament's seed: its commitment from the start, the seed itself once it is over,
 * checked in the page. */
function drawSeed(node, t) {
  const stamp = `${t.commitment}/${t.seed}`;
  if (node.dataset.stamp === stamp) return;
  node.dataset.stamp = stamp;
  const verdict = el("span", { cls: "verdict", "data-check": "tournament" });
  node.replaceChildren(
    el("h2", { text: "Seed" }),
    el("p", { cls: "commitment" }, "commitment (published at the start) ", el("code", { text: t.commitment })),
    t.seed
      ? el("p", { cls: "seed" }, "seed (revealed now it is over) ", el("code", { text: t.seed }), " ", verdict)
      : el("p", { cls: "small", text: "The seed that deals every table's dice is revealed when the tournament is over." }),
  );
  if (t.seed) checkCommitment(t.seed, t.commitment).then((text) => (verdict.textContent = text));
}

// -- start ---------------------------------------------------------------------------------------

const page = app.dataset.page;
const ident = app.dataset.id;
try {
  if (page === "index") await indexPage();
  else if (page === "game") gamePage(app, ident);
  else if (page === "embed") gamePage(app, ident, { embed: true });
  else if (page === "play") gamePage(app, ident, { playing: true });
  else if (page === "tournament") await tournamentPage(ident, Number(app.dataset.rounds || 0));
} catch (error) {
  fail(error);
}
