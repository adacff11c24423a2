"""Full games, retries, concurrency, auth and secrecy through real HTTP."""

from __future__ import annotations

import json
import random
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import msgspec
import pytest
from helpers import auth, create, play_out

import referee
from referee.games import verify
from referee.rulesets.choice.rounds import round_moves


@pytest.mark.parametrize(
    ("ruleset", "seats", "options"),
    [
        ("choice", 2, {}),
        ("choice", 1, {"schedule": [4, 4, 4, 3, 3, 3, 2, 2, 2, 1]}),
        ("choice-specials", 3, {"schedule": [2]}),
        ("chopta", 3, {"dice_per_turn": 2, "bonus": True, "face_value": True, "target": 40}),
        ("chopta", 2, {"target": 1000, "max_rounds": 2}),
    ],
)
def test_a_full_game_through_http_verifies(http, ruleset, seats, options):
    game = create(http, ruleset, seats, options)
    assert len(game["commitment"]) == 64 and all(s["token"] for s in game["seats"])
    final = play_out(http, game, random.Random(seats))
    assert final["status"] == "finished" and final["ranking"] and final["seed"]
    record = http.get(f"/v1/games/{game['id']}/record")
    assert record.status_code == 200
    body = record.json()
    assert body["seed"] == final["seed"] and body["finished"]
    assert verify(record.content).ok
    assert not any(s["token"] in record.text for s in game["seats"])


def test_postal_batch_in_one_submission(http):
    game = create(http, "choice", 1, {"schedule": [2]})
    token = game["seats"][0]["token"]
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    rolls = turn["view"]["rolls"]
    assert len(rolls) == 2
    first = turn["legal_moves"][0]
    # the second roll's legal moves follow the first decision: one fifth-die value taken of
    # three, so no slot is forced yet, and every partition of the roll is a legal mark
    assert turn["view"]["you"]["sheet"]["fifth_dice"] == []
    second = msgspec.to_builtins(round_moves(tuple(sorted(rolls[1])), None)[0])
    reply = http.post(
        f"/v1/games/{game['id']}/moves",
        headers=auth(token),
        json={"seq": 0, "moves": [first, second]},
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["next_seq"] == 1
    assert http.get(f"/v1/games/{game['id']}").json()["batch"] == 1


def test_a_retry_returns_the_same_result(http):
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
    first = http.post(f"/v1/games/{game['id']}/moves", headers=auth(token), json=body)
    again = http.post(f"/v1/games/{game['id']}/moves", headers=auth(token), json=body)
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    other = {"seq": turn["seq"], "move": turn["legal_moves"][-1]}
    if other != body:
        conflict = http.post(f"/v1/games/{game['id']}/moves", headers=auth(token), json=other)
        assert conflict.status_code == 409
        assert conflict.json()["code"] == "seq-already-decided"
        assert conflict.json()["current_seq"] == 1
    # seat 0's decision stays hidden until seat 1 has decided the same roll
    assert http.get(f"/v1/games/{game['id']}/record").json()["decisions"] == []
    other_token = game["seats"][1]["token"]
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(other_token)).json()
    body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
    assert http.post(f"/v1/games/{game['id']}/moves", headers=auth(other_token), json=body)
    record = http.get(f"/v1/games/{game['id']}/record").json()
    assert [(d["seat"], d["seq"]) for d in record["decisions"]] == [(0, 0), (1, 0)]


def test_fifty_concurrent_identical_submissions_apply_once(server):
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = create(http, "chopta", 2)
        token = game["seats"][0]["token"]
        turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}

    def submit(_):
        with httpx.Client(base_url=server.url, timeout=60) as client:
            return client.post(f"/v1/games/{game['id']}/moves", headers=auth(token), json=body)

    with ThreadPoolExecutor(max_workers=50) as pool:
        replies = list(pool.map(submit, range(50)))
    assert [r.status_code for r in replies] == [200] * 50
    assert len({r.text for r in replies}) == 1
    with httpx.Client(base_url=server.url) as http:
        record = http.get(f"/v1/games/{game['id']}/record").json()
    assert len(record["decisions"]) == 1  # CHOPTA: a die played is public at once


def test_tokens_act_only_for_their_seat_in_their_game(http):
    game = create(http, "choice", 2)
    other = create(http, "choice", 1)
    url = f"/v1/games/{game['id']}"
    assert http.get(url + "/turn").status_code == 401
    wrong = http.get(url + "/turn", headers=auth(other["seats"][0]["token"]))
    assert wrong.status_code == 403
    assert wrong.headers["content-type"].startswith("application/problem+json")
    assert wrong.json()["code"] == "forbidden"
    reply = http.post(
        url + "/moves",
        headers=auth("nonsense"),
        json={"seq": 0, "move": {"type": "mark", "fifth": 1, "pairs": [[1, 1], [1, 1]]}},
    )
    assert reply.status_code == 403


def test_no_one_sees_a_hidden_pool_or_an_undisclosed_decision(http):
    game = create(http, "chopta", 3)
    url = f"/v1/games/{game['id']}"
    tokens = [s["token"] for s in game["seats"]]
    views = [http.get(url + "/turn", headers=auth(t)).json()["view"] for t in tokens]
    pools = [v["you"]["pool"] for v in views]
    for seat, view in enumerate(views):
        text = json.dumps(view)
        assert text.count('"pool"') == 1 and view["you"]["seat"] == seat
    public = http.get(url).text
    assert '"pool"' not in public
    for seat, pool in enumerate(pools):
        if pools.count(pool) > 1:
            continue  # two seats dealt the same dice (1 game in ~300): nothing to tell apart
        others = [json.dumps(v) for i, v in enumerate(views) if i != seat]
        assert all(f'"pool": {json.dumps(pool)}' not in text for text in others)
    choice = create(http, "choice", 2)
    curl = f"/v1/games/{choice['id']}"
    t0, t1 = (s["token"] for s in choice["seats"])
    turn = http.get(curl + "/turn", headers=auth(t0)).json()
    move = turn["legal_moves"][-1]
    assert (
        http.post(curl + "/moves", headers=auth(t0), json={"seq": 0, "move": move}).status_code
        == 200
    )
    seen_by_other = http.get(curl + "/turn", headers=auth(t1)).json()
    spectator = http.get(curl).json()
    for view in (seen_by_other["view"], spectator):
        assert all(sum(s["marks"].values()) == 0 for s in view["seats"])
        assert json.dumps(move) not in json.dumps(view)
    assert seen_by_other["view"]["you"]["decisions"] == []
    mine = http.get(curl + "/turn", headers=auth(t0)).json()
    assert mine["status"] == "waiting" and mine["view"]["you"]["decisions"] == [move]


def test_events_stream_is_resumable_and_keeps_secrets(http, server):
    game = create(http, "chopta", 2, {"target": 5})
    play_out(http, game)
    url = f"{server.url}/v1/games/{game['id']}/events"
    with httpx.stream("GET", url, timeout=10) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        text = "".join(reply.iter_text())
    ids = [line[4:] for line in text.splitlines() if line.startswith("id: ")]
    assert len(ids) > 10 and "event: game_over" in text
    # pools appear only in round_over events, after the round
    for block in text.split("\r\n\r\n"):
        if '"pool"' in block or '"pools"' in block:
            assert "event: round_over" in block
    with httpx.stream("GET", url, headers={"Last-Event-ID": ids[-3]}, timeout=10) as reply:
        resumed = [line[4:] for line in reply.iter_lines() if line.startswith("id: ")]
    assert resumed == ids[-2:]


def test_a_live_stream_follows_the_game_as_it_is_played(http, server):
    """Opened before the first decision, the stream tells each one as it is committed (a
    missed one would leave the stream silent past the client's 10 s read timeout)."""
    game = create(http, "choice", 2)
    url = f"{server.url}/v1/games/{game['id']}/events"

    def listen() -> str:
        with httpx.stream("GET", url, timeout=10) as reply:
            return "".join(reply.iter_text())

    with ThreadPoolExecutor(1) as pool:
        streamed = pool.submit(listen)
        time.sleep(0.3)
        play_out(http, game)
        text = streamed.result(timeout=60)
    record = http.get(f"/v1/games/{game['id']}/record").json()
    decided = text.count("event: decision\r\n")
    assert decided == len(record["decisions"]) > 0
    assert text.count("event: game_over") == 1


@pytest.mark.parametrize("ruleset", ["choice", "chopta"])
def test_the_stream_ends_with_one_game_over_that_reveals_the_seed(http, server, ruleset):
    game = create(http, ruleset, 2, {"target": 5} if ruleset == "chopta" else {})
    play_out(http, game)
    with httpx.stream("GET", f"{server.url}/v1/games/{game['id']}/events", timeout=10) as reply:
        blocks = "".join(reply.iter_text()).strip().split("\r\n\r\n")
    ends = [block for block in blocks if "event: game_over" in block]
    assert len(ends) == 1 and ends[0] == blocks[-1]
    data = json.loads(next(line[6:] for line in ends[0].splitlines() if line.startswith("data: ")))
    record = http.get(f"/v1/games/{game['id']}/record").json()
    assert data["seed"] == record["seed"] and data["ranking"] == record["ranking"]


def test_open_seats_are_claimed_and_the_game_starts_when_full(http):
    reply = http.post(
        "/v1/games", json={"ruleset": "chopta", "seats": [{"name": "host"}, {}], "deadline_s": 0}
    )
    game = reply.json()
    assert game["status"] == "waiting" and game["seats"][1]["token"] is None
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(game["seats"][0]["token"]))
    assert turn.json()["status"] == "waiting"
    claim = http.post(
        f"/v1/games/{game['id']}/seats", json={"name": "guest", "client_seed": "guest-luck"}
    )
    assert claim.status_code == 201 and claim.json()["seat"] == 1
    public = http.get(f"/v1/games/{game['id']}").json()
    assert public["status"] == "running" and public["seats"][1]["name"] == "guest"
    full = http.post(f"/v1/games/{game['id']}/seats", json={"name": "late"})
    assert full.status_code == 409 and full.json()["code"] == "no-open-seat"
    game["seats"][1]["token"] = claim.json()["token"]
    play_out(http, game)
    record = http.get(f"/v1/games/{game['id']}/record")
    assert record.json()["client_seeds"] == ["guest-luck"] and verify(record.content).ok


def test_score_calculator(http):
    choice = http.post(
        "/v1/rulesets/choice/score",
        json={"marks": {"2": 4, "4": 6, "5": 5, "6": 6, "8": 9, "9": 7, "10": 9}},
    )
    assert choice.status_code == 200 and choice.json()["total"] == 400
    assert choice.json()["plus"] == 600 and choice.json()["minus"] == 200
    chopta = http.post(
        "/v1/rulesets/chopta/score",
        json={"area": [1, 2, 3, 4], "options": {"bonus": False, "face_value": False}},
    )
    assert chopta.json()["total"] == 4
    assert chopta.json()["groups"] == [{"kind": "chain", "dice": [1, 2, 3, 4], "points": 4}]
    assert (
        http.post(
            "/v1/rulesets/chopta/score", json={"area": [2] * 5, "options": {"bonus": True}}
        ).json()["total"]
        == 7
    )
    assert http.post("/v1/rulesets/nope/score", json={"marks": {}}).status_code == 404


def test_rulesets_list_options_and_limits(http):
    rulesets = {r["id"]: r for r in http.get("/v1/rulesets").json()}
    assert set(rulesets) == {"choice", "choice-specials", "chopta"}
    assert (rulesets["chopta"]["min_seats"], rulesets["chopta"]["max_seats"]) == (2, 8)
    options = {o["name"]: o for o in rulesets["chopta"]["options"]}
    assert options["target"]["default"] == 50 and options["dice_per_turn"]["schema"]["maximum"] == 2
    assert "suppen_kasper" in rulesets["choice-specials"]["move_types"]
    assert "pass" in rulesets["choice"]["move_types"]
    own = (rulesets["choice"]["distribution"], rulesets["choice"]["version"])
    assert own == ("referee", referee.__version__)


def test_health(http):
    assert http.get("/healthz").json() == {"status": "ok"}
    assert http.get("/readyz").json() == {"status": "ready"}


def test_long_poll_returns_when_the_turn_comes(server):
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = create(http, "chopta", 2)
        t0, t1 = (s["token"] for s in game["seats"])
        url = f"/v1/games/{game['id']}"

        def wait_for_turn():
            with httpx.Client(base_url=server.url, timeout=30) as client:
                return client.get(url + "/turn", params={"wait": 20}, headers=auth(t1)).json()

        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(wait_for_turn)
            turn = http.get(url + "/turn", headers=auth(t0)).json()
            http.post(
                url + "/moves",
                headers=auth(t0),
                json={"seq": turn["seq"], "move": turn["legal_moves"][0]},
            )
            result = waiting.result(timeout=25)
    assert result["status"] == "your_turn" and result["legal_moves"]


def test_state_in_redis_decodes(http, redis_client):
    game = create(http, "choice", 1)
    blob = redis_client.hget(f"{{game:{game['id']}}}:doc", "blob")
    from referee.core.documents import GameDoc

    doc = msgspec.msgpack.decode(blob, type=GameDoc)
    assert doc.id == game["id"] and doc.status == "running"
    assert doc.seats[0].token_hash != game["seats"][0]["token"].encode()


def test_a_finished_games_stream_ends_with_game_over_even_once_it_has_expired(
    http, server, redis_client
):
    from referee.store import GameKeys

    game = create(http, "chopta", 2, {"target": 5})
    play_out(http, game)
    url = f"{server.url}/v1/games/{game['id']}/events"
    with httpx.stream("GET", url, timeout=10) as reply:
        ids = [line[4:] for line in reply.iter_lines() if line.startswith("id: ")]
    # resuming after the last event ends at once, with the game's end again
    with httpx.stream("GET", url, headers={"Last-Event-ID": ids[-1]}, timeout=10) as reply:
        again = "".join(reply.iter_text())
    assert again.count("event: game_over") == 1 and "keep-alive" not in again
    redis_client.delete(GameKeys(game["id"]).events)  # REFEREE_EVENTS_RETENTION_S passed
    with httpx.stream("GET", url, timeout=10) as reply:
        expired = "".join(reply.iter_text())
    data = json.loads(next(line[6:] for line in expired.splitlines() if line.startswith("data: ")))
    record = http.get(f"/v1/games/{game['id']}/record").json()
    assert "event: game_over" in expired and data["seed"] == record["seed"]
