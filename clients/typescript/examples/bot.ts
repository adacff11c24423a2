// A whole working bot: `REFEREE_URL=http://127.0.0.1:8000 npm run bot` plays a solitaire game.
import { createGame, referee, runBot, type Turn } from "../src/index.js";

const url = process.env.REFEREE_URL ?? "http://127.0.0.1:8000";

// any element of legal_moves is a legal move, verbatim
const choose = (turn: Turn) => turn.legal_moves[Math.floor(Math.random() * turn.legal_moves.length)];

const game = await createGame(referee(url), { ruleset: "choice", seats: [{ name: "ts-bot" }] });
const final = await runBot(url, game.seats[0].token!, choose);
console.log("final view:", JSON.stringify(final.view?.seats));
