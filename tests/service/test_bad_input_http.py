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
        ({"ruleset": "choice", "seats": []}, 422, "invalid-seat-count", "seats"),
        ({"ruleset": "chopta", "seats": [{}] * 9}, 422, "invalid-seat-count", "seats"),
        ({"seats": [{"name": "a"}]}, 400, "invalid-request", "body.ruleset"),
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
    """Each ruleset's calculator takes its own body, as the contract states it (no 422)."""
    area = http.post("/v1/rulesets/choice/score", json={"area": [1, 2]})
    problem(area, 400, "invalid-request", "body.area")
    problem(http.post("/v1/rulesets/chopta/score", json={"marks": {}}), 400, "invalid-request")
    problem(http.post("/v1/rulesets/choice-specials/score", json={}), 400, "invalid-request")
    problem(http.post("/v1/rulesets/choice/score", json={"marks": {"13": 1}}), 400)
    problem(http.post("/v1/rulesets/chopta/score", json={"area": [7]}), 400)
    missing = http.post("/v1/rulesets/poker/score", json={"marks": {}})
    problem(missing, 404, "ruleset-not-found", "ruleset_id")


JSON = {"content-type": "application/json"}
NOT_UTF8 = b'{"ruleset": "\xff\xfe", "seats": [{"name": "\xc3"}]}'
DEEP = b"[" * 1200 + b"]" * 1200


def _deep_in(key: str, fields: bytes = b"") -> bytes:
    return b"{" + fields + b'"' + key.encode() + b'":' + DEEP + b"}"


@pytest.mark.parametrize("kind", ["not-utf8", "deep"])
def test_a_body_not_utf8_or_nested_too_deep_is_a_400_on_every_route(http, kind):
    """msgspec raises UnicodeDecodeError and RecursionError for these, not DecodeError: each
    route, the hot one too, answers a 400 problem naming the body, and nothing is created."""
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    seat = {**JSON, **auth(token)}
    routes = [
        ("/v1/games", JSON, _deep_in("options", b'"ruleset":"choice","seats":[{"name":"a"}],')),
        (f"/v1/games/{game['id']}/seats", JSON, _deep_in("name")),
        (f"/v1/games/{game['id']}/moves", seat, _deep_in("move", b'"seq":0,')),
        ("/v1/tournaments", JSON, _deep_in("options", b'"ruleset":"choice",')),
        ("/v1/tournaments/0123456789abcdef/entrants", JSON, _deep_in("name")),
        ("/v1/rulesets/choice/score", JSON, _deep_in("marks")),
    ]
    before = http.get(f"/v1/games/{game['id']}").json()
    for path, headers, deep in routes:
        body = NOT_UTF8 if kind == "not-utf8" else deep
        reply = http.post(path, content=body, headers=headers)
        problem(reply, 400, "invalid-request", "body")
        if kind == "deep":
            problem(http.post(path, content=DEEP, headers=headers), 400, "invalid-request")
    assert http.get(f"/v1/games/{game['id']}").json() == before


CONTROL = ["a\x00b", "\x1b[31mred", "two\r\nlines", "\u202eevil", "x\u2066y", "\x85", "   "]


@pytest.mark.parametrize("name", CONTROL, ids=repr)
def test_names_with_control_line_break_or_bidi_characters_are_refused(http, name):
    """A name is shown to everyone (views, standings, logs): one that could forge a line, a
    terminal colour or reorder the text around it is refused, wherever a name comes in."""
    seats = {"ruleset": "choice", "seats": [{"name": "ok"}, {"name": name}], "deadline_s": 0}
    problem(http.post("/v1/games", json=seats), 422, "invalid-name", "seats[1].name")
    open_seat = {"ruleset": "choice", "seats": [{"name": "a"}, {}], "deadline_s": 0}
    game = http.post("/v1/games", json=open_seat).json()
    problem(http.post(f"/v1/games/{game['id']}/seats", json={"name": name}), 422, "invalid-name")
    assert not http.get(f"/v1/games/{game['id']}").json()["seats"][1]["claimed"]
    tournament = http.post("/v1/tournaments", json={"ruleset": "choice", "entrants": 2}).json()
    entrants = f"/v1/tournaments/{tournament['id']}/entrants"
    problem(http.post(entrants, json={"name": name}), 422, "invalid-name", "name")
    assert http.get(f"/v1/tournaments/{tournament['id']}").json()["entrants"] == []


INVISIBLE = ["a\u200bb", "\u2060x", "x\ufeff", "so\u00adft", "\u3164", "a\u2800", "t\U000e0041g"]


@pytest.mark.parametrize("name", INVISIBLE, ids=repr)
def test_names_with_invisible_or_format_characters_are_refused(http, name):
    """RFC 8266's Nickname profile, and blank characters refused on top of it: wherever a
    name comes in, 422 naming the field, and nothing changed."""
    seats = {"ruleset": "choice", "seats": [{"name": "ok"}, {"name": name}], "deadline_s": 0}
    problem(http.post("/v1/games", json=seats), 422, "invalid-name", "seats[1].name")
    open_seat = {"ruleset": "choice", "seats": [{"name": "a"}, {}], "deadline_s": 0}
    game = http.post("/v1/games", json=open_seat).json()
    claim = http.post(f"/v1/games/{game['id']}/seats", json={"name": name})
    problem(claim, 422, "invalid-name", "name")
    assert not http.get(f"/v1/games/{game['id']}").json()["seats"][1]["claimed"]
    tournament = http.post("/v1/tournaments", json={"ruleset": "choice", "entrants": 2}).json()
    entrants = f"/v1/tournaments/{tournament['id']}/entrants"
    problem(http.post(entrants, json={"name": name}), 422, "invalid-name", "name")
    assert http.get(f"/v1/tournaments/{tournament['id']}").json()["entrants"] == []


def test_the_normalised_name_is_what_is_stored_and_shown(http):
    body = {"ruleset": "choice", "seats": [{"name": " Ａnn  Lee "}, {}], "deadline_s": 0}
    created = http.post("/v1/games", json=body).json()
    assert created["seats"][0]["name"] == "Ann Lee"
    claimed = http.post(f"/v1/games/{created['id']}/seats", json={"name": "Zoe\u0308\u3000"})
    assert claimed.status_code == 201 and claimed.json()["name"] == "Zoë"
    seats = http.get(f"/v1/games/{created['id']}").json()["seats"]
    assert [s["name"] for s in seats] == ["Ann Lee", "Zoë"]
    tournament = http.post("/v1/tournaments", json={"ruleset": "choice", "entrants": 2}).json()
    entrants = f"/v1/tournaments/{tournament['id']}/entrants"
    registered = http.post(entrants, json={"name": "ﬁsh "})
    assert registered.status_code == 201 and registered.json()["name"] == "fish"
    assert http.get(f"/v1/tournaments/{tournament['id']}").json()["entrants"] == ["fish"]


def test_names_in_other_scripts_and_with_emoji_are_kept(http):
    """An emoji joined by U+200D (ZERO WIDTH JOINER, as in 👩‍💻) is refused: RFC 8266 allows
    the joiner only after a virama (tests/test_names.py)."""
    names = ["Zoë", "玩家", "لاعب", "👩 bot"]
    body = {"ruleset": "choice", "seats": [{"name": n} for n in names], "deadline_s": 0}
    game = http.post("/v1/games", json=body)
    assert game.status_code == 201, game.text
    assert [s["name"] for s in http.get(f"/v1/games/{game.json()['id']}").json()["seats"]] == names


def test_an_event_streams_keep_alives_are_comments_only(http, monkeypatch):
    """A keep-alive is a comment and nothing else: a ``data:`` line with it would reach a
    browser's EventSource as an empty message."""
    from referee.web import game_stream

    monkeypatch.setattr(game_stream, "KEEP_ALIVE_S", 0.2)
    game = create(http, "choice", 2)
    lines = []
    with http.stream("GET", f"/v1/games/{game['id']}/events", timeout=10) as stream:
        for line in stream.iter_lines():
            lines.append(line)
            if sum(line.startswith(":") for line in lines) >= 2:
                break
    keep_alive = lines.index(": keep-alive")
    assert lines[keep_alive + 1] == "", lines
    data = [line for line in lines if line.startswith("data:")]
    assert data and all(line != "data: " and line != "data:" for line in data), lines
