"""House bots: a seat the referee plays with a reference bot, so one bot author can practise
alone. Played through HTTP to the end of a game of every ruleset (the record verifies), bounded
(at most three, never every seat), and handed exactly what their seat would be shown."""

from __future__ import annotations

import httpx
import msgspec
import pytest
from helpers import auth

import referee.core.game as core_game
from referee.core import new_game
from referee.games import verify


@pytest.mark.parametrize(
    ("ruleset", "house"),
    [
        ("choice", ["strong"]),
        ("choice-specials", ["greedy", "random"]),
        ("chopta", ["strong", "random", "greedy"]),
    ],
)
def test_one_player_practises_against_house_bots_to_the_end(server, ruleset, house):
    http = httpx.Client(base_url=server.url, timeout=30)
    seats = [{"name": "me"}] + [{"bot": bot} for bot in house]
    created = http.post("/v1/games", json={"ruleset": ruleset, "seats": seats, "deadline_s": 0})
    assert created.status_code == 201, created.text
    game = created.json()
    assert [s["token"] is None for s in game["seats"]] == [False] + [True] * len(house)
    assert game["seats"][1]["name"] == f"{house[0]} (house bot)"
    mine = auth(game["seats"][0]["token"])
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=mine).json()
    decisions = 0
    while turn["status"] == "your_turn":
        body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
        answer = http.post(f"/v1/games/{game['id']}/moves?wait=5", headers=mine, json=body)
        assert answer.status_code == 200, answer.text
        turn = answer.json()["turn"]
        decisions += 1
    assert turn["status"] == "finished" and decisions > 0
    record = http.get(f"/v1/games/{game['id']}/record")
    assert verify(record.content).ok
    seats_decided = {d["seat"] for d in record.json()["decisions"]}
    assert seats_decided == set(range(1 + len(house)))


@pytest.mark.parametrize(
    ("seats", "field"),
    [
        ([{"name": "me"}] + [{"bot": "random"}] * 4, "seats"),
        ([{"bot": "random"}, {"bot": "strong"}], "seats"),
    ],
)
def test_house_bots_are_bounded(server, seats, field):
    http = httpx.Client(base_url=server.url)
    reply = http.post("/v1/games", json={"ruleset": "chopta", "seats": seats})
    assert reply.status_code == 422, reply.text
    assert reply.json()["code"] == "house-bot-limit" and reply.json()["field"] == field
    unknown = http.post("/v1/games", json={"ruleset": "chopta", "seats": [{}, {"bot": "x"}]})
    assert unknown.status_code == 400 and unknown.json()["field"] == "seats[1].bot"


def test_a_house_bot_is_handed_its_seats_turn_and_nothing_else(monkeypatch):
    """What a house bot reads is, byte for byte, what its seat's GET /turn would answer:
    its own pool, never another seat's."""
    handed: list[tuple[int, bytes, bytes]] = []
    real = core_game.get_bot

    def spy(ruleset: str, name: str, seed: int | None = None):
        bot = real(ruleset, name, seed)

        def choose(turn):
            seat = turn["view"]["you"]["seat"]
            expected = msgspec.json.encode(game.turn(seat))
            handed.append((seat, msgspec.json.encode(turn), expected))
            return bot(turn)

        return choose

    monkeypatch.setattr(core_game, "get_bot", spy)
    game, _tokens = new_game(
        "chopta", {}, [{"name": "me"}, {"bot": "strong"}, {"bot": "random"}], 0, b"s" * 32, 1e9
    )
    for _ in range(200):
        if game.doc.status == "finished":
            break
        turn = game.turn(0)
        game.decide(0, turn["seq"], [turn["legal_moves"][0]], 1e9)
    assert handed and {seat for seat, _, _ in handed} == {1, 2}
    for seat, seen, expected in handed:
        assert seen == expected
        others = [s for s in range(3) if s != seat]
        view = msgspec.json.decode(seen)["view"]
        assert view["you"]["seat"] == seat and all("pool" not in view["seats"][s] for s in others)
