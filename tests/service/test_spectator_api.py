"""What the spectator pages read, through real HTTP: the game listing, a finished game's
replay, the turn report (never more than the public view showed, round by round), a
tournament's ratings over rounds, and the pages themselves."""

from __future__ import annotations

import random

import pytest
from helpers import auth, create, play_out, play_tournament, start_tournament

from referee.games import verify
from referee.web.pages import report_text

RULESETS = [
    ("choice", {}),
    ("choice-specials", {"schedule": [2]}),
    ("chopta", {"target": 30}),
]


def _without(seats, *keys):
    return [{k: v for k, v in seat.items() if k not in keys} for seat in seats]


def test_games_are_listed_newest_first_a_page_at_a_time(http):
    made = [create(http, "choice", 2)["id"] for _ in range(3)]
    first = http.get("/v1/games", params={"limit": 2}).json()
    assert [g["id"] for g in first["games"]] == made[::-1][:2]
    assert first["games"][0] == {
        "id": made[2],
        "ruleset": "choice",
        "status": "running",
        "seats": ["bot0", "bot1"],
        "deadline_s": 0,
        "tournament": False,
        "tournament_id": None,
        "created": first["games"][0]["created"],
    }
    second = http.get("/v1/games", params={"limit": 2, "before": first["next"]}).json()
    assert second["games"][0]["id"] == made[0]
    assert second["games"][0]["created"] <= first["games"][1]["created"]


@pytest.mark.parametrize("before", ["soon", "1e9", "-1", "1.2.3"])
def test_a_listing_cursor_that_is_no_cursor_is_refused(http, before):
    reply = http.get("/v1/games", params={"before": before})
    assert reply.status_code == 400
    assert reply.json()["field"] == "before"


@pytest.mark.parametrize(("ruleset", "options"), RULESETS, ids=[r for r, _ in RULESETS])
def test_a_finished_game_replays_step_by_step_to_its_final_view(http, ruleset, options):
    game = create(http, ruleset, 2, options)
    refused = http.get(f"/v1/games/{game['id']}/replay")
    assert refused.status_code == 409 and refused.json()["code"] == "game-not-over"
    final = play_out(http, game, random.Random(3))
    record = http.get(f"/v1/games/{game['id']}/record").json()
    replay = http.get(f"/v1/games/{game['id']}/replay").json()
    assert replay["verified"] is True and replay["problems"] == [] and verify(record).ok
    frames = replay["frames"]
    assert [f["decision"] for f in frames] == [None, *record["decisions"]]
    assert frames[0]["view"]["status"] == "running"
    last = frames[-1]["view"]
    assert _without(last["seats"], "deadline") == _without(final["seats"], "deadline")
    assert {k: v for k, v in last.items() if k != "seats"} == {
        k: v for k, v in final.items() if k != "seats"
    }


def _decide(http, game, seat, rnd):
    token = game["seats"][seat]["token"]
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    if turn["status"] != "your_turn":
        return
    body = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
    reply = http.post(f"/v1/games/{game['id']}/moves", headers=auth(token), json=body)
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize(("ruleset", "options"), RULESETS, ids=[r for r, _ in RULESETS])
def test_the_turn_report_shows_each_round_as_the_public_view_showed_it_when_it_ended(
    http, ruleset, options
):
    """Watched from outside: the public view after every decision, kept whenever a round
    has just ended; then the report, mid-game, with a decision of the round in play made and
    not yet disclosed. Its text is exactly those rounds as those views showed them."""
    game = create(http, ruleset, 3, options)
    key = "round" if ruleset == "chopta" else "batch"
    rnd = random.Random(5)
    view = http.get(f"/v1/games/{game['id']}").json()
    starts = [view]  # the view as each round began (the one before ended)
    for _ in range(400):
        if len(starts) == 3:
            break
        assert view["status"] == "running"
        for seat in view["to_decide"]:
            _decide(http, game, seat, rnd)
            now = http.get(f"/v1/games/{game['id']}").json()
            if now[key] != view[key]:
                starts.append(now)
            view = now
    assert len(starts) == 3
    if ruleset != "chopta":  # a decision of the round in play, undisclosed
        _decide(http, game, view["to_decide"][0], rnd)
        assert http.get(f"/v1/games/{game['id']}").json()[key] == view[key]
    rounds = []
    for index in range(2):
        entry = {key: index, "seats": _without(starts[index + 1]["seats"], "decided", "deadline")}
        if key == "batch":
            entry |= {"first_roll": starts[index]["first_roll"], "rolls": starts[index]["rolls"]}
        rounds.append(entry)
    expected = report_text(
        {
            "id": game["id"],
            "ruleset": ruleset,
            "status": "running",
            "seats": ["bot0", "bot1", "bot2"],
            "rounds": rounds,
        }
    )
    text = http.get(f"/games/{game['id']}/report.txt")
    assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
    assert text.text == expected
    page = http.get(f"/games/{game['id']}/report")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Postal round 3" not in page.text and "Round 3" not in page.text


def test_a_tournament_shows_its_ratings_after_each_round(http):
    spec = {"ruleset": "chopta", "format": "round-robin", "entrants": 3, "deadline_s": 0}
    tournament_id, tokens = start_tournament(http, {**spec, "options": {"target": 8}})
    view = play_tournament(http, tournament_id, tokens)
    assert view["status"] == "finished"
    assert len(view["ratings"]) == len(view["rounds"])
    by_entrant = {s["entrant"]: s["rating"] for s in view["standings"]}
    assert view["ratings"][-1] == [by_entrant[e] for e in range(3)]


def test_the_pages_are_served_with_a_policy_that_keeps_them_on_this_origin(http):
    game = create(http, "choice", 2)
    spec = {"ruleset": "chopta", "format": "round-robin", "entrants": 2, "deadline_s": 0}
    tournament = http.post("/v1/tournaments", json=spec).json()
    pages = (
        "/",
        f"/games/{game['id']}",
        f"/games/{game['id']}/play",
        f"/tournaments/{tournament['id']}",
        f"/embed/games/{game['id']}",
        "/rulesets/choice/rules",
    )
    for path in pages:
        page = http.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "connect-src 'self'" in policy
        assert "http" not in page.text.replace("http-equiv", "")  # no address elsewhere
    for name in ("spectator.js", "play.js", "common.js", "spectator.css"):
        assert http.get(f"/static/{name}").status_code == 200
    for path in ("/games/not-an-id", "/games/not-an-id/play", "/tournaments/0123456789abcdef"):
        refused = http.get(path)
        assert refused.status_code == 404 and refused.json()["code"].endswith("-not-found")
    report = http.get(f"/games/{game['id']}/report.txt").text
    assert "No round is over yet." in report


def test_each_ruleset_serves_its_part_of_the_pages_by_name(http):
    """spectator.js and play.js import a ruleset's module from /rulesets/{id}/page.js: every
    ruleset listed has one, a module that draws its board and its picks; an id that names no
    ruleset is a 404 problem."""
    for ruleset in http.get("/v1/rulesets").json():
        module = http.get(f"/rulesets/{ruleset['id']}/page.js")
        assert module.status_code == 200, ruleset["id"]
        assert module.headers["content-type"].startswith("text/javascript")
        assert "default-src 'none'" in module.headers["content-security-policy"]
        assert "export function drawBoard(" in module.text
        assert "export function pickRows(" in module.text
    refused = http.get("/rulesets/no-such-ruleset/page.js")
    assert refused.status_code == 404 and refused.json()["code"] == "ruleset-not-found"
