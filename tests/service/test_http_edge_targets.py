"""Request targets that would name one thing to a proxy or a cache and another here are
refused at the edge, as raw bytes send them: an encoded ``/`` in the path (``/v1/games/%2F``
was routed as ``/v1/games/``, the listing) and a query parameter given twice (the last one was
taken). Each is a 400 ``invalid-request`` naming the part at fault, and nothing is played."""

from __future__ import annotations

import json

import pytest
from helpers import auth
from test_http_edge import _Answers, _connect, _first_turn, _get, _post, _refused


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
