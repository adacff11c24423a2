"""A hostile HTTP client at the edge: a request the HTTP parser refuses (the framings that
smuggle a request past a proxy, obs-fold, bytes no request line may hold) gets a 400
problem+json naming the part at fault, the connection closed, and nothing played; never
uvicorn's plain-text 400."""

from __future__ import annotations

import json

import pytest
from helpers import auth, create
from test_http_edge import _Answers, _connect


def _move(game: dict, seat: int, http) -> bytes:
    """A legal move of ``seat`` now, as a body."""
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(game["seats"][seat]["token"]))
    return json.dumps({"seq": turn.json()["seq"], "move": turn.json()["legal_moves"][0]}).encode()


def _post(game: dict, head: str, body: bytes) -> bytes:
    token = game["seats"][0]["token"]
    return (
        f"POST /v1/games/{game['id']}/moves HTTP/1.1\r\nHost: referee\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n{head}\r\n"
    ).encode() + body


#: request -> the field the problem names
MALFORMED = {
    # Content-Length and Transfer-Encoding together: a proxy that reads the other one would
    # see a second request in the body (the classic smuggling)
    "content-length-with-chunked": (
        lambda g, b: _post(
            g,
            f"Content-Length: {len(b) + 5}\r\nTransfer-Encoding: chunked\r\n",
            b"%x\r\n" % len(b) + b + b"\r\n0\r\n\r\n",
        ),
        "transfer-encoding",
    ),
    "two-content-lengths": (
        lambda g, b: _post(g, f"Content-Length: {len(b)}\r\nContent-Length: 2\r\n", b),
        "content-length",
    ),
    "negative-content-length": (
        lambda g, b: _post(g, "Content-Length: -1\r\n", b),
        "content-length",
    ),
    "content-length-past-2**64": (
        lambda g, b: _post(g, f"Content-Length: {2**64 + len(b)}\r\n", b),
        "content-length",
    ),
    "chunked-then-another-coding": (
        lambda g, b: _post(g, "Transfer-Encoding: chunked, gzip\r\n", b),
        "transfer-encoding",
    ),
    "obs-fold": (
        lambda g, b: _post(g, f"Content-Length: {len(b)}\r\nX-Folded: a\r\n b\r\n", b),
        "headers",
    ),
    "space-before-colon": (
        lambda g, b: _post(g, f"Content-Length : {len(b)}\r\n", b),
        "headers",
    ),
    "a-chunk-size-that-is-no-number": (
        lambda g, b: _post(g, "Transfer-Encoding: chunked\r\n", b"zz\r\n" + b + b"\r\n0\r\n\r\n"),
        "body",
    ),
    "a-chunk-longer-than-its-size": (
        lambda g, b: _post(g, "Transfer-Encoding: chunked\r\n", b"2\r\n" + b + b"\r\n0\r\n\r\n"),
        "body",
    ),
    "raw-utf-8-in-the-path": (
        lambda g, b: f"GET /v1/games/{g['id']}é/turn HTTP/1.1\r\nHost: referee\r\n\r\n".encode(),
        "url",
    ),
    "bare-line-feeds": (
        lambda g, b: f"GET /v1/games/{g['id']} HTTP/1.1\nHost: referee\n\n".encode(),
        "request",
    ),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_request_the_parser_refuses_is_a_problem_naming_its_part_and_plays_nothing(
    server, http, kind
):
    game = create(http, "choice", 2)
    make, field = MALFORMED[kind]
    before = http.get(f"/v1/games/{game['id']}").json()
    with _connect(server.url) as sock:
        sock.sendall(make(game, _move(game, 0, http)))
        answers = _Answers(sock)
        done = answers.read()
        assert len(done) == 1, done
        status, headers, body = done[0]
        assert status == 400, body
        assert headers["content-type"] == "application/problem+json", body
        assert headers["connection"] == "close"
        problem = json.loads(body)
        assert problem["code"] == "invalid-request" and problem["field"] == field, problem
        assert problem["detail"].startswith("the request is not valid HTTP/1.1"), problem
        assert answers.closes(), "the connection stayed open"
    assert http.get(f"/v1/games/{game['id']}").json() == before


def test_a_websocket_offer_is_served_as_http_1_1(server, http):
    """The referee speaks no WebSocket: a request that offers one is answered as the plain
    request it also is (as an h2c offer is), not with an empty text/plain 403."""
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    offer = (
        "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    )
    with _connect(server.url) as sock:
        for path in (f"/v1/games/{game['id']}", f"/v1/games/{game['id']}/turn"):
            head = f"GET {path} HTTP/1.1\r\nHost: referee\r\nAuthorization: Bearer {token}\r\n"
            sock.sendall(f"{head}{offer}\r\n".encode())
        done = _Answers(sock).read(2)
    assert [status for status, _, _ in done] == [200, 200], done
    assert json.loads(done[0][2])["id"] == game["id"]
    assert json.loads(done[1][2])["status"] == "your_turn"


def test_a_deadline_below_the_clocks_resolution_does_not_play_a_whole_game_in_one_read(http):
    """``deadline_s`` 1e-9 is within the contract (0 to 3600), but the clock cannot tell
    ``now + 1e-9`` from ``now``: every deadline set was already past, and the first read
    after the creation played the whole game by timeouts (CHOPTA, eight seats, 1,000
    rounds: some 80,000 timeouts in one request, the process deaf meanwhile). A deadline is
    passed once the clock is beyond it: each read plays the timeouts then due, once."""
    seats = [{"name": f"s{i}"} for i in range(8)]
    game = create(http, "chopta", seats, {"max_rounds": 1000}, deadline_s=1e-9)
    view = http.get(f"/v1/games/{game['id']}").json()
    assert view["status"] == "running" and view["round"] == 0, view
    later = http.get(f"/v1/games/{game['id']}").json()  # the next read plays on
    assert later["status"] == "running"
    assert http.get(f"/v1/games/{game['id']}/record").json()["decisions"]


def test_head_is_answered_as_get_without_its_body(http):
    """HTTP's HEAD (what many uptime monitors and link checkers send) gets GET's status and
    headers, and no body, rather than 405 (it had 405 on every route, /healthz included). An
    event stream, which never ends, still takes GET alone."""
    game = create(http, "choice", 2)
    token = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    gid = game["id"]
    for path in (
        "/healthz",
        "/readyz",
        f"/v1/games/{gid}",
        f"/v1/games/{gid}/turn",
        f"/games/{gid}",
    ):
        head, got = http.head(path, headers=token), http.get(path, headers=token)
        assert head.status_code == got.status_code == 200, (path, head.status_code)
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert head.headers["content-length"] == got.headers["content-length"], path
        assert head.content == b"", path
    missing = http.head("/v1/games/0123456789abcdef")
    assert missing.status_code == 404 and missing.content == b""
    for events in (f"/v1/games/{gid}/events", f"/v1/games/{gid}/events/"):
        assert http.head(events).status_code == 405
    assert http.options("/healthz").headers["allow"] == "GET, HEAD, OPTIONS"
