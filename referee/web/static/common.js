// What the pages' scripts share (spectator.js, play.js): building elements, drawing dice,
// calling the API. No library and nothing from another origin.

import * as PLAIN from "./plain.js";

export const FACES = "⚀⚁⚂⚃⚄⚅";

/** An element with attributes (class, text, on*) and children. */
export function el(tag, attrs = {}, ...children) {
  const svg = ["svg", "polyline", "line", "text", "title", "desc", "circle", "g"].includes(tag);
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key === "cls" ? "class" : key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined && child !== false) {
      node.append(child instanceof Node ? child : String(child));
    }
  }
  return node;
}

/** A player's colour, distinct for up to 64 players: eight well-separated colours, then hues
 * a golden angle apart at alternating lightness (charts also label each line, so that no
 * colour must be told apart alone). */
const PALETTE = ["#1b6ac9", "#c4391d", "#2a8a3e", "#8a4fbf", "#b8860b", "#0f8b8d", "#d6336c", "#6b6b6b"];
export function colourOf(index) {
  if (index < PALETTE.length) return PALETTE[index];
  const hue = Math.round((index * 137.508) % 360);
  const light = [42, 56, 34][index % 3];
  return `hsl(${hue} 70% ${light}%)`;
}

/** ``redraw()`` run on ``root`` with the keyboard focus kept: the element focused inside it
 * before (found again by its id, ``data-key``, ``data-token`` or its text) is focused after. */
export function keepFocus(root, redraw) {
  const focused = document.activeElement;
  const inside = focused && focused !== document.body && root.contains(focused);
  const key = inside && (focused.id ? `#${CSS.escape(focused.id)}`
    : focused.dataset.key ? `[data-key="${CSS.escape(focused.dataset.key)}"]`
    : focused.dataset.token ? `[data-token="${CSS.escape(focused.dataset.token)}"]` : null);
  const text = inside ? focused.textContent : null;
  const tag = inside ? focused.tagName : null;
  redraw();
  if (!inside || root.contains(focused)) return;
  const again = (key && root.querySelector(`${key}:not([disabled])`))
    || [...root.querySelectorAll(tag)].find((node) => node.textContent === text && !node.disabled);
  again?.focus();
}

/** A die as a picture, with its value for screen readers. */
export function die(value, extra = "") {
  return el("span", { cls: `die ${extra}`.trim(), role: "img", "aria-label": `die showing ${value}`, text: FACES[value - 1] });
}

export function hiddenDie() {
  return el("span", { cls: "die hidden", role: "img", "aria-label": "hidden die", text: "?" });
}

/**
 * A call to the referee's API: GET without a body, POST with one; ``token`` is a seat's (or an
 * organizer's) bearer token. A refusal throws, carrying its problem's status, code and detail.
 */
export async function api(path, { token, body } = {}) {
  const headers = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method: body === undefined ? "GET" : "POST", headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(answer?.detail || answer?.title || `HTTP ${response.status}`);
    error.status = response.status;
    error.code = answer?.code;
    throw error;
  }
  return answer;
}

/** A refused call in words: its problem's code and detail. */
export function refusal(error) {
  return `Refused (${error.code ?? error.status}): ${error.message}`;
}

/** The time left until ``at`` (epoch seconds), counting down (``tickDeadlines``); null for none. */
export function timeLeft(at) {
  if (!at) return null;
  const node = el("span", { cls: "deadline", "data-deadline": at, "aria-label": "time left to decide" });
  showTimeLeft(node);
  return node;
}

function showTimeLeft(node) {
  const left = Number(node.dataset.deadline) - Date.now() / 1000;
  node.textContent = left > 0 ? `${left.toFixed(1)} s left` : "due now";
  node.classList.toggle("late", left < 3);
}

/** Every deadline under ``root`` shows the time left now. */
export function tickDeadlines(root) {
  for (const node of root.querySelectorAll("[data-deadline]")) showTimeLeft(node);
}

/** A ruleset's part of the pages, from the module its package serves (/rulesets/{id}/page.js),
 * loaded once by name: ``drawBoard(view, kit)`` (the board of a public view),
 * ``pickRows(turn, kit, choosing)`` (what a seat clicks to choose, or sees while it waits),
 * ``clicksOf(move)`` (the clicks that choose a move: variants of groups of tokens, each group
 * clicked in any order; a token names where a die is clicked and its value, ``roll:4``, or a
 * card, ``card:kur``), ``describeMove(move, nameOf)`` (a move in words, as the event feed
 * tells it) and ``choiceText(move, nameOf)`` (a legal move as a choice). For a ruleset with
 * none the referee serves ``plain.js`` there: each seat's figures and each move as the view
 * shows them (and it is used here too, should the module fail to load). */
const renderers = new Map();
export function rendererOf(rulesetId) {
  if (!renderers.has(rulesetId)) {
    renderers.set(rulesetId, import(`/rulesets/${encodeURIComponent(rulesetId)}/page.js`).catch(() => PLAIN));
  }
  return renderers.get(rulesetId);
}
