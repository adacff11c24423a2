// The spectator pages' one script (referee/web/pages.py serves the shells): it reads only the
// public endpoints, so a spectator sees exactly what the public view shows. No build step, no
// library, nothing from another origin (the pages' Content-Security-Policy forbids it).

import { api, el, rendererOf, tickDeadlines } from "./common.js";
import { playOnSubmit, seatPanel, seatToken } from "./play.js";

const app = document.getElementById("app");
const EVENTS = [
  "game_created", "seat_claimed", "game_started", "decision", "timeout", "rolls", "rolls_decided",
  "seat_done", "played", "round_over", "game_over",
];

function when(epoch) {
  return new Date(epoch * 1000).toLocaleString();
}

function seatName(seat) {
  return seat.name ?? `seat ${seat.seat} (open)`;
}

function fail(error) {
  app.replaceChildren(el("p", { cls: "problem", role: "alert", text: `Cannot show this: ${error.message}` }));
}

// -- the listing ---------------------------------------------------------------------------------

async function indexPage() {
  const games = listing("Games", "/v1/games", "games", gameRow, ["Game", "Ruleset", "Status", "Seats", "Created"]);
  const tournaments = listing(
    "Tournaments", "/v1/tournaments", "tournaments", tournamentRow, ["Tournament", "Ruleset", "Format", "Status", "Entrants", "Created"],
  );
  app.replaceChildren(el("h1", { text: "Live and recent" }), practiceForm(), games.section, tournaments.section);
  await Promise.all([games.load(), tournaments.load()]);
  // the newest page follows what happens, until the watcher pages back
  setInterval(() => games.refresh(), 5000);
  setInterval(() => tournaments.refresh(), 5000);
}

/** A game against the referee's house bots, played in this tab. */
function practiceForm() {
  const field = (id, label, input) => el("p", {}, el("label", { for: id, text: label }), " ", input);
  const select = (id, options, chosen) => el("select", { id, name: id }, options.map((o) => el("option", { value: o, text: o, selected: o === chosen })));
  const name = el("input", { id: "practice-name", required: true, maxlength: 64, value: "me", autocomplete: "nickname" });
  const ruleset = select("practice-ruleset", [], null);
  // every ruleset the referee plays, the first (its default) chosen
  api("/v1/rulesets").then((all) => ruleset.replaceChildren(...all.map((r, i) => el("option", { value: r.id, text: r.id, selected: i === 0 })))).catch(fail);
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
    el("button", { type: "submit", text: "Start a game" }), problem);
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
    el("table", {}, el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col", text: h })))), body),
    more,
  );
  let next = null;
  let paged = false;
  async function load(before) {
    const page = await api(`${path}?limit=20${before ? `&before=${before}` : ""}`);
    const rows = page[key].map(row);
    if (before) body.append(...rows);
    else body.replaceChildren(...rows);
    if (!page[key].length && !before) body.append(el("tr", {}, el("td", { colspan: headers.length, text: "None yet." })));
    next = page.next;
    more.hidden = !next;
  }
  more.addEventListener("click", () => {
    paged = true;
    load(next).catch(fail);
  });
  return { section, load: () => load(null), refresh: () => (paged ? null : load(null).catch(() => {})) };
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
    el("td", { text: game.seats.map((s) => s ?? "(open)").join(", ") }),
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

/** A game as it happens (or its replay); ``playing``: this tab also plays a seat of it. */
function gamePage(gameId, playing = false) {
  const watch = { view: null, renderer: null, feed: [], replay: null, frame: 0, timer: null, stream: null };
  const board = el("div", { cls: "board" });
  const head = el("div", { cls: "game-head" });
  const seats = el("div", { cls: "your-seat" });
  const controls = el("div", { cls: "replay", hidden: true });
  const feed = el("ul", { cls: "feed", "aria-label": "What happened, newest first" });
  app.replaceChildren(head, seats, controls, board, el("section", { cls: "events" }, el("h2", { text: "Events" }), feed));
  const token = seatToken(gameId);
  if (playing && token) {
    const panel = seatPanel(gameId, token, () => watch.view);
    seats.replaceChildren(panel.node);
    panel.start();
  } else if (playing) {
    seats.replaceChildren(el("p", { cls: "problem", role: "alert" },
      "This tab holds no seat of this game: take an open seat on ", el("a", { href: `/games/${gameId}`, text: "the game's page" }),
      ", or open this page with your seat's token after # (", el("code", { text: `/games/${gameId}/play#token=…` }), ")."));
  }

  async function refresh() {
    try {
      watch.view = await api(`/v1/games/${gameId}`);
      watch.renderer ??= await rendererOf(watch.view.ruleset);
    } catch (error) {
      fail(error);
      return;
    }
    drawHead(head, watch.view, watch.replay);
    if (!playing) drawJoin(seats, watch.view, token);
    if (watch.view.status === "finished" && !watch.replay && !watch.view.sealed) {
      await loadReplay();
    }
    if (!watch.replay) board.replaceChildren(drawGame(watch.view, watch.renderer));
  }

  async function loadReplay() {
    watch.replay = await api(`/v1/games/${gameId}/replay`);
    watch.frame = watch.replay.frames.length - 1;
    drawHead(head, watch.view, watch.replay);
    drawReplay();
  }

  function drawReplay() {
    const frames = watch.replay.frames;
    const frame = frames[watch.frame];
    const go = (index) => {
      watch.frame = Math.max(0, Math.min(frames.length - 1, index));
      drawReplay();
    };
    const slider = el("input", {
      type: "range", min: 0, max: frames.length - 1, value: watch.frame, "aria-label": "Step of the replay",
      oninput: (event) => go(Number(event.target.value)),
    });
    controls.hidden = false;
    controls.replaceChildren(
      el("button", { type: "button", text: "|◀", "aria-label": "First step", onclick: () => go(0) }),
      el("button", { type: "button", text: "◀", "aria-label": "Step back", onclick: () => go(watch.frame - 1) }),
      slider,
      el("button", { type: "button", text: "▶", "aria-label": "Step forward", onclick: () => go(watch.frame + 1) }),
      el("button", { type: "button", text: "▶|", "aria-label": "Last step", onclick: () => go(frames.length - 1) }),
      el("span", { cls: "step", text: `step ${watch.frame} of ${frames.length - 1}: ${describeDecision(frame.decision, frame.view, watch.renderer)}` }),
    );
    board.replaceChildren(drawGame(frame.view, watch.renderer));
  }

  document.addEventListener("keydown", (event) => {
    if (!watch.replay || event.target.tagName === "INPUT") return;
    if (event.key === "ArrowLeft") watch.frame > 0 && (watch.frame -= 1, drawReplay());
    if (event.key === "ArrowRight") watch.frame < watch.replay.frames.length - 1 && (watch.frame += 1, drawReplay());
  });

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
    // from its first event: a finished game's story is told too, and the stream ends with it
    watch.stream = new EventSource(`/v1/games/${gameId}/events`);
    for (const type of EVENTS) watch.stream.addEventListener(type, heard);
  });
  setInterval(() => tickDeadlines(app), 250);
}

function drawHead(head, view, replay) {
  const finished = view.status === "finished";
  const parts = [
    el("h1", {}, `${view.ruleset} · `, status(view.status)),
    el("p", { cls: "meta" },
      `${view.seats.length} seats · ${view.deadline_s ? `${view.deadline_s} s per decision` : "no deadline"} · `,
      el("a", { href: `/games/${view.id}/report`, text: "turn report" }),
      " · ", el("a", { href: `/v1/games/${view.id}/record`, text: "record (JSON)" })),
    el("p", { cls: "commitment" }, "commitment ", el("code", { text: view.commitment })),
  ];
  if (view.sealed) {
    parts.push(el("p", { cls: "sealed", text: "Sealed: other tables of its tournament round are dealt the same dice and still play. The board is shown when they are all over." }));
  }
  if (finished && view.seed) {
    const verdict = el("span", { cls: "verdict", "data-check": "page" });
    parts.push(el("p", { cls: "seed" }, "seed ", el("code", { text: view.seed }), " ", verdict));
    checkCommitment(view.seed, view.commitment).then((text) => (verdict.textContent = text));
  }
  if (replay) {
    parts.push(
      el("p", { cls: replay.verified ? "verified" : "problem", "data-verified": String(replay.verified) },
        replay.verified
          ? "✓ verified: the record replays from the seed to exactly what the referee published"
          : `✗ not verified: ${replay.problems.join("; ")}`),
    );
  }
  head.replaceChildren(...parts);
}

/** On a game's page: a link to play the seat this tab holds, or a form to take an open seat. */
function drawJoin(node, view, token) {
  if (view.status === "finished") return node.replaceChildren();
  if (token) {
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
    el("label", { for: "join-name", text: "Your name " }), name, " ",
    el("label", { for: "join-code", text: "Invite code (if the game has one) " }), code, " ",
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
  return renderer.drawBoard(view, { seatName });
}

function describeDecision(decision, view, renderer) {
  if (!decision) return "the start";
  const who = seatName(view.seats[decision.seat]);
  const moves = decision.moves.map((move) => renderer.describeMove(move, (s) => seatName(view.seats[s]))).join("; ");
  return `${who}${decision.timeout ? " (timed out)" : ""}: ${moves}`;
}

function describeEvent(event, view, renderer) {
  const name = (seat) => (view && view.seats[seat] ? seatName(view.seats[seat]) : `seat ${seat}`);
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
    default: return event.type.replace("_", " ");
  }
}

// -- a tournament ----------------------------------------------------------------------------------

async function tournamentPage(tournamentId) {
  async function draw() {
    const t = await api(`/v1/tournaments/${tournamentId}`);
    app.replaceChildren(
      el("h1", {}, `${t.ruleset} tournament · `, status(t.status)),
      el("p", { cls: "meta", text: `${t.spec.format} · ${t.entrants.length} of ${t.spec.entrants} entrants · round ${t.round + 1} of ${t.rounds.length}` }),
      standings(t),
      ratingChart(t),
      rounds(t),
    );
    return t.status;
  }
  const again = async () => {
    try {
      if ((await draw()) !== "finished") setTimeout(again, 2000);
    } catch (error) {
      fail(error);
    }
  };
  await again();
}

function standings(t) {
  return el("section", { cls: "standings" },
    el("h2", { text: "Standings" }),
    el("table", {},
      el("thead", {}, el("tr", {}, ["#", "Entrant", "Games", "Wins", "Points", "Rating", "μ", "σ"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, t.standings.map((s, i) => el("tr", { "data-entrant": s.entrant },
        el("td", { text: i + 1 }), el("th", { scope: "row", text: s.name }), el("td", { text: s.games }),
        el("td", { text: s.wins }), el("td", { text: s.points }), el("td", { cls: "rating", text: s.rating.toFixed(3) }),
        el("td", { text: s.mu.toFixed(3) }), el("td", { text: s.sigma.toFixed(3) }))))));
}

const COLOURS = ["#1b6ac9", "#c4391d", "#2a8a3e", "#8a4fbf", "#b8860b", "#0f8b8d", "#d6336c", "#555"];

function ratingChart(t) {
  const section = el("section", { cls: "chart" }, el("h2", { text: "Ratings over rounds" }));
  if (!t.ratings.length) return section.appendChild(el("p", { text: "No round is over yet." })) && section;
  const rounds = [t.entrants.map(() => 0), ...t.ratings]; // every rating starts at 0 (μ − 3σ of a fresh one, rounded up)
  const all = rounds.flat();
  const low = Math.min(...all);
  const high = Math.max(...all, low + 1);
  const width = 640;
  const height = 240;
  const x = (i) => 40 + (i * (width - 60)) / Math.max(rounds.length - 1, 1);
  const y = (v) => 20 + ((high - v) * (height - 40)) / (high - low);
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-labelledby": "chart-title chart-desc" },
    el("title", { id: "chart-title", text: "Each entrant's rating after each round" }),
    el("desc", { id: "chart-desc", text: t.entrants.map((name, e) => `${name}: ${rounds.map((r) => r[e].toFixed(1)).join(", ")}`).join("; ") }),
    el("line", { x1: 40, x2: width - 20, y1: y(0), y2: y(0), cls: "axis" }),
    [...new Set([high, 0, low])].map((v) => el("text", { x: 34, y: y(v) + 4, "text-anchor": "end", cls: "tick", text: v.toFixed(1) })),
    t.entrants.map((name, e) => el("polyline", {
      points: rounds.map((r, i) => `${x(i)},${y(r[e])}`).join(" "), fill: "none", stroke: COLOURS[e % COLOURS.length], "stroke-width": 2.5,
    })),
    rounds.map((_, i) => el("text", { x: x(i), y: height - 4, "text-anchor": "middle", cls: "tick", text: i === 0 ? "start" : `r${i}` })));
  const legend = el("ul", { cls: "legend" }, t.entrants.map((name, e) => el("li", {}, el("span", { cls: `swatch c${e % COLOURS.length}`, "aria-hidden": "true" }), name)));
  section.append(svg, legend);
  return section;
}

function rounds(t) {
  return el("section", { cls: "rounds" }, el("h2", { text: "Rounds" }),
    t.rounds.map((tables, r) => el("details", { open: r === t.rounds.length - 1 },
      el("summary", { text: `Round ${r + 1}` }),
      el("ul", {}, tables.map((table) => el("li", {},
        el("a", { href: `/games/${table.game_id}`, text: table.game_id }), " ",
        table.entrants.map((e) => t.entrants[e]).join(" vs "),
        table.result ? ` — ${table.result.totals.join(" : ")}` : " — playing"))))));
}

// -- start ---------------------------------------------------------------------------------------

const page = app.dataset.page;
const ident = app.dataset.id;
try {
  if (page === "index") await indexPage();
  else if (page === "game") gamePage(ident);
  else if (page === "play") gamePage(ident, true);
  else if (page === "tournament") await tournamentPage(ident);
} catch (error) {
  fail(error);
}
