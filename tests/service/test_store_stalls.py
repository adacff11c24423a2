"""A store that stalls rather than dies (Valkey stopped with SIGSTOP): every route that needs
it answers 503 with Retry-After within a bound (REFEREE_REDIS_TIMEOUT_S and a margin) instead
of hanging, an open event stream ends, /healthz still answers, and once Valkey goes on
(SIGCONT) the same referee plays on without a restart. Through real HTTP on a real Valkey."""

from __future__ import annotations

import os
import signal
import threading
import time

import httpx
import msgspec
import pytest
from helpers import auth, create, ready, wait_until

from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, start_referee

TIMEOUT_S = 1.0
#: the bound asserted: the timeout, the watchdog's tick, a second operation that fails at
#: once, and room for a loaded machine (a hang, the fault, lasts minutes)
BOUND_S = 3 * TIMEOUT_S + 2.0


@pytest.fixture
def stalled_referee(tmp_path):
    """A referee on a Valkey of its own (its pid known, so the test can stop it), its log."""
    valkey = start_embedded(tmp_path / "valkey", keep_alive=False)
    log = tmp_path / "referee.log"
    env = {**LOAD_LIMITS, "REFEREE_REDIS_TIMEOUT_S": str(TIMEOUT_S)}
    with log.open("w") as out:
        referee, url = start_referee(valkey.url, env=env, stdout=out, stderr=out)
    try:
        yield valkey, url, log
    finally:
        os.kill(valkey.pid, signal.SIGCONT)
        referee.terminate()
        referee.wait(timeout=20)
        valkey.stop()


def _timed(call) -> tuple[httpx.Response, float]:
    began = time.monotonic()
    reply = call()
    return reply, time.monotonic() - began


def _refused(reply: httpx.Response, code: str = "redis-unavailable") -> None:
    assert reply.status_code == 503, (reply.request.url, reply.status_code, reply.text)
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert reply.json()["code"] == code, reply.text
    assert int(reply.headers["retry-after"]) >= 1


def test_a_stalled_store_is_answered_503_within_its_timeout_and_play_goes_on_after(
    stalled_referee,
):
    valkey, url, log = stalled_referee
    http = httpx.Client(base_url=url, timeout=30)
    game = create(http, "choice", 2)
    game_id, token = game["id"], game["seats"][0]["token"]
    turn = http.get(f"/v1/games/{game_id}/turn", headers=auth(token)).json()
    # the other seat decides first, then long-polls for its next turn across the stall
    other = auth(game["seats"][1]["token"])
    its_turn = http.get(f"/v1/games/{game_id}/turn", headers=other).json()
    its_move = {"seq": its_turn["seq"], "move": its_turn["legal_moves"][0]}
    assert http.post(f"/v1/games/{game_id}/moves", headers=other, json=its_move).is_success
    assert http.get(f"/v1/games/{game_id}/turn", headers=other).json()["status"] == "waiting"
    tournament = http.post(
        "/v1/tournaments",
        json={"ruleset": "chopta", "format": "round-robin", "entrants": 3, "deadline_s": 0},
    )
    assert tournament.status_code == 201, tournament.text
    tournament_id = tournament.json()["id"]

    stream_ended = threading.Event()
    stream_lines: list[str] = []

    def listen() -> None:
        try:
            with httpx.stream("GET", f"{url}/v1/games/{game_id}/events", timeout=60) as reply:
                for line in reply.iter_lines():
                    stream_lines.append(line)
        except httpx.HTTPError:
            pass
        stream_ended.set()

    polled: list[httpx.Response] = []

    def poll() -> None:
        reply = httpx.get(f"{url}/v1/games/{game_id}/turn?wait=30", headers=other, timeout=60)
        polled.append(reply)

    listener, poller = threading.Thread(target=listen), threading.Thread(target=poll)
    listener.start()
    poller.start()
    assert wait_until(lambda: any(line.startswith("id:") for line in stream_lines), 10)

    os.kill(valkey.pid, signal.SIGSTOP)
    stopped = time.monotonic()
    # the connection that hears commits notices too (its PING goes unanswered): until then a
    # seat's turn may be answered from what the process remembers (nothing can change it
    # while the store stalls); from then on, everything is read from the store
    assert wait_until(lambda: "not hearing commits" in log.read_text(), BOUND_S)

    reply, took = _timed(lambda: http.get("/readyz"))
    _refused(reply, "redis-unreachable")
    assert took < BOUND_S, f"/readyz took {took:.1f} s"

    seat = auth(token)
    move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
    calls = {
        "GET /v1/games/{id}": lambda: http.get(f"/v1/games/{game_id}"),
        "GET /v1/games/{id}/turn": lambda: http.get(f"/v1/games/{game_id}/turn", headers=seat),
        "POST /v1/games/{id}/moves": lambda: http.post(
            f"/v1/games/{game_id}/moves", headers=seat, json=move
        ),
        "POST /v1/games": lambda: http.post(
            "/v1/games", json={"ruleset": "choice", "seats": [{"name": "a"}, {"name": "b"}]}
        ),
        "GET /v1/tournaments/{id}": lambda: http.get(f"/v1/tournaments/{tournament_id}"),
        "POST /v1/tournaments/{id}/entrants": lambda: http.post(
            f"/v1/tournaments/{tournament_id}/entrants", json={"name": "late"}
        ),
    }
    for name, call in calls.items():
        reply, took = _timed(call)
        _refused(reply)
        assert took < BOUND_S, f"{name} took {took:.1f} s"
    healthz, took = _timed(lambda: http.get("/healthz"))
    assert healthz.status_code == 200 and took < BOUND_S, "liveness needs no store"

    # the stream open before the stall has ended (an EventSource would reconnect)
    assert stream_ended.wait(max(0.0, stopped + BOUND_S - time.monotonic()) + 0.5), (
        "the open event stream did not end"
    )
    listener.join(timeout=5)
    # so has the long-poll waiting for its turn: 503, as a new request
    poller.join(max(0.0, stopped + BOUND_S - time.monotonic()) + 0.5)
    assert polled, "the long-poll did not end"
    _refused(polled[0])

    os.kill(valkey.pid, signal.SIGCONT)
    assert wait_until(lambda: ready(url), 15), "/readyz did not come back"
    # the game plays on, on the same referee: the stalled move was never taken
    moved = http.post(f"/v1/games/{game_id}/moves", headers=seat, json=move)
    assert moved.status_code == 200, moved.text
    after = http.get(f"/v1/games/{game_id}/turn", headers=seat).json()
    assert after["seq"] > turn["seq"]
    with httpx.stream("GET", f"{url}/v1/games/{game_id}/events", timeout=10) as reply:
        assert reply.status_code == 200
        assert any(line.startswith("id:") for line in _first_lines(reply, 3))
    joined = http.post(f"/v1/tournaments/{tournament_id}/entrants", json={"name": "e0"})
    assert joined.status_code == 201, joined.text
    assert http.get(f"/v1/tournaments/{tournament_id}").status_code == 200

    assert wait_until(lambda: "Redis is available again" in log.read_text(), 10)
    text = log.read_text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text
    # the stall in the log: once down, once up (``test_store_down_logging.py``)
    assert text.count("Redis is unavailable (") == 1, text
    assert text.count("Redis is available again") == 1, text


def _first_lines(reply: httpx.Response, count: int) -> list[str]:
    lines = []
    for line in reply.iter_lines():
        lines.append(line)
        if len(lines) >= count:
            break
    return lines


def test_a_pool_with_every_connection_in_use_is_store_busy_not_redis_down(valkey):
    """Every connection of the store's pool in use (long-polls, streams, a burst): an operation
    waits up to half the store's timeout for one to come free, then fails with ``StoreBusy``,
    which a request answers 503 ``store-busy``, not ``redis-unavailable``; /readyz's PING goes
    on the shared connection and still answers; a connection given back serves at once."""
    import asyncio

    from referee.store import STORE_UNAVAILABLE, StoreBusy, open_store
    from referee.web.problems import answer

    async def scenario():
        store = open_store(valkey, timeout_s=TIMEOUT_S)
        pool = store.games.redis.connection_pool
        held = [await pool.get_connection() for _ in range(pool.max_connections)]
        try:
            began = time.monotonic()
            with pytest.raises(StoreBusy) as busy:
                await store.tournaments.load("0" * 16)
            waited = time.monotonic() - began
            await store.ping()  # Redis answers: the pool is what is full
            await pool.release(held.pop())
            assert await store.tournaments.load("0" * 16) is None
        finally:
            for connection in held:
                await pool.release(connection)
            await store.aclose()
        return busy.value, waited

    error, waited = asyncio.run(scenario())
    assert TIMEOUT_S / 2 - 0.05 <= waited < BOUND_S
    assert isinstance(error, STORE_UNAVAILABLE)  # the service's handlers treat it alike
    status, body, headers = answer(error, "/v1/tournaments/0000000000000000")
    assert status == 503 and headers["Retry-After"] == "1"
    assert msgspec.json.decode(body)["code"] == "store-busy"


def test_commands_finding_no_connection_to_a_stalled_redis_share_one_attempt(tmp_path):
    """Fifty commands that find no connection to a stopped Valkey wait for one attempt to
    connect, given up after the timeout, all together (not one attempt after another); then,
    for a while, commands fail at once; once Valkey goes on, the next command connects."""
    import asyncio

    from redis.asyncio import Redis

    from referee.store import STORE_UNAVAILABLE
    from referee.store.connection import SharedConnection

    valkey = start_embedded(tmp_path / "valkey", keep_alive=False)

    async def scenario():
        redis = Redis.from_url(valkey.url)
        shared = SharedConnection(redis.connection_pool, timeout_s=TIMEOUT_S)
        os.kill(valkey.pid, signal.SIGSTOP)
        began = time.monotonic()
        failed = await asyncio.gather(
            *(shared.execute("PING") for _ in range(50)), return_exceptions=True
        )
        waited = time.monotonic() - began
        began = time.monotonic()
        with pytest.raises(STORE_UNAVAILABLE):
            await shared.execute("PING")
        at_once = time.monotonic() - began
        os.kill(valkey.pid, signal.SIGCONT)
        await asyncio.sleep(TIMEOUT_S / 4 + 0.05)
        answered = await shared.execute("PING")
        await shared.aclose()
        await redis.aclose()
        return failed, waited, at_once, answered

    try:
        failed, waited, at_once, answered = asyncio.run(scenario())
    finally:
        os.kill(valkey.pid, signal.SIGCONT)
        valkey.stop()
    assert all(isinstance(error, STORE_UNAVAILABLE) for error in failed), failed
    assert TIMEOUT_S - 0.05 <= waited < 2 * TIMEOUT_S + 1.0
    assert at_once < TIMEOUT_S / 2  # no new attempt (it would wait the timeout)
    assert answered == b"PONG"
