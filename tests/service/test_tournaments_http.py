"""Tournaments through real HTTP: every format, a bot that stops answering, ratings."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import httpx
import pytest
from helpers import referee_leftovers

sys.path.insert(0, str(Path(__file__).parents[2] / "clients" / "python"))
from referee_client import Client, run_entrant

from referee.bots import get_bot


def as_choose(bot):
    return lambda turn: bot({"legal_moves": turn.legal_moves, "view": turn.view})


def run_tournament(url, spec, bots):
    """Register every entrant, then play each (a None bot never answers) in a thread."""
    with Client(url) as client:
        tournament = client.create_tournament(spec)
        entrants = [client.register(tournament["id"], name) for name, _ in bots]
    threads = [
        threading.Thread(target=run_entrant, args=(url, e.token, as_choose(bot)), daemon=True)
        for e, (_, bot) in zip(entrants, bots, strict=True)
        if bot is not None
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
        assert not thread.is_alive(), "an entrant did not finish"
    with Client(url) as client:
        return client.tournament(tournament["id"])


@pytest.mark.parametrize(
    ("spec", "games"),
    [
        ({"ruleset": "choice", "format": "round-robin", "entrants": 4, "deadline_s": 0}, 6),
        ({"ruleset": "choice-specials", "format": "gauntlet", "entrants": 4, "deadline_s": 0}, 3),
        (
            {
                "ruleset": "chopta",
                "format": "swiss",
                "entrants": 4,
                "rounds": 2,
                "deadline_s": 0,
                "options": {"target": 15},
            },
            4,
        ),
    ],
)
def test_a_full_tournament_of_each_format(server, spec, games):
    ruleset = spec["ruleset"]
    bots = [
        (f"{name}-{i}", get_bot(ruleset, name, i))
        for i, name in enumerate(["random", "greedy", "strong", "random"])
    ]
    final = run_tournament(server.url, spec, bots)
    assert final["status"] == "finished"
    played = [t for r in final["rounds"] for t in r]
    assert len(played) == games and all(t["result"] for t in played)
    standings = final["standings"]
    assert sorted(s["name"] for s in standings) == sorted(name for name, _ in bots)
    assert sum(s["games"] for s in standings) == games * 2
    # duplicate format: the tables of a dice group share the dice and never an entrant;
    # round-robin and swiss rounds are one group each, every gauntlet table its own
    with httpx.Client(base_url=server.url) as http:
        for tables in final["rounds"]:
            seated = [e for t in tables for e in t["entrants"]]
            groups = {t["group"] for t in tables}
            if spec["format"] == "gauntlet":
                assert len(groups) == len(tables)
            else:
                assert groups == {0} and len(seated) == len(set(seated))
            for group in groups:
                commitments = {
                    http.get(f"/v1/games/{t['game_id']}").json()["commitment"]
                    for t in tables
                    if t["group"] == group
                }
                assert len(commitments) == 1
            everyone = {http.get(f"/v1/games/{t['game_id']}").json()["commitment"] for t in tables}
            assert len(everyone) == len(groups)


def test_a_bot_that_stops_answering_is_timed_out_and_the_tournament_finishes(server):
    spec = {
        "ruleset": "chopta",
        "format": "round-robin",
        "entrants": 3,
        "deadline_s": 0.2,
        "options": {"target": 8},
    }
    bots = [
        ("steady", get_bot("chopta", "greedy")),
        ("silent", None),
        ("steady-too", get_bot("chopta", "random", 3)),
    ]
    final = run_tournament(server.url, spec, bots)
    assert final["status"] == "finished"
    with httpx.Client(base_url=server.url) as http:
        silent_games = [t for r in final["rounds"] for t in r if 1 in t["entrants"]]
        for table in silent_games:
            view = http.get(f"/v1/games/{table['game_id']}").json()
            assert view["seats"][table["entrants"].index(1)]["retired"]


def test_ratings_order_random_greedy_strong_after_enough_choice_games(server):
    spec = {
        "ruleset": "choice",
        "format": "round-robin",
        "entrants": 3,
        "table_size": 3,
        "games_per_pairing": 10,
        "deadline_s": 0,
        "seed": "5eed" * 16,
    }
    bots = [
        ("random", get_bot("choice", "random", 1)),
        ("greedy", get_bot("choice", "greedy")),
        ("strong", get_bot("choice", "strong")),
    ]
    final = run_tournament(server.url, spec, bots)
    order = [s["name"] for s in final["standings"]]
    assert order == ["strong", "greedy", "random"], final["standings"]
    assert all(s["sigma"] < 8.333 for s in final["standings"])


def test_tournament_bad_input(http):
    reply = http.post(
        "/v1/tournaments", json={"ruleset": "chopta", "format": "swiss", "table_size": 3}
    )
    assert reply.status_code == 422 and reply.json()["code"] == "invalid-tournament"
    assert reply.json()["field"] == "table_size"
    reply = http.post("/v1/tournaments", json={"ruleset": "poker"})
    assert reply.status_code == 422 and reply.json()["code"] == "unknown-ruleset"
    assert http.get("/v1/tournaments/0123456789abcdef").status_code == 404
    assert http.get("/v1/me/next", headers={"Authorization": "Bearer nope"}).status_code == 403


def test_entrant_names_are_unique_within_a_tournament_whatever_their_case(http):
    """ "Ann", "ann", "ＡＮＮ" and "  Ann  " all entered one tournament, shown as two Anns
    and an ann in its standings: one could pass for another. The first one keeps the name;
    the others are 409 ``entrant-name-taken`` naming the field, and nothing is registered."""
    made = http.post("/v1/tournaments", json={"ruleset": "choice", "entrants": 4}).json()
    path = f"/v1/tournaments/{made['id']}/entrants"
    assert http.post(path, json={"name": "Ann"}).status_code == 201
    for alike in ("ann", "\uff21\uff2e\uff2e", "  Ann  "):
        reply = http.post(path, json={"name": alike})
        assert reply.status_code == 409, (alike, reply.text)
        assert reply.json()["code"] == "entrant-name-taken" and reply.json()["field"] == "name"
    assert http.post(path, json={"name": "Anne"}).status_code == 201
    shown = http.get(f"/v1/tournaments/{made['id']}").json()["entrants"]
    assert [e if isinstance(e, str) else e["name"] for e in shown] == ["Ann", "Anne"]


def test_referee_tournament_command_prints_standings_as_json(short_tmp):
    """`referee tournament` on its own Valkey removes that Valkey's data when it ends."""
    import json
    import os
    import subprocess

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "tournament",
            "--ruleset",
            "chopta",
            "--format",
            "gauntlet",
            "--games-per-pairing",
            "1",
            "--options",
            '{"target": 10}',
            "--deadline",
            "0",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=Path(__file__).parents[2],
        env={**os.environ, "TMPDIR": str(short_tmp)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert referee_leftovers(short_tmp) == []
    standings = json.loads(result.stdout.strip().splitlines()[-1])["standings"]
    assert sorted(s["name"] for s in standings) == ["0-random", "1-greedy", "2-strong"]
    assert sum(s["games"] for s in standings) == 4  # entrant 0 meets the two others


def test_tournaments_are_listed_newest_first_a_page_at_a_time(server, redis_client):
    http = httpx.Client(base_url=server.url)
    made = []
    for code in (None, "s3cret", None, None, None):
        body = {"ruleset": "chopta", "entrants": 2, **({"invite_code": code} if code else {})}
        reply = http.post("/v1/tournaments", json=body)
        assert reply.status_code == 201, reply.text
        made.append(reply.json()["id"])
    # one of them expires: the listing drops it from the index when it meets it
    redis_client.delete(f"{{tournament:{made[2]}}}:doc")
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"before": cursor} if cursor else {})}
        page = http.get("/v1/tournaments", params=params)
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["tournaments"]) <= 2
        seen += body["tournaments"]
        pages += 1
        cursor = body["next"]
        if cursor is None:
            break
    ours = [t for t in seen if t["id"] in made]
    assert [t["id"] for t in ours] == [made[4], made[3], made[1], made[0]]
    assert [t["invite_only"] for t in ours] == [False, False, True, False]
    assert all(t["status"] == "registering" and t["entrants"] == 0 for t in ours)
    assert redis_client.zscore("tournaments", made[2]) is None
    created = [t["created"] for t in seen]
    assert created == sorted(created, reverse=True) and pages >= 2
    bad = http.get("/v1/tournaments", params={"before": "soon"})
    assert bad.status_code == 400 and bad.json()["field"] == "before"
    assert http.get("/v1/tournaments", params={"limit": 0}).status_code == 400


def test_referee_bot_enters_a_reference_bot_in_an_existing_tournament(server):
    import subprocess

    http = httpx.Client(base_url=server.url)
    tournament = http.post(
        "/v1/tournaments",
        json={"ruleset": "chopta", "entrants": 2, "deadline_s": 0, "options": {"target": 10}},
    ).json()["id"]
    tokens = [
        http.post(f"/v1/tournaments/{tournament}/entrants", json={"name": n}).json()["token"]
        for n in ("house-a", "house-b")
    ]
    bots = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "referee.cli",
                "bot",
                "--url",
                server.url,
                "--entrant-token",
                token,
                "--bot",
                bot,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for token, bot in zip(tokens, ["strong", "random"], strict=True)
    ]
    for bot in bots:
        _, err = bot.communicate(timeout=120)
        assert bot.returncode == 0, err
        assert "the tournament is over" in err
    view = http.get(f"/v1/tournaments/{tournament}").json()
    assert view["status"] == "finished" and [s["games"] for s in view["standings"]] == [1, 1]
