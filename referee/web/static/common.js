// What the pages' scripts share (spectator.js, play.js): building elements, drawing dice,
// calling the API. No library and nothing from another origin.

export const FACES = "⚀⚁⚂⚃⚄⚅";
export const CARDS = { fdh: "FdH", null: "Null", kur: "KUR", minus1: "−1", minus2: "−2", suppen_kasper: "Suppen-Kasper" };

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

const pairs = (two) => two.map((p) => `${p.join("+")}`).join(" and ");

/** A move in words (past tense for CHOPTA's "placed", as the event feed tells it). */
export function describeMove(move, nameOf = (seat) => `seat ${seat}`) {
  switch (move.type) {
    case "place": return `placed a ${move.die}`;
    case "swap": return `swapped a ${move.die} into ${nameOf(move.opponent)}'s area for a ${move.take}`;
    case "mark": return `fifth die ${move.fifth}, pairs ${pairs(move.pairs)}`;
    case "free_throw": return `free throw: set aside ${move.set_aside}, pairs ${pairs(move.pairs)}`;
    case "fdh": {
      const last = move.fifth ? `fifth die ${move.fifth}` : move.set_aside ? `set aside ${move.set_aside}` : "no fifth die";
      return `card FdH: ${move.remove.join(" and ")} to the plate, pair ${move.pair.join("+")}, ${last}`;
    }
    case "null": return `card Null: pairs ${pairs(move.pairs)}, ${move.plate} to the plate`;
    case "kur": return `card KUR: fifth die ${move.fifth}, the other four to the plate`;
    case "minus1": return "card −1: the roll refused, all five to the plate";
    case "minus2": return `card −2: the roll refused, a mark off fifth die ${move.value}`;
    case "suppen_kasper": return `card Suppen-Kasper: eats ${move.eat.join(" ")} from the plate, then ${describeMove(move.round, nameOf)}`;
    default: return move.type;
  }
}
