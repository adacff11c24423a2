"""Bad input: a clear 4xx problem+json naming the field or rule, never a 5xx, never a change."""

from __future__ import annotations

import pytest
from helpers import auth, create


def problem(reply, status, code=None, field=None):
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"].startswith("application/problem+json")
    body = reply.json()
    assert body["status"] == status and body["type"].endswith("/" + body["code"])
    assert body["title"] and body["detail"]
    if code:
        assert body["code"] == code, body
    if field:
        assert body.get("field") == field, body
    return body


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        ({"ruleset": "poker", "seats": [{"name": "a"}]}, 422, "unknown-ruleset", "ruleset"),
        ({"ruleset": "chopta", "seats": [{"name": "a"}]}, 422, "invalid-seat-count", "seats"),
        (
            {"ruleset": "choice", "seats": [{"name": "a"}], "options": {"schedule": [0]}},
            422,
            "invalid-option",
            "options.schedule[0]",
        ),
        (
            {
                "ruleset": "chopta",
                "seats": [{"name": "a"}, {"name": "b"}],
                "options": {"colour": 1},
            },
            422,
            "invalid-option",
            "options.colour",
        ),
        (
            {"ruleset": "choice", "seats": [{"name": "a"}], "extra": 1},
            400,
            "invalid-request",
            "body.extra",
        ),
        ({"ruleset": "choice", "seats": []}, 400, "invalid-request", None),
        (
            {"ruleset": "choice", "seats": [{"name": "a"}], "deadline_s": -1},
            400,
            "invalid-request",
            None,
        ),
    ],
)
def test_bad_games_are_refused(http, body, status, code, field):
    problem(http.post("/v1/games", json=body), status, code, field)


def test_malformed_json_is_a_400(http):
    reply = http.post("/v1/games", content=b"{nope", headers={"content-type": "application/json"})
    problem(reply, 400, "invalid-request")


def test_body_limit(http):
    reply = http.post(
        "/v1/games", content=b" " * 100_000, headers={"content-type": "application/json"}
    )
    problem(reply, 413, "body-too-large")


def test_unknown_game_and_route(http):
    problem(http.get("/v1/games/0123456789abcdef"), 404, "game-not-found")
    problem(http.get("/v1/games/not-an-id"), 404, "game-not-found")
    problem(http.get("/v1/nothing"), 404, "not-found")


def moves_url(game):
    return f"/v1/games/{game['id']}/moves"


def snapshot(http, game):
    return http.get(f"/v1/games/{game['id']}/record").json()["decisions"], http.get(
        f"/v1/games/{game['id']}"
    ).json()


def test_illegal_moves_name_the_rule_and_change_nothing(http):
    game = create(http, "choice", 1)
    token = game["seats"][0]["token"]
    before = snapshot(http, game)
    roll = http.get(f"/v1/games/{game['id']}").json()["rolls"][0]
    wrong = [d % 6 + 1 for d in roll]
    if sorted(wrong) == sorted(roll):  # pragma: no cover - a roll of one of each value
        wrong = [1, 1, 1, 1, 1] if roll != [1, 1, 1, 1, 1] else [2, 2, 2, 2, 2]
    move = {"type": "mark", "fifth": wrong[0], "pairs": [wrong[1:3], wrong[3:5]]}
    body = problem(
        http.post(moves_url(game), headers=auth(token), json={"seq": 0, "move": move}),
        422,
        "dice-not-in-roll",
    )
    assert body["current_seq"] == 0
    free = {"type": "free_throw", "set_aside": roll[0], "pairs": [roll[1:3], roll[3:5]]}
    problem(
        http.post(moves_url(game), headers=auth(token), json={"seq": 0, "move": free}),
        422,
        "free-throw-not-allowed",
    )
    place = {"type": "place", "die": 3}
    problem(
        http.post(moves_url(game), headers=auth(token), json={"seq": 0, "move": place}),
        422,
        "unknown-move",
        "move.type",
    )
    problem(
        http.post(
            moves_url(game),
            headers=auth(token),
            json={"seq": 0, "move": {"type": "mark", "fifth": 9, "pairs": [[1, 1], [1, 1]]}},
        ),
        400,
    )
    problem(
        http.post(
            moves_url(game), headers=auth(token), json={"seq": 0, "move": {"type": "teleport"}}
        ),
        400,
    )
    problem(http.post(moves_url(game), headers=auth(token), json={"seq": 0}), 422, "move-or-moves")
    assert snapshot(http, game) == before


def test_stale_and_future_seq_are_conflicts_naming_the_current_seq(http):
    game = create(http, "chopta", 2)
    token = game["seats"][0]["token"]
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    body = problem(
        http.post(
            moves_url(game), headers=auth(token), json={"seq": 5, "move": turn["legal_moves"][0]}
        ),
        409,
        "seq-mismatch",
    )
    assert body["current_seq"] == 0 and body["field"] == "seq"


def test_not_your_turn_is_a_conflict(http):
    game = create(http, "chopta", 2)
    token = game["seats"][1]["token"]
    problem(
        http.post(
            moves_url(game),
            headers=auth(token),
            json={"seq": 0, "move": {"type": "place", "die": 1}},
        ),
        409,
        "not-your-turn",
    )


def test_swap_rule_is_named(http):
    game = create(http, "chopta", 2)
    token = game["seats"][0]["token"]
    pool = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()["view"]["you"]
    die = pool["pool"][0]
    take = die  # a die never takes its own value
    body = problem(
        http.post(
            moves_url(game),
            headers=auth(token),
            json={"seq": 0, "move": {"type": "swap", "die": die, "opponent": 1, "take": take}},
        ),
        422,
    )
    assert body["code"] in {"swap-not-allowed"}


def test_score_calculator_bad_input(http):
    problem(http.post("/v1/rulesets/choice/score", json={"area": [1, 2]}), 422, "marks-required")
    problem(http.post("/v1/rulesets/chopta/score", json={"marks": {}}), 422, "area-required")
    problem(http.post("/v1/rulesets/choice/score", json={"marks": {"13": 1}}), 400)
    problem(http.post("/v1/rulesets/chopta/score", json={"area": [7]}), 400)
    missing = http.post("/v1/rulesets/poker/score", json={"marks": {}})
    problem(missing, 404, "ruleset-not-found", "ruleset_id")
