"""One request per decision: ``POST /moves?wait=N`` answers with the decision and the seat's
next turn, long-polled like ``GET /turn``; without ``wait`` the answer is as before."""

from __future__ import annotations

import threading
import time

from helpers import auth, create


def _post(http, game, seat, move, **params):
    token = game["seats"][seat]["token"]
    body = {"seq": move[0], "move": move[1]}
    return http.post(f"/v1/games/{game['id']}/moves", headers=auth(token), json=body, params=params)


def _turn(http, game, seat):
    token = game["seats"][seat]["token"]
    return http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()


def test_without_wait_the_answer_has_no_turn(http):
    game = create(http, "choice", 2)
    turn = _turn(http, game, 0)
    answer = _post(http, game, 0, (turn["seq"], turn["legal_moves"][0])).json()
    assert answer["accepted"] and "turn" not in answer


def test_the_next_turn_is_long_polled_until_the_other_seat_decides(http):
    """Both CHOICE seats decide on each roll: seat 0's next turn comes once seat 1 decided."""
    game = create(http, "choice", 2)
    first = [_turn(http, game, seat) for seat in (0, 1)]
    other = threading.Timer(
        0.5, lambda: _post(http, game, 1, (first[1]["seq"], first[1]["legal_moves"][0]))
    )
    began = time.monotonic()
    other.start()
    try:
        reply = _post(http, game, 0, (first[0]["seq"], first[0]["legal_moves"][0]), wait=10)
    finally:
        other.join()
    assert reply.status_code == 200, reply.text
    took = time.monotonic() - began
    turn = reply.json()["turn"]
    assert turn["status"] == "your_turn" and turn["seq"] == first[0]["seq"] + 1
    assert 0.4 < took < 9, took  # it waited for seat 1, not for the whole wait
    assert turn == _turn(http, game, 0)


def test_with_wait_0_a_seat_still_waiting_is_told_so_at_once(http):
    game = create(http, "choice", 2)
    turn = _turn(http, game, 0)
    answer = _post(http, game, 0, (turn["seq"], turn["legal_moves"][0]), wait=0).json()
    assert answer["turn"]["status"] == "waiting" and answer["turn"]["seq"] == turn["seq"] + 1


def test_sent_again_it_is_answered_alike_with_the_turn_as_it_is(http):
    """A bot that lost the answer sends the same decision again: the same acceptance, and
    the turn as it is now; nothing is decided twice."""
    game = create(http, "choice", 1)
    turn = _turn(http, game, 0)
    move = (turn["seq"], turn["legal_moves"][0])
    first = _post(http, game, 0, move, wait=0).json()
    again = _post(http, game, 0, move, wait=0).json()
    assert {k: v for k, v in again.items() if k != "turn"} == {
        k: v for k, v in first.items() if k != "turn"
    }
    assert again["turn"] == _turn(http, game, 0)
    record = http.get(f"/v1/games/{game['id']}/record").json()
    assert [d["seq"] for d in record["decisions"]] == [turn["seq"]]


def test_a_wait_past_60_s_is_refused_and_decides_nothing(http):
    game = create(http, "choice", 1)
    turn = _turn(http, game, 0)
    reply = _post(http, game, 0, (turn["seq"], turn["legal_moves"][0]), wait=61)
    assert reply.status_code == 400 and reply.json()["field"] == "wait", reply.text
    assert _turn(http, game, 0)["seq"] == turn["seq"]
