"""Every body is read as the contract states it: what the schema refuses, the server refuses
(a string for a number, 0 for false; Litestar's own decoding took both), what it takes, the
server takes (5.0 is the integer 5), and a request without a token is refused before its body
is read."""

from __future__ import annotations

import pytest
from helpers import auth, create
from test_bad_input_http import moves_url, problem, snapshot

JSON = {"content-type": "application/json"}


def _turn(http, game, seat=0):
    token = game["seats"][seat]["token"]
    return http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()


def test_a_seq_sent_as_a_string_is_refused_and_changes_nothing(http):
    """The fast route's strict decoder refuses it and hands it on; the handler took "0" as 0
    and accepted the move (fails on 0c0a103)."""
    game = create(http, "choice", 2)
    turn = _turn(http, game)
    before = snapshot(http, game)
    body = {"seq": str(turn["seq"]), "move": turn["legal_moves"][0]}
    reply = http.post(moves_url(game), json=body, headers=auth(game["seats"][0]["token"]))
    problem(reply, 400, "invalid-request", "seq")
    assert snapshot(http, game) == before


def test_a_whole_number_written_as_a_float_is_that_integer(http):
    game = create(http, "choice", 2)
    turn = _turn(http, game)
    body = {"seq": float(turn["seq"]), "move": turn["legal_moves"][0]}
    reply = http.post(moves_url(game), json=body, headers=auth(game["seats"][0]["token"]))
    assert reply.status_code == 200 and reply.json()["seq"] == turn["seq"], reply.text
    half = {"seq": turn["seq"] + 0.5, "move": turn["legal_moves"][0]}
    problem(http.post(moves_url(game), json=half, headers=auth(game["seats"][1]["token"])), 400)


def test_a_null_move_or_both_move_and_moves_are_refused(http):
    game = create(http, "choice", 1)
    turn = _turn(http, game)
    headers = auth(game["seats"][0]["token"])
    move = turn["legal_moves"][0]
    null = http.post(moves_url(game), json={"seq": 0, "move": None}, headers=headers)
    problem(null, 400, "invalid-request", "move")
    both = http.post(
        moves_url(game), json={"seq": 0, "move": move, "moves": [move]}, headers=headers
    )
    problem(both, 422, "move-or-moves")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"ruleset": "choice", "seats": [{"name": "a"}], "deadline_s": "5"}, "deadline_s"),
        ({"ruleset": "chopta", "seats": [{}, {}], "options": {"bonus": 0}}, "options.bonus"),
        ({"ruleset": "chopta", "seats": [{}, {}], "options": {"target": "9"}}, "options.target"),
    ],
)
def test_a_new_game_is_read_strictly(http, body, field):
    reply = http.post("/v1/games", json=body)
    assert reply.status_code in (400, 422) and reply.json()["field"] == field, reply.text


def test_a_tournament_with_another_rulesets_options_is_refused(http):
    body = {"ruleset": "choice", "entrants": 2, "options": {"target": 20}}
    problem(http.post("/v1/tournaments", json=body), 422, "invalid-option", "options.target")
    body = {"ruleset": "chopta", "entrants": 2, "options": {"target": 20}, "deadline_s": 0}
    assert http.post("/v1/tournaments", json=body).status_code == 201


def test_no_token_is_a_401_before_the_body_is_read(http):
    game = create(http, "choice", 1)
    problem(http.post(moves_url(game), json={"seq": "x"}), 401, "unauthorized")
    problem(http.post(moves_url(game), content=b"{not json", headers=JSON), 401, "unauthorized")
