"""``POST /v1/games`` answered by the hot route (``web.hot``) is the handler's answer: the
same status, headers and shape, compressed alike; and everything the hot route leaves to
the handler (an Idempotency-Key, a refusal before the game is made) reaches it, answered
with the handler's bytes."""

from __future__ import annotations

import gzip
import hashlib
import json
import re

import brotli
import httpx
import pytest
from conftest import ThreadServer
from helpers import auth

from referee.settings import key_hashes
from referee.store.limits import live_key

_MADE = re.compile(rb'"(id|commitment|token)":"[^"]*"')
_LOCATION = re.compile(r"/v1/games/[0-9a-f]{16}")


def _body(seats: int = 2, name: str = "s", **extra) -> dict:
    names = [{"name": f"{name}{i}"} for i in range(seats)]
    return {"ruleset": "choice", "seats": names, "deadline_s": 0, **extra}


def _sent(response: httpx.Response) -> bytes:
    """The answer's body as sent, uncompressed (a streamed answer's raw bytes)."""
    encoding = response.headers.get("content-encoding")
    if encoding is None:
        return response.read()
    sent = b"".join(response.iter_raw())
    return brotli.decompress(sent) if encoding == "br" else gzip.decompress(sent)


def _alike(fast: httpx.Response, full: httpx.Response) -> None:
    fast_sent, full_sent = _sent(fast), _sent(full)
    assert fast.status_code == full.status_code, (fast_sent, full_sent)
    for header in ("content-type", "content-encoding", "vary"):
        assert fast.headers.get(header) == full.headers.get(header), header
    if "content-encoding" not in fast.headers:  # compressed lengths may differ
        assert fast.headers["content-length"] == full.headers["content-length"]
    assert set(fast.headers) - {"date"} == set(full.headers) - {"date"}
    if fast.status_code == 201:
        assert _LOCATION.fullmatch(fast.headers["location"])
        assert fast.headers["location"] == f"/v1/games/{json.loads(fast_sent)['id']}"
    # what differs between two creations alike masked: the game's id, its commitment, tokens
    assert _MADE.sub(rb'"\1":"-"', fast_sent) == _MADE.sub(rb'"\1":"-"', full_sent)


def _both(server_url: str, handlers_url: str, body: dict, headers: dict) -> None:
    with (
        httpx.Client(base_url=server_url, timeout=30) as fast_http,
        httpx.Client(base_url=handlers_url, timeout=30) as full_http,
    ):
        # stream=True: the compressed bytes as sent, not as httpx decodes them
        request = {"json": body, "headers": headers}
        fast = fast_http.send(fast_http.build_request("POST", "/v1/games", **request), stream=True)
        full = full_http.send(full_http.build_request("POST", "/v1/games", **request), stream=True)
        _alike(fast, full)
        fast.close()
        full.close()


# 20 seats of 60-letter names: an answer past the compression's 1,024 bytes
LONG = _body(20, "n" * 58)
CREATED = [
    pytest.param(_body(), {"Accept-Encoding": "identity"}, id="plain"),
    pytest.param(LONG, {"Accept-Encoding": "identity"}, id="long-uncompressed"),
    pytest.param(LONG, {"Accept-Encoding": "gzip, deflate, br"}, id="long-brotli"),
    pytest.param(LONG, {"Accept-Encoding": "gzip"}, id="long-gzip"),
    pytest.param(_body(3, options={}), {"Accept-Encoding": "br"}, id="short-not-compressed"),
]


@pytest.mark.parametrize(("body", "headers"), CREATED)
def test_a_creation_is_the_handlers_answer(server, handlers_only, fast_answers, body, headers):
    _both(server.url, handlers_only.url, body, headers)
    assert fast_answers.created == [201]


def test_the_created_game_is_played_as_any(http, fast_answers):
    made = http.post("/v1/games", json=_body())
    assert made.status_code == 201 and fast_answers.created == [201]
    game = made.json()
    assert http.get(made.headers["location"]).json()["id"] == game["id"]
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(game["seats"][0]["token"]))
    assert turn.status_code == 200 and turn.json()["status"] == "your_turn"
    assert game["id"] in [g["id"] for g in http.get("/v1/games").json()["games"]]


LEFT = [
    pytest.param(
        {"content": b"{", "headers": {"content-type": "application/json"}}, 400, id="not-json"
    ),
    pytest.param({"json": _body(ruleset="nope")}, 422, id="unknown-ruleset"),
    pytest.param({"json": {**_body(), "extra": 1}}, 400, id="unknown-field"),
    pytest.param({"json": _body(0)}, 422, id="no-seats"),
    pytest.param({"json": _body(), "params": {"x": "1"}}, 201, id="a-query"),
]


@pytest.mark.parametrize(("how", "status"), LEFT)
def test_what_the_hot_route_leaves_the_handler_answers(
    http, handlers_only, fast_answers, how, status
):
    with httpx.Client(base_url=handlers_only.url, timeout=30) as full:
        fast = http.post("/v1/games", **how)
        assert fast.status_code == status, fast.text
        _alike(fast, full.post("/v1/games", **how))
    assert fast_answers.created == []


def test_an_idempotency_key_goes_to_the_handler_which_makes_it_once(http, fast_answers):
    headers = {"Idempotency-Key": hashlib.sha256(b"fast-creation").hexdigest()}
    first = http.post("/v1/games", json=_body(), headers=headers)
    again = http.post("/v1/games", json=_body(), headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content and again.headers["idempotent-replayed"] == "true"
    assert fast_answers.created == []


KEYS = "first-organizer-key"


@pytest.fixture(scope="module")
def keyed(valkey):
    """Two replicas with organizer keys and at most 3 seats a game: one with the hot
    routes, one whose handlers answer everything."""
    settings = {"organizer_keys": key_hashes(KEYS), "max_seats": 3}
    with (
        ThreadServer(valkey, **settings) as fast,
        ThreadServer(valkey, fast_routes=False, **settings) as full,
    ):
        yield fast, full


def test_with_organizer_keys_the_hot_route_creates_for_a_key_alone(keyed, fast_answers):
    fast, full = keyed
    for headers, status in [({}, 401), (auth("wrong"), 403), (auth(KEYS), 201)]:
        _both(fast.url, full.url, _body(), headers)
        with httpx.Client(base_url=fast.url, timeout=30) as http:
            assert http.post("/v1/games", json=_body(), headers=headers).status_code == status
    # the refusals are the handler's, before the body is read
    assert fast_answers.created == [201, 201]


def test_a_refusal_while_creating_is_the_hot_routes_with_the_handlers_bytes(
    keyed, fast_answers, redis_client
):
    """Past the seats a game may have here: refused as the game is made, by the hot route
    itself, with the handler's bytes; and the organizer has no game more (a game made
    counts among its live games before it is written)."""
    fast, full = keyed
    live = live_key("k" + hashlib.sha256(KEYS.encode()).hexdigest()[:20], "games")
    with (
        httpx.Client(base_url=fast.url, timeout=30) as fast_http,
        httpx.Client(base_url=full.url, timeout=30) as full_http,
    ):
        created = fast_http.post("/v1/games", json=_body(), headers=auth(KEYS)).json()["id"]
        before = redis_client.zrange(live, 0, -1)
        assert created.encode() in before, "the organizer's live games, as counted"
        made = fast_http.post("/v1/games", json=_body(4), headers=auth(KEYS))
        assert made.status_code == 422 and made.json()["code"] == "too-many-seats"
        full_made = full_http.post("/v1/games", json=_body(4), headers=auth(KEYS))
        _alike(made, full_made)
        refused = full_http.post("/v1/games", json=_body(4), headers=auth(KEYS))
        assert made.content == refused.content
    assert fast_answers.created == [201, 422]
    assert redis_client.zrange(live, 0, -1) == before
