"""``?wait`` means one thing on every route, as the contract says: the seconds the answer may
wait; absent, it does not wait. On POST /moves it also asks for the next turn: with it
(``wait=0`` included) the answer holds ``turn``, without it the answer holds none. The hot
routes (web/hot.py) and the handlers (web/routes.py) answer alike."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from conftest import ThreadServer
from helpers import auth, create

CONTRACT = json.loads((Path(__file__).parents[2] / "openapi" / "openapi.json").read_text())


@pytest.fixture(scope="module")
def handlers_only(valkey):
    """A replica on the same store whose handlers answer everything."""
    with ThreadServer(valkey, fast_routes=False) as running:
        yield running


def _move(client: httpx.Client, game_id: str, token: str, query: dict) -> httpx.Response:
    turn = client.get(f"/v1/games/{game_id}/turn", headers=auth(token)).json()
    assert turn["status"] == "your_turn", turn
    body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
    return client.post(f"/v1/games/{game_id}/moves", json=body, headers=auth(token), params=query)


@pytest.mark.parametrize("answering", ["hot routes", "handlers"])
def test_wait_means_the_same_on_turn_and_moves(server, handlers_only, answering):
    url = server.url if answering == "hot routes" else handlers_only.url
    with httpx.Client(base_url=url, timeout=10) as client:
        game = create(client, "chopta", 2)
        first, second = (seat["token"] for seat in game["seats"])
        turn_path = f"/v1/games/{game['id']}/turn"
        # the seat that does not decide now: absent and 0 alike answer at once, "waiting"
        for query in ({}, {"wait": "0"}):
            waiting = client.get(turn_path, headers=auth(second), params=query)
            assert waiting.status_code == 200 and waiting.json()["status"] == "waiting"
        # POST /moves: without ?wait no turn; with wait=0, the next turn as it is, at once
        plain = _move(client, game["id"], first, {})
        assert plain.status_code == 200 and "turn" not in plain.json(), plain.text
        tokens = (first, second)
        turns = [client.get(turn_path, headers=auth(t)).json()["status"] for t in tokens]
        mover = tokens[turns.index("your_turn")]
        held = _move(client, game["id"], mover, {"wait": "0"})
        assert held.status_code == 200, held.text
        turn = held.json()["turn"]
        assert turn["seat"] == held.json()["seat"] and turn["ruleset"] == "chopta"


def test_the_contract_says_what_wait_means():
    turn = CONTRACT["paths"]["/v1/games/{game_id}/turn"]["get"]
    moves = CONTRACT["paths"]["/v1/games/{game_id}/moves"]["post"]
    (turn_wait,) = [p for p in turn["parameters"] if p["name"] == "wait"]
    (moves_wait,) = [p for p in moves["parameters"] if p["name"] == "wait"]
    assert (
        turn_wait["schema"]["default"] == 0 and "absent: 0, no waiting" in turn_wait["description"]
    )
    assert "default" not in moves_wait["schema"]
    assert (
        "wait=0" in moves_wait["description"] and "absent: no waiting" in moves_wait["description"]
    )


@pytest.mark.parametrize("answering", ["hot routes", "handlers"])
def test_a_wait_with_a_leading_zero_is_refused_and_plays_no_move_on_either_path(
    server, handlers_only, answering
):
    """``wait=01`` is no JSON number: the handlers refused it (400 naming ``wait``) while
    the hot routes took it, and played the move. Both refuse it now, and nothing is played."""
    url = server.url if answering == "hot routes" else handlers_only.url
    with httpx.Client(base_url=url, timeout=10) as client:
        game = create(client, "choice", 2)
        first = game["seats"][0]["token"]
        for wait in ("01", "00", "05.5"):
            refused = _move(client, game["id"], first, {"wait": wait})
            assert refused.status_code == 400, (wait, refused.text)
            assert refused.json()["field"] == "wait"
            turn = client.get(f"/v1/games/{game['id']}/turn", headers=auth(first)).json()
            assert turn["seq"] == 0, (wait, turn)
        for path in (f"/v1/games/{game['id']}/turn", "/v1/me/next"):
            refused = client.get(path, headers=auth(first), params={"wait": "00"})
            assert refused.status_code == 400 and refused.json()["field"] == "wait", path
