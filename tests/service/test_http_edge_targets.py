"""What a request names and declares, refused at the edge as raw bytes send it where it would
mean one thing to a proxy, a cache or a browser and another here: an encoded ``/`` in the path
(``/v1/games/%2F`` was routed as ``/v1/games/``, the listing) and a query parameter given twice
(the last one was taken) are 400 ``invalid-request`` naming the part at fault; a body not
declared JSON (a form, text: what another site's page makes a visitor's browser send without
asking) is 415 ``unsupported-media-type``. Nothing is played or made."""

from __future__ import annotations

import json

import pytest
from helpers import auth
from test_http_edge import (
    CREATE,
    _Answers,
    _connect,
    _first_turn,
    _games_listed,
    _get,
    _post,
    _refused,
)


@pytest.mark.parametrize(
    "path",
    ["/v1/games/%2F", "/v1/games/%2f/turn", "/v1/bots/a%2Ftoken", "/v1/games%2F"],
)
def test_an_encoded_slash_in_the_path_is_400_naming_the_path(server, path):
    with _connect(server.url) as sock:
        sock.sendall(_get(path))
        problem = _refused(_Answers(sock), 400, "invalid-request", "%2F")
    assert problem["field"] == "path"


@pytest.mark.parametrize(
    "query",
    ["limit=1&limit=2", "limit=1&before=x&limit=1", "limit=1&l%69mit=2", "a+b=1&a%20b=2"],
)
def test_a_query_parameter_given_twice_is_400_naming_it(server, query):
    with _connect(server.url) as sock:
        sock.sendall(_get("/v1/games?" + query))
        problem = _refused(_Answers(sock), 400, "invalid-request", "given twice")
    assert problem["field"] in {"limit", "a b"}


def test_a_move_whose_wait_is_given_twice_is_refused_and_not_played(server, http):
    """On the hot route: ``?wait=0&wait=30`` was taken as 30."""
    path, token, turn = _first_turn(http)
    move = json.dumps({"seq": turn["seq"], "move": turn["legal_moves"][0]}).encode()
    bearer = f"Authorization: Bearer {token}\r\n"
    with _connect(server.url) as sock:
        sock.sendall(_post(path + "/moves?wait=0&wait=30", len(move), bearer, move))
        problem = _refused(_Answers(sock), 400, "invalid-request", "'wait'")
    assert problem["field"] == "wait"
    assert http.get(path + "/turn", headers=auth(token)).json()["seq"] == turn["seq"]


@pytest.mark.parametrize(
    ("target", "status"),
    [
        ("/v1/games?limit=2&tournament=%2F", 404),
        ("/v1/games?limit=2&&", 200),
        ("/healthz?a&b", 200),
    ],
)
def test_distinct_parameters_and_an_encoded_slash_in_the_query_are_served(server, target, status):
    with _connect(server.url) as sock:
        sock.sendall(_get(target))
        done = _Answers(sock).read()
    assert [answer[0] for answer in done] == [status], done


def _typed(path: str, media: str | None, body: bytes, extra: str = "") -> bytes:
    declared = f"Content-Type: {media}\r\n" if media is not None else ""
    head = f"POST {path} HTTP/1.1\r\nHost: referee\r\n{declared}"
    return f"{head}Content-Length: {len(body)}\r\n{extra}\r\n".encode() + body


@pytest.mark.parametrize(
    "media", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
def test_a_body_not_declared_json_is_415_and_nothing_is_made(server, http, media):
    before = _games_listed(http)
    with _connect(server.url) as sock:
        sock.sendall(_typed("/v1/games", media, CREATE))
        problem = _refused(_Answers(sock), 415, "unsupported-media-type", "application/json")
    assert problem["field"] == "content-type"
    assert _games_listed(http) == before


def test_a_move_sent_as_text_is_415_and_not_played(server, http):
    path, token, turn = _first_turn(http)
    move = json.dumps({"seq": turn["seq"], "move": turn["legal_moves"][0]}).encode()
    with _connect(server.url) as sock:
        bearer = f"Authorization: Bearer {token}\r\n"
        sock.sendall(_typed(path + "/moves", "text/plain", move, bearer))
        _refused(_Answers(sock), 415, "unsupported-media-type", "Content-Type")
    assert http.get(path + "/turn", headers=auth(token)).json()["seq"] == turn["seq"]


@pytest.mark.parametrize(
    "media", ["application/json", "Application/JSON; charset=utf-8", "application/merge+json"]
)
def test_a_body_declared_json_is_taken(server, media):
    with _connect(server.url) as sock:
        sock.sendall(_typed("/v1/games", media, CREATE))
        done = _Answers(sock).read()
    assert [answer[0] for answer in done] == [201], done


def test_a_post_with_no_body_needs_no_type(server, http):
    """Creating a bot's new token sends nothing: no Content-Type is asked of it."""
    made = http.post("/v1/bots", json={"name": "Typeless"}).json()
    with _connect(server.url) as sock:
        bearer = f"Authorization: Bearer {made['token']}\r\n"
        sock.sendall(_typed("/v1/bots/Typeless/token", None, b"", bearer))
        done = _Answers(sock).read()
    assert [answer[0] for answer in done] == [200], done


@pytest.mark.parametrize("media", ["text/plain", None])
def test_a_body_not_declared_json_on_a_route_that_reads_none_changes_nothing(server, http, media):
    """Refused at the body's first bytes, a request whose handler reads no body was carried
    out anyway, its answer (the new token of a rotation) lost: ``curl -X POST -d x`` locked a
    bot out of its account. Now the head is refused, before the request has a handler."""
    name = f"Kept{len(media or '')}"
    made = http.post("/v1/bots", json={"name": name}).json()
    bearer = f"Authorization: Bearer {made['token']}\r\n"
    with _connect(server.url) as sock:
        sock.sendall(_typed(f"/v1/bots/{name}/token", media, b"x", bearer))
        _refused(_Answers(sock), 415, "unsupported-media-type", "Content-Type")
    same = http.get("/v1/me/next", params={"wait": 0}, headers=auth(made["token"]))
    assert same.status_code == 200, same.text  # the token was not rotated
