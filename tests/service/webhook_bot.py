"""A webhook bot on loopback for the tests: it checks each call's Standard Webhooks signature,
keeps what it was sent, and answers each turn with its last legal move (not the default, so
that a move the referee played for it on a timeout shows)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


class WebhookBot:
    """``url`` to register; ``secrets`` (game id -> secret) to set once a game is created
    (until then a call is answered 503, which the referee tries again), or ``secret`` for
    every game (a bot account's); ``calls``: (id,
    type, seq) of each call checked; ``before_answer(message)``: called before each turn is
    answered (to stall or fail it)."""

    def __init__(self, before_answer: Callable[[dict], int | None] | None = None) -> None:
        self.secrets: dict[str, str] = {}
        self.secret: str | None = None
        self.calls: list[tuple[str, str, int | None]] = []
        self.answered: dict[str, dict] = {}  # webhook-id -> the move answered
        self.bad_signatures = 0
        self.before_answer = before_answer
        self.lock = threading.Lock()
        bot = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                message = json.loads(body)
                secret = bot.secrets.get(message.get("game_id"), bot.secret)
                if secret is None:
                    return self._answer(503, b"")
                try:
                    Webhook(secret).verify(body, dict(self.headers.items()))
                except WebhookVerificationError:
                    bot.bad_signatures += 1
                    return self._answer(401, b"")
                webhook_id = self.headers["webhook-id"]
                if message["type"] == "info":  # who it is: a field too long, one unknown
                    with bot.lock:
                        bot.calls.append((webhook_id, "info", None))
                    said = {"name": "hook", "author": "a" * 300, "version": "1.0", "extra": "x"}
                    return self._answer(200, json.dumps(said).encode())
                turn = message["turn"]
                with bot.lock:
                    bot.calls.append((webhook_id, message["type"], turn.get("seq")))
                if message["type"] != "turn":
                    return self._answer(204, b"")
                if bot.before_answer is not None:
                    status = bot.before_answer(message)
                    if status is not None:
                        return self._answer(status, b"")
                move = turn["legal_moves"][-1]
                bot.answered[webhook_id] = move
                return self._answer(200, json.dumps(move).encode())

            def _answer(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the referee that called is gone

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/bot"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookBot:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def types(self, game_id: str) -> list[str]:
        return [kind for wid, kind, _ in self.calls if wid.startswith(game_id + ".")]


def wait_finished(http, game_id: str, seconds: float = 60.0) -> dict:
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        public = http.get(f"/v1/games/{game_id}").json()
        if public["status"] == "finished":
            return public
        time.sleep(0.05)
    raise AssertionError(f"game {game_id} did not finish: {public}")
