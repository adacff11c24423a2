"""Fair play through real HTTP: what a cheating bot could read before it should.

Each test reads the API as any other party can (no token, or its own token) and checks what
must stay hidden: a seat's undisclosed decisions, the dice of tables still playing, seeds,
tokens at rest, and the server's own capacity.
"""

from __future__ import annotations

import signal
import subprocess
import time

import httpx
import msgspec
import psutil
import pytest
from helpers import auth, create, start_tournament

from referee.games import verify
from referee.tools.launch import start_referee


def _turn(http: httpx.Client, game_id: str, token: str) -> dict:
    reply = http.get(f"/v1/games/{game_id}/turn", headers=auth(token))
    assert reply.status_code == 200, reply.text
    return reply.json()


def _play_table(http: httpx.Client, game_id: str, tokens: list[str]) -> None:
    """Every seat plays its first legal move until the game is over (seat tokens only)."""
    for _ in range(5000):
        turns = [_turn(http, game_id, token) for token in tokens]
        if all(t["status"] == "finished" for t in turns):
            return
        for token, turn in zip(tokens, turns, strict=True):
            if turn["status"] == "your_turn":
                body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
                reply = http.post(f"/v1/games/{game_id}/moves", headers=auth(token), json=body)
                assert reply.status_code == 200, reply.text
    raise AssertionError("the game did not finish")


# -- 1. the record of a running game ------------------------------------------------------------


def test_a_running_games_record_shows_no_decision_its_view_and_events_hide(http):
    game = create(http, "choice", 2, options={"schedule": [3]})
    url, (first, second) = f"/v1/games/{game['id']}", (s["token"] for s in game["seats"])
    turn = _turn(http, game["id"], first)
    move = turn["legal_moves"][-1]
    untouched = http.get(f"{url}/record").json()
    reply = http.post(f"{url}/moves", headers=auth(first), json={"seq": 0, "move": move})
    assert reply.status_code == 200, reply.text
    record = http.get(f"{url}/record")
    assert record.status_code == 200
    # the chain shown is the one from before the hidden decision: it did not move in public
    assert record.json()["decisions"] == [] and record.json()["chain"] == untouched["chain"]
    assert untouched["chain"] is not None
    public = http.get(url).json()
    assert public["seats"][0]["marks"] == public["seats"][1]["marks"]  # nothing marked yet
    assert msgspec.json.encode(move) not in record.content + http.get(url).content
    # seat 0 finishes the postal round, seat 1 plays its own: everything is revealed at once
    _play_round = [(first, 1), (first, 2), (second, 0), (second, 1), (second, 2)]
    for token, seq in _play_round:
        turn = _turn(http, game["id"], token)
        body = {"seq": seq, "move": turn["legal_moves"][0]}
        assert http.post(f"{url}/moves", headers=auth(token), json=body).status_code == 200
    record = http.get(f"{url}/record").json()
    assert [(d["seat"], d["seq"]) for d in record["decisions"]] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 1),
        (1, 2),
    ]
    assert record["decisions"][0]["moves"] == [move] and record["chain"] is not None


# -- 2. tables dealt the same dice ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "options"),
    [("chopta", {"target": 10}), ("choice", {"schedule": [3]})],
    ids=["chopta", "choice-postal"],
)
def test_tables_dealt_the_same_dice_share_no_entrant_and_stay_sealed_until_all_are_over(
    http, ruleset, options
):
    spec = {"ruleset": ruleset, "format": "round-robin", "deadline_s": 0, "options": options}
    tournament_id, tokens = start_tournament(http, {**spec, "entrants": 4})
    view = http.get(f"/v1/tournaments/{tournament_id}").json()
    first, second = view["rounds"][0]
    assert not set(first["entrants"]) & set(second["entrants"])
    a, b = first["game_id"], second["game_id"]
    a_tokens = [tokens[e] for e in first["entrants"]]
    b_tokens = [tokens[e] for e in second["entrants"]]
    # still duplicate dice: seat 0 of either table holds what seat 0 of the other holds
    a_view, b_view = (_turn(http, g, t[0])["view"] for g, t in ((a, a_tokens), (b, b_tokens)))
    if ruleset == "chopta":
        assert a_view["you"]["pool"] == b_view["you"]["pool"]
    else:
        assert a_view["rolls"] == b_view["rolls"]

    _play_table(http, a, a_tokens)
    sealed = http.get(f"/v1/games/{a}")
    assert sealed.status_code == 200
    shown = sealed.json()
    assert shown["sealed"] is True and shown["status"] == "finished"
    assert not {"seed", "rolls", "round", "chain"} & shown.keys()
    for path in (
        "/v1/games/{}/record",
        "/v1/games/{}/events",
        "/v1/games/{}/replay",
        "/games/{}/report",
        "/games/{}/report.txt",
    ):
        refused = http.get(path.format(a))
        assert refused.status_code == 409, refused.text
        assert refused.json()["code"] == "game-sealed"
    assert all(
        t["result"] is None
        for t in http.get(f"/v1/tournaments/{tournament_id}").json()["rounds"][0]
    )

    _play_table(http, b, b_tokens)
    record = http.get(f"/v1/games/{a}/record").json()
    assert record["seed"] is not None and verify(record).ok
    assert record["seed"] == http.get(f"/v1/games/{b}/record").json()["seed"]
    with http.stream("GET", f"/v1/games/{a}/events") as stream:
        text = "".join(stream.iter_text())
    assert record["seed"] in text.split("event: game_over", 1)[1]
    results = http.get(f"/v1/tournaments/{tournament_id}").json()["rounds"][0]
    assert all(t["result"] is not None for t in results)


def test_every_round_robin_and_swiss_round_seats_each_entrant_once(http):
    for spec in (
        {"ruleset": "choice", "format": "round-robin", "entrants": 6, "games_per_pairing": 2},
        {"ruleset": "chopta", "format": "round-robin", "entrants": 6, "table_size": 3},
        {"ruleset": "chopta", "format": "swiss", "entrants": 7, "rounds": 3},
    ):
        created = http.post("/v1/tournaments", json=spec).json()
        for i in range(spec["entrants"]):
            http.post(f"/v1/tournaments/{created['id']}/entrants", json={"name": f"e{i}"})
        view = http.get(f"/v1/tournaments/{created['id']}").json()
        seated = [e for table in view["rounds"][0] for e in table["entrants"]]
        assert len(seated) == len(set(seated)), spec


# -- 3. secrets at rest ----------------------------------------------------------------------------


def test_a_tournament_stores_no_token_in_clear(http, redis_client):
    spec = {"ruleset": "chopta", "format": "round-robin", "deadline_s": 0}
    tournament_id, tokens = start_tournament(http, {**spec, "entrants": 2})
    step = http.get("/v1/me/next", headers=auth(tokens[0])).json()
    assert step["status"] == "your_turn"
    move = step["turn"]["legal_moves"][0]
    reply = http.post(
        f"/v1/games/{step['game_id']}/moves",
        headers=auth(step["seat_token"]),
        json={"seq": step["turn"]["seq"], "move": move},
    )
    assert reply.status_code == 200, reply.text
    stored = b"".join(
        redis_client.hget(key, "blob") or b""
        for key in (f"{{tournament:{tournament_id}}}:doc", f"{{game:{step['game_id']}}}:doc")
    )
    for token in [*tokens, step["seat_token"]]:
        secret = token.split(".", 1)[1].encode()
        assert secret not in stored


def _serve_embedded(tmp_path, *flags: str) -> tuple[subprocess.Popen, str]:
    """``referee serve`` on its own embedded Valkey, data in ``tmp_path``."""
    env = {"REFEREE_DATA_DIR": str(tmp_path / "data")}
    # its log lines (uvicorn's format, on stderr) are read from the same pipe as its output
    return start_referee(
        None, env=env, args=flags, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


def _stop(process: subprocess.Popen) -> list[psutil.Process]:
    children = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=15)
    finally:
        for child in children:
            if child.is_running():
                child.kill()
    return children


def test_the_embedded_store_listens_on_an_owner_only_socket_and_no_port(tmp_path):
    process, url = _serve_embedded(tmp_path)
    try:
        game = httpx.post(f"{url}/v1/games", json={"ruleset": "choice", "seats": [{"name": "a"}]})
        assert game.status_code == 201
        (valkey,) = [p for p in psutil.Process(process.pid).children() if "valkey" in p.name()]
        connections = getattr(valkey, "net_connections", None) or valkey.connections
        assert connections(kind="inet") == []
        socket_path = tmp_path / "data" / "valkey.sock"
        assert socket_path.stat().st_mode & 0o077 == 0
        assert (tmp_path / "data").stat().st_mode & 0o077 == 0
    finally:
        _stop(process)


def test_the_embedded_store_opens_a_port_only_by_flag_and_behind_a_password(tmp_path):
    import redis

    process, url = _serve_embedded(tmp_path, "--embedded-tcp")
    try:
        line = process.stdout.readline()
        while "embedded Valkey at" not in line:
            assert line, "the referee said nothing of its embedded Valkey"
            line = process.stdout.readline()
        # uvicorn's format; logged whatever the level, as the password is shown only here
        assert line.startswith("WARNING:  embedded Valkey at ")
        tcp = line.split(" and ", 1)[1].split(",", 1)[0]
        assert tcp.startswith("redis://:") and "@127.0.0.1:" in tcp
        port = int(tcp.rsplit(":", 1)[1])
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=port, protocol=2).get("x")
        assert redis.Redis.from_url(tcp).ping()
        assert httpx.get(f"{url}/readyz").status_code == 200
    finally:
        _stop(process)


# -- 4. one request cannot exhaust the server ------------------------------------------------


@pytest.mark.parametrize(
    ("entrants", "table_size", "games"),
    [(64, 8, "4,426,165,368"), (20, 5, "15,504")],
)
def test_a_schedule_past_the_cap_is_refused_at_once(http, entrants, table_size, games):
    started = time.monotonic()
    reply = http.post(
        "/v1/tournaments",
        json={"ruleset": "chopta", "entrants": entrants, "table_size": table_size},
    )
    assert time.monotonic() - started < 2
    assert reply.status_code == 422
    problem = reply.json()
    assert problem["field"] == "entrants"
    assert f"{games} games" in problem["detail"] and "4,096" in problem["detail"]


def test_a_large_tournament_creates_one_bounded_round_at_a_time(http, redis_client):
    games_before = sum(1 for _ in redis_client.scan_iter("{game:*}:doc", count=1000))
    spec = {"ruleset": "choice", "format": "round-robin", "deadline_s": 0}
    tournament_id, _ = start_tournament(http, {**spec, "entrants": 64})
    games_after = sum(1 for _ in redis_client.scan_iter("{game:*}:doc", count=1000))
    assert games_after - games_before == 32
    view = http.get(f"/v1/tournaments/{tournament_id}")
    assert len(view.json()["rounds"]) == 1 and len(view.json()["rounds"][0]) == 32
    assert len(view.content) < 20_000


# -- 5. records that prove the game ------------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "options"), [("chopta", {"target": 10}), ("choice", {"schedule": [2]})]
)
def test_a_record_verifies_whole_or_as_a_prefix_against_the_chain_the_referee_published(
    http, ruleset, options
):
    game = create(http, ruleset, 2, options=options)
    url, tokens = f"/v1/games/{game['id']}", [s["token"] for s in game["seats"]]
    for _ in range(5):  # a few decisions: CHOICE's last one leaves a postal round half told
        for token in tokens:
            turn = _turn(http, game["id"], token)
            if turn["status"] == "your_turn":
                body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
                assert http.post(f"{url}/moves", headers=auth(token), json=body).status_code == 200
                break
    early = http.get(f"{url}/record").json()
    assert early["finished"] is False and early["seed"] is None and early["decisions"]
    _play_table(http, game["id"], tokens)
    final = http.get(f"{url}/record").json()
    published = http.get(url).json()["chain"]
    assert final["chain"] == published
    assert verify(final, chain=published).ok
    report = verify(early, final["seed"])
    assert report.ok, report.problems
    assert any("prefix" in note for note in report.notes)
    final["decisions"][1]["at"] += 1
    assert not verify(final).ok
