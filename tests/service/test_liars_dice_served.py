"""Liar's dice served: a referee process with its distribution installed (``liars_referee``:
its folder and a ``.dist-info`` from its pyproject.toml on the path, as in
tests/test_liars_dice_plugin.py) finds it by its entry point as it starts, lists it over HTTP
with its distribution and version, plays games of it over HTTP (raw requests, and the Python
reference client's bot loop), and runs a tournament of it whose entrants are the plug-in's
house bots (``referee bot``, each in a process that finds the plug-in by its entry point) and
the test's own bots; every record verifies. The TypeScript client, the pages and the
hidden-information differential have their own files (test_typescript_client.py,
test_pages_browser.py, test_noninterference_http.py)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import httpx
from test_liars_dice_plugin import installed  # noqa: F401  (a fixture: the plug-in registered here)

sys.path.insert(0, str(Path(__file__).parents[2] / "clients" / "python"))
from referee_client import Client, run_bot, run_entrant

from referee.bots import get_bot
from referee.games import verify


def test_an_installed_plugin_is_listed_with_its_distribution_and_version(liars_referee, tmp_path):
    with httpx.Client(base_url=liars_referee.url, timeout=30) as http:
        rulesets = http.get("/v1/rulesets")
        assert rulesets.status_code == 200, rulesets.text
        listed = {r["id"]: r for r in rulesets.json()}
        game = http.post(
            "/v1/games",
            json={"ruleset": "liars-dice", "seats": [{"name": "a"}, {"name": "b"}]},
        )
        assert game.status_code == 201, game.text
        final = _play(http, game.json(), random.Random(3))
        record = http.get(f"/v1/games/{final['id']}/record").content
    liars = listed["liars-dice"]
    assert (liars["distribution"], liars["version"]) == liars_referee.distribution
    assert liars["title"] == "Liar's dice"
    assert (liars["min_seats"], liars["max_seats"]) == (2, 8)
    assert sorted(liars["move_types"]) == ["bid", "liar"]
    options = {o["name"]: o["default"] for o in liars["options"]}
    assert options == {"dice_per_seat": 5, "bidding_rule": "reset-face"}
    assert listed["chopta"]["distribution"] == "referee"
    assert final["status"] == "finished" and sorted(final["ranking"]) in ([1, 2], [1, 1])
    saved = tmp_path / "record.json"
    saved.write_bytes(record)
    verified = subprocess.run(
        [sys.executable, "-m", "referee.cli", "verify", str(saved)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": liars_referee.path},
        timeout=60,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _play(http: httpx.Client, game: dict, rnd: random.Random) -> dict:
    """Each seat, as a bot over HTTP does: its turn, a random legal move, until the end."""
    for _ in range(500):
        public = http.get(f"/v1/games/{game['id']}").json()
        if public["status"] == "finished":
            return public
        for seat in public["to_decide"]:
            auth = {"Authorization": f"Bearer {game['seats'][seat]['token']}"}
            turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth).json()
            body = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
            reply = http.post(f"/v1/games/{game['id']}/moves", headers=auth, json=body)
            assert reply.status_code == 200, reply.text
    raise AssertionError("the game did not end")


def test_the_python_client_plays_it_with_the_house_bots(liars_referee, installed):  # noqa: F811
    """The reference client's bot loop, handed the plug-in's house bots as they are (they read
    ``turn["legal_moves"]`` and ``turn["view"]["you"]``), one thread a seat."""
    url = liars_referee.url
    names = ["strong", "greedy", "random"]
    with Client(url) as client:
        game = client.create_game(
            "liars-dice", [{"name": n} for n in names], {"dice_per_seat": 3}, deadline_s=0
        )
        finals: dict[int, object] = {}

        def seat_played_by(seat, bot) -> None:
            finals[seat.seat] = run_bot(url, seat.token, bot)

        threads = [
            threading.Thread(
                target=seat_played_by, args=(seat, get_bot("liars-dice", name, i)), daemon=True
            )
            for i, (seat, name) in enumerate(zip(game.seats, names, strict=True))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
            assert not thread.is_alive(), "a seat's bot did not finish"
        record = client.record(game.id)
    assert sorted(finals) == [0, 1, 2]
    assert all(turn.status == "finished" for turn in finals.values())
    assert record["ruleset"] == "liars-dice" and record["finished"]
    assert len(record["dice"]) == 3 and all(len(d["dice"]) == 3 for d in record["dice"])
    assert sorted(record["totals"]) == [-1, 0, 1]
    assert verify(record).ok, verify(record)
    # the turn report: its view counts no rounds, so the whole game is one, shown once over
    report = httpx.get(f"{url}/games/{game.id}/report.txt").text
    assert "Round 1" in report and "No round is over yet." not in report
    for seat, dice in zip(names, record["final"], strict=True):
        assert f"    dice      {dice['dice']}" in report.split(f"  {seat}\n", 1)[1]


def test_a_tournament_of_it_between_house_bots_and_the_tests_bots(liars_referee, installed):  # noqa: F811
    """POST /v1/tournaments of Liar's dice: two entrants are the plug-in's house bots run by
    ``referee bot`` (a process that knows the plug-in by its entry point alone), two are the
    test's random bots through the Python client; every table is played, the standings count
    every game, and every table's record verifies."""
    url = liars_referee.url
    spec = {
        "ruleset": "liars-dice",
        "format": "round-robin",
        "entrants": 4,
        "games_per_pairing": 1,
        "deadline_s": 0,
        "options": {"dice_per_seat": 2, "bidding_rule": "reset-quantity"},
    }
    with Client(url) as client:
        tournament = client.create_tournament(spec)
        entrants = [client.register(tournament["id"], n) for n in ("strong", "greedy", "r1", "r2")]
    house = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "referee.cli",
                "bot",
                "--url",
                url,
                "--bot",
                name,
                "--entrant-token",
                entrant.token,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": liars_referee.path},
        )
        for entrant, name in zip(entrants[:2], ["strong", "greedy"], strict=True)
    ]

    def random_legal(seed: int):
        rnd = random.Random(seed)
        return lambda turn: rnd.choice(turn.legal_moves)

    ours = [
        threading.Thread(target=run_entrant, args=(url, e.token, random_legal(i)), daemon=True)
        for i, e in enumerate(entrants[2:])
    ]
    for thread in ours:
        thread.start()
    for bot in house:
        _, err = bot.communicate(timeout=180)
        assert bot.returncode == 0, err[-3000:]
        assert "the tournament is over" in err
    for thread in ours:
        thread.join(timeout=60)
        assert not thread.is_alive(), "an entrant did not finish"
    with Client(url) as client:
        final = client.tournament(tournament["id"])
        tables = [table for tables in final["rounds"] for table in tables]
        records = [client.record(table["game_id"]) for table in tables]
    assert final["status"] == "finished" and final["ruleset"] == "liars-dice"
    assert len(tables) == 6 and all(table["result"] for table in tables)
    standings = final["standings"]
    assert sorted(s["name"] for s in standings) == ["greedy", "r1", "r2", "strong"]
    assert [s["games"] for s in standings] == [3, 3, 3, 3]
    assert sum(s["points"] for s in standings) == 0  # each game: +1 and -1
    for table, record in zip(tables, records, strict=True):
        assert record["options"] == spec["options"] and record["finished"]
        assert record["totals"] == table["result"]["totals"]
        assert verify(record).ok, (table["game_id"], verify(record))


def test_referee_tournament_plays_it_between_the_plugins_house_bots(liars_referee):
    """``referee tournament --ruleset liars-dice``: each house bot in a process the command
    spawns (which must load the plug-in itself to find its bots), against the referee."""
    import json

    result = subprocess.run(
        [
            *(sys.executable, "-m", "referee.cli", "tournament", "--ruleset", "liars-dice"),
            *("--url", liars_referee.url, "--games-per-pairing", "1", "--deadline", "0"),
            *("--options", '{"dice_per_seat": 2}', "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": liars_referee.path},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    final = json.loads(result.stdout.strip().splitlines()[-1])
    assert final["games"] == final["scheduled"] == 3
    standings = final["standings"]
    assert sorted(s["name"] for s in standings) == ["0-random", "1-greedy", "2-strong"]
    assert [s["games"] for s in standings] == [2, 2, 2]


def test_every_answer_of_its_games_is_typed_by_its_referees_contract(liars_referee, installed):  # noqa: F811
    """The referee that has it installed states its views in its contract (``views``): its
    seat view, public view, record and replay are the Liar's dice members of ``SeatView``,
    ``GameView``, ``GameRecord`` and ``GameReplay``, and every answer of a game of it (open
    seats, play, refusals, the end) is what that contract says, no field more."""
    from test_typed_views import Checked, _play

    with httpx.Client(base_url=liars_referee.url, timeout=30) as http:
        contract = http.get("/docs/openapi.json").json()
        schemas = contract["components"]["schemas"]
        for union, shape in [
            ("SeatView", "LiarsDiceSeatView"),
            ("GameView", "LiarsDiceGameView"),
            ("GameRecord", "LiarsDiceRecord"),
            ("GameReplay", "LiarsDiceReplay"),
        ]:
            mapping = schemas[union]["discriminator"]["mapping"]
            assert mapping["liars-dice"] == f"#/components/schemas/{shape}", union
        # no field both optional and nullable (docs/ARCHITECTURE.md)
        for shape in (
            "LiarsDiceSeatView",
            "LiarsDiceGameView",
            "LiarsDicePublicSeat",
            "SeatPublic",
        ):
            optional = set(schemas[shape]["properties"]) - set(schemas[shape]["required"])
            both = [n for n in optional if "null" in json.dumps(schemas[shape]["properties"][n])]
            assert optional and not both, (shape, both)
        api = Checked(http, contract)
        seats = [{"name": "ann"}, {}, {"name": "cy"}]
        spec = {"ruleset": "liars-dice", "seats": seats, "options": {"dice_per_seat": 2}}
        _, created = api.call("POST", "/v1/games", json={**spec, "deadline_s": 0})
        ids = {"game_id": created["id"]}
        _, waiting = api.call("GET", "/v1/games/{game_id}", ids=ids)
        assert waiting["status"] == "waiting" and "bids" not in waiting
        api.call("GET", "/v1/games/{game_id}/record", ids=ids)
        _, claimed = api.call("POST", "/v1/games/{game_id}/seats", ids=ids, json={"name": "bo"})
        tokens = [created["seats"][0]["token"], claimed["token"], created["seats"][2]["token"]]
        _, started = api.call("GET", "/v1/games/{game_id}", ids=ids)
        assert "bid" not in started and all("dice" not in s for s in started["seats"])
        # a refusal of its own, in the contract's enum of codes
        first = {"type": "liar"}
        _, turn = api.call("GET", "/v1/games/{game_id}/turn", tokens[0], ids=ids)
        assert "bid" not in turn["view"] and "call" not in turn["view"]
        status, refused = api.call(
            "POST", "/v1/games/{game_id}/moves", tokens[0], ids=ids, json={"seq": 0, "move": first}
        )
        assert (status, refused["code"]) == (422, "no-bid-to-call"), refused
        final = _play(api, created["id"], tokens, random.Random(7))
        assert final["status"] == "finished" and "turn" not in final and final["call"]
        assert all(len(s["dice"]) == 2 for s in final["seats"])
        _, record = api.call("GET", "/v1/games/{game_id}/record", ids=ids)
        assert verify(record).ok
    assert {("getGame", 200), ("getTurn", 200), ("submitMove", 422), ("getReplay", 200)} <= set(
        api.seen
    )


def test_its_refusals_have_its_codes_and_statuses_and_are_listed(liars_referee, installed):  # noqa: F811
    """A refusal of the plug-in's own is a problem whose ``type`` ends in its code, at the
    status it declares (422: it declares none); ``GET /v1/rulesets`` lists its codes with
    their status and meaning, and the contract's ``Problem.code`` enumerates them."""
    from referee.games import declared_codes, get_ruleset

    declared = declared_codes(get_ruleset("liars-dice"))
    with httpx.Client(base_url=liars_referee.url, timeout=30) as http:
        listed = {r["id"]: r for r in http.get("/v1/rulesets").json()}
        enum = http.get("/docs/openapi.json").json()["components"]["schemas"]["Problem"]
        game = http.post(
            "/v1/games",
            json={"ruleset": "liars-dice", "seats": [{"name": "a"}, {"name": "b"}]},
        ).json()
        url, (a, b) = f"/v1/games/{game['id']}/moves", [s["token"] for s in game["seats"]]

        def move(token: str, seq: int, played: dict) -> httpx.Response:
            auth = {"Authorization": f"Bearer {token}"}
            return http.post(url, headers=auth, json={"seq": seq, "move": played})

        refusals = [
            move(a, 0, {"type": "bid", "quantity": 11, "face": 2}),  # 10 dice in the game
            move(a, 0, {"type": "liar"}),
            move(a, 0, {"type": "bid", "quantity": 3, "face": 4}),  # accepted
            move(b, 0, {"type": "bid", "quantity": 2, "face": 5}),
            move(b, 0, {"type": "bid", "quantity": 3, "face": 4}),
        ]
    assert [r.status_code for r in refusals] == [422, 422, 200, 422, 422]
    problems = [r.json() for r in refusals if r.status_code != 200]
    codes = ["quantity-out-of-range", "no-bid-to-call", "bid-not-higher", "bid-not-higher"]
    assert [p["code"] for p in problems] == codes
    for reply, problem in zip([r for r in refusals if r.status_code != 200], problems, strict=True):
        assert reply.headers["content-type"].startswith("application/problem+json")
        assert problem["type"].endswith("/" + problem["code"]) and problem["status"] == 422
    assert listed["liars-dice"]["codes"] == [
        {"code": code, "status": d.status, "meaning": d.meaning} for code, d in declared.items()
    ]
    assert all(d.status == 422 for d in declared.values())
    assert listed["chopta"]["codes"] == []
    assert set(declared) <= set(enum["properties"]["code"]["enum"])
