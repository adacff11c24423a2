"""The hot routes as the server's protocol answers them (``web.serving``), seen on raw
connections: HTTP/1.1 as uvicorn speaks it for every other route (pipelining, ``Connection:
close``, HTTP/1.0), and a bot that leaves mid-wait harms nothing."""

from __future__ import annotations

import json
import logging
import socket
import time

import httptools
import pytest
from helpers import auth, create


class _Responses:
    """Responses read off a raw connection, in order."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.done: list[tuple[int, dict[bytes, bytes], bytes]] = []
        self.headers: dict[bytes, bytes] = {}
        self.body = b""

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.lower()] = value

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        self.done.append((self.parser.get_status_code(), self.headers, self.body))
        self.headers, self.body = {}, b""

    def read(self, sock: socket.socket, count: int) -> tuple[list, bool]:
        """``count`` responses, and whether the server closed the connection after them."""
        closed = False
        while len(self.done) < count or not closed:
            data = sock.recv(65536)
            if not data:
                closed = True
                break
            self.parser.feed_data(data)
            if len(self.done) >= count:
                sock.settimeout(0.3)  # anything more, or the close, comes at once
                try:
                    data = sock.recv(65536)
                except TimeoutError:
                    break
                if not data:
                    closed = True
                    break
                self.parser.feed_data(data)
        return self.done, closed


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def _get(path: str, token: str, version: str = "1.1", extra: str = "") -> bytes:
    return (
        f"GET {path} HTTP/{version}\r\nHost: referee\r\nAuthorization: Bearer {token}\r\n"
        f"{extra}\r\n"
    ).encode()


def test_pipelined_requests_are_answered_in_order(http, server, fast_answers):
    """The first in place; those that came behind it, through uvicorn's own queue."""
    game = create(http, "choice", 2)
    path = f"/v1/games/{game['id']}/turn"
    tokens = [seat["token"] for seat in game["seats"]]
    with _connect(server.url) as sock:
        sock.sendall(
            _get(path, tokens[0])
            + b"GET /healthz HTTP/1.1\r\nHost: referee\r\n\r\n"
            + _get(path, tokens[1])
        )
        done, closed = _Responses().read(sock, 3)
    assert not closed
    assert [status for status, _, _ in done] == [200, 200, 200]
    first, health, second = (json.loads(body) for _, _, body in done)
    assert (first["seat"], second["seat"]) == (0, 1)
    assert health["status"] == "ok"
    assert fast_answers == [200]
    assert first == http.get(path, headers=auth(tokens[0])).json()


@pytest.mark.parametrize(
    ("version", "extra"),
    [("1.1", "Connection: close\r\n"), ("1.0", "")],
    ids=["connection-close", "http-1.0"],
)
def test_a_request_that_ends_its_connection_is_answered_then_closed(
    http, server, fast_answers, version, extra
):
    game = create(http, "choice", 2)
    path = f"/v1/games/{game['id']}/turn"
    token = game["seats"][0]["token"]
    with _connect(server.url) as sock:
        sock.sendall(_get(path, token, version, extra))
        done, closed = _Responses().read(sock, 1)
    assert closed and fast_answers == [200]
    [(status, headers, body)] = done
    assert status == 200
    assert headers[b"connection"] == b"close"
    assert headers[b"content-type"] == b"application/json"
    assert json.loads(body) == http.get(path, headers=auth(token)).json()


def test_a_bot_that_leaves_during_its_long_poll_harms_nothing(http, server, caplog, fast_answers):
    """The answer, ready after the bot has gone, is dropped; the game and the server go on."""
    game = create(http, "choice", 2)
    path = f"/v1/games/{game['id']}"
    tokens = [seat["token"] for seat in game["seats"]]
    turn = http.get(path + "/turn", headers=auth(tokens[0])).json()
    decided = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
    assert http.post(path + "/moves", headers=auth(tokens[0]), json=decided).status_code == 200
    with caplog.at_level(logging.WARNING), _connect(server.url) as sock:
        sock.sendall(_get(path + "/turn?wait=5", tokens[0]))  # waits for the other seat
        time.sleep(0.2)
        sock.close()
        other = http.get(path + "/turn", headers=auth(tokens[1])).json()
        move = {"seq": other["seq"], "move": other["legal_moves"][0]}
        assert http.post(path + "/moves", headers=auth(tokens[1]), json=move).status_code == 200
        time.sleep(0.3)
        after = http.get(path + "/turn", headers=auth(tokens[0])).json()
    assert after["status"] == "your_turn" and after["seq"] > turn["seq"]
    assert len(fast_answers) == 6  # the long-poll's answer included: made, then dropped
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
