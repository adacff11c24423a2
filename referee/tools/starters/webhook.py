#!/usr/bin/env python3
"""A webhook bot with the standard library only: the referee POSTs each turn to it, signed
per the Standard Webhooks spec, and takes the answer's body as the move.

Run it with `WEBHOOK_SECRET=whsec_... python3 bot.py PORT` (the secret is shown once, with
the game or the bot that names this URL). It plays legal_moves[seq % len(legal_moves)]: put
your strategy in choose().
"""

import base64
import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = base64.b64decode(os.environ["WEBHOOK_SECRET"].removeprefix("whsec_"))


def choose(turn):
    moves = turn["legal_moves"]
    return moves[turn["seq"] % len(moves)]


def signed_by_the_referee(headers, body):
    """Standard Webhooks: HMAC-SHA256 of "id.timestamp.body", base64, sent as "v1,<sig>"."""
    message_id, timestamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "0")
    if abs(time.time() - int(timestamp)) > 300:
        return False  # too old (or from the future): a replay
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(SECRET, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(signature.removeprefix("v1,"), expected)
        for signature in headers.get("webhook-signature", "").split()
    )


class Bot(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        if not signed_by_the_referee(self.headers, body):
            return self.answer(401, b"")
        message = json.loads(body)  # {"type": "turn" | "start" | "end", "game_id", "turn"}
        if message["type"] != "turn":
            return self.answer(204, b"")
        return self.answer(200, json.dumps(choose(message["turn"])).encode())

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Bot).serve_forever()
