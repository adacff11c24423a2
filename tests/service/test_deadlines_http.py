"""Deadlines: defaults applied and flagged, retirement, exactly-once with replicas racing,
a game that survives its server being killed, and seats on two replicas waking each other."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from helpers import auth, create, play_out, wait_until

from referee.games import verify


def test_an_expired_deadline_applies_the_default_and_flags_it(http):
    game = create(http, "choice", 2, deadline_s=0.5)
    url = f"/v1/games/{game['id']}"
    t0 = game["seats"][0]["token"]
    default = http.get(url + "/turn", headers=auth(t0)).json()["legal_moves"][0]
    assert wait_until(lambda: http.get(url).json()["batch"] >= 1)
    record = http.get(url + "/record").json()
    first = [d for d in record["decisions"] if d["seq"] == 0]
    assert len(first) == 2 and all(d["timeout"] for d in first)
    assert [d["moves"] for d in first if d["seat"] == 0] == [[default]]


def test_three_timeouts_retire_a_seat_and_the_game_finishes(http):
    game = create(http, "chopta", 2, {"target": 10}, deadline_s=0.3)
    url = f"/v1/games/{game['id']}"
    assert wait_until(lambda: http.get(url).json()["status"] == "finished", 60)
    public = http.get(url).json()
    assert all(s["retired"] for s in public["seats"])
    record = http.get(url + "/record")
    assert verify(record.content).ok


def test_a_deadline_is_resolved_exactly_once_with_two_replicas_racing(process_server):
    replicas = [process_server(), process_server()]
    with httpx.Client(base_url=replicas[0].url, timeout=30) as http:
        game = create(http, "choice", 3, deadline_s=1.0)
    url = f"/v1/games/{game['id']}"

    def hammer(base):
        with httpx.Client(base_url=base, timeout=30) as client:
            stop = time.monotonic() + 2.5
            while time.monotonic() < stop:
                client.get(url)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(hammer, [r.url for r in replicas] * 2))
    with httpx.Client(base_url=replicas[1].url, timeout=30) as http:
        record = http.get(url + "/record").json()
    first_round = [(d["seat"], d["seq"]) for d in record["decisions"] if d["seq"] == 0]
    assert sorted(first_round) == [(0, 0), (1, 0), (2, 0)]
    keys = [(d["seat"], d["seq"]) for d in record["decisions"]]
    assert len(keys) == len(set(keys))


def test_a_killed_server_is_replaced_and_the_game_goes_on(process_server):
    first = process_server()
    with httpx.Client(base_url=first.url, timeout=30) as http:
        game = create(http, "chopta", 2, {"target": 20})
        url = f"/v1/games/{game['id']}"
        for _ in range(5):
            for seat in http.get(url).json()["to_decide"]:
                token = game["seats"][seat]["token"]
                turn = http.get(url + "/turn", headers=auth(token)).json()
                http.post(
                    url + "/moves",
                    headers=auth(token),
                    json={"seq": turn["seq"], "move": turn["legal_moves"][0]},
                )
        before = http.get(url).json()
    first.kill()
    second = process_server()
    with httpx.Client(base_url=second.url, timeout=30) as http:
        assert http.get(url).json() == before
        final = play_out(http, game)
        assert final["status"] == "finished"
        assert verify(http.get(url + "/record").content).ok


def test_seats_long_polling_different_replicas_wake_each_other(process_server):
    """Each seat of a CHOICE game talks to a replica of its own and long-polls there: every
    decision is heard by the other replica and wakes the seat waiting on it, so no poll sits
    out its wait (one that did would outlast the client's 10 s timeout)."""
    replicas = [process_server(), process_server()]
    with httpx.Client(base_url=replicas[0].url, timeout=10) as first:
        game = create(first, "choice", 2)

    def bot(seat: int) -> int:
        token = game["seats"][seat]["token"]
        url = f"/v1/games/{game['id']}"
        moves = 0
        with httpx.Client(base_url=replicas[seat].url, timeout=10) as client:
            while True:
                reply = client.get(url + "/turn", params={"wait": 30}, headers=auth(token))
                turn = reply.json()
                if turn["status"] == "finished":
                    return moves
                if turn["status"] != "your_turn":
                    continue
                body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
                accepted = client.post(url + "/moves", headers=auth(token), json=body)
                assert accepted.status_code == 200, accepted.text
                moves += 1

    with ThreadPoolExecutor(2) as pool:
        moves = list(pool.map(bot, [0, 1]))
    with httpx.Client(base_url=replicas[1].url, timeout=10) as second:
        record = second.get(f"/v1/games/{game['id']}/record")
    assert record.status_code == 200 and verify(record.content).ok
    assert min(moves) > 5


def test_the_served_referee_answers_with_a_date_and_names_no_server(process_server):
    """``referee serve`` (as the bench and the image run it) applies ``UVICORN_OPTIONS``."""
    served = process_server()
    with httpx.Client(base_url=served.url, timeout=10) as http:
        response = http.get("/healthz")
    assert response.status_code == 200
    assert "server" not in response.headers
    assert "date" in response.headers
