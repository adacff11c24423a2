"""Small bot helpers for the HTTP tests."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import redis


def create(
    http: httpx.Client, ruleset: str, seats: int | list[dict], options=None, deadline_s=0, **extra
):
    """A game of ``seats`` named seats (bot0, bot1, ...), or of exactly these seats."""
    body = {
        "ruleset": ruleset,
        "seats": [{"name": f"bot{i}"} for i in range(seats)] if isinstance(seats, int) else seats,
        "options": options or {},
        "deadline_s": deadline_s,
        **extra,
    }
    reply = http.post("/v1/games", json=body)
    assert reply.status_code == 201, reply.text
    return reply.json()


def wait_until(check, seconds: float = 15.0) -> bool:
    """Whether ``check()`` came true within ``seconds`` (looked at every 50 ms)."""
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        if check():
            return True
        time.sleep(0.05)
    return False


def ready(url: str) -> bool:
    """Whether the referee at ``url`` answers ``/readyz`` with 200 (its Redis answers)."""
    try:
        return httpx.get(url + "/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def referee_leftovers(directory: Path) -> list[str]:
    """What the referee and its tools left behind in a temporary directory (``TMPDIR``)."""
    return [p.name for p in directory.iterdir() if p.name.startswith("referee-")]


def run_benchmark(script: str, args: list[str], tmp: Path) -> dict:
    """A script of ``benchmarks/`` run as a user runs it, its temporary files in ``tmp``: the
    JSON object it prints last (the run must succeed)."""
    root = Path(__file__).parents[2]
    result = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=root,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures: dict = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def play_out(
    http: httpx.Client | list[httpx.Client],
    game: dict,
    rnd: random.Random | None = None,
    *,
    accepted: dict[int, list[int]] | None = None,
    pause_s: float = 0.0,
):
    """Every seat plays random legal moves through HTTP until the game is over; its public
    view then. Given several clients (replicas), each decision's turn is read from one and
    posted to the next, in turn; ``accepted`` (seat -> seqs) gets each decision accepted."""
    rnd = rnd or random.Random(0)
    clients = http if isinstance(http, list) else [http]
    for step in range(20_000):
        reader, writer = clients[step % len(clients)], clients[(step + 1) % len(clients)]
        public = reader.get(f"/v1/games/{game['id']}").json()
        if public["status"] == "finished":
            return public
        for seat, seq in decide_due(reader, writer, game, public["to_decide"], rnd):
            if accepted is not None:
                accepted.setdefault(seat, []).append(seq)
            time.sleep(pause_s)
    raise AssertionError("the game did not finish")


def decide_due(
    reader: httpx.Client, writer: httpx.Client, game: dict, seats: list[int], rnd: random.Random
) -> Iterator[tuple[int, int]]:
    """Each of ``seats`` whose turn it is (read from ``reader``) posts one random legal move
    (to ``writer``); yields the seat and seq of each decision, once it is accepted."""
    for seat in seats:
        token = game["seats"][seat]["token"]
        turn = reader.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
        if turn["status"] != "your_turn":
            continue
        reply = writer.post(
            f"/v1/games/{game['id']}/moves",
            headers=auth(token),
            json={"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])},
        )
        assert reply.status_code == 200, reply.text
        yield seat, turn["seq"]


def start_tournament(http: httpx.Client, spec: dict) -> tuple[str, list[str]]:
    """A tournament with all its entrants registered (so it runs): its id, their tokens."""
    created = http.post("/v1/tournaments", json=spec)
    assert created.status_code == 201, created.text
    tournament_id = created.json()["id"]
    tokens = []
    for i in range(spec["entrants"]):
        reply = http.post(f"/v1/tournaments/{tournament_id}/entrants", json={"name": f"e{i}"})
        assert reply.status_code == 201, reply.text
        tokens.append(reply.json()["token"])
    return tournament_id, tokens


def play_tournament(
    http: httpx.Client | list[httpx.Client], tournament_id: str, tokens: list[str], seed: int = 2
):
    """Every entrant plays random legal moves (``nextDecision``) until the tournament is
    over; its view at the end. Given several clients (replicas), entrant i plays through
    client i modulo their number."""
    rnd = random.Random(seed)
    clients = http if isinstance(http, list) else [http]
    for _ in range(5000):
        view = clients[0].get(f"/v1/tournaments/{tournament_id}").json()
        if view["status"] == "finished":
            return view
        for i, token in enumerate(tokens):
            client = clients[i % len(clients)]
            step = client.get("/v1/me/next", headers=auth(token)).json()
            if step["status"] == "your_turn":
                turn = step["turn"]
                body = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
                reply = client.post(
                    f"/v1/games/{step['game_id']}/moves",
                    headers=auth(step["seat_token"]),
                    json=body,
                )
                assert reply.status_code == 200, reply.text
    raise AssertionError("the tournament did not finish")


class Counted:
    """Mixed into a client's connection class (TCP or Unix socket, as its URL says): counts
    the round trips (every write of packed requests to the socket, however it is made) and
    the connects of the clients made by ``counted_redis``, so servers of other tests in this
    process (their sweepers) are not counted."""

    round_trips = 0
    connects = 0

    async def connect(self):
        Counted.connects += not self.is_connected  # the pool calls it on every checkout
        await super().connect()
        writer = self._writer
        if not getattr(writer, "counted", False):
            write = writer.writelines

            def writelines(data):
                Counted.round_trips += 1
                return write(data)

            writer.writelines = writelines
            writer.counted = True


def counted_redis(url: str):
    """An asyncio client whose connections count what they do (``Counted``)."""
    from redis.asyncio import ConnectionPool, Redis

    pool = ConnectionPool.from_url(url)
    pool.connection_class = type("CountedConnection", (Counted, pool.connection_class), {})
    return Redis.from_pool(pool)


class Monitor:
    """Every command the Redis server at ``url`` runs while it lasts, as MONITOR prints it:
    what the referee asks of its store, watched from outside."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = redis.Redis.from_url(url)
        self.commands: list[str] = []
        self._stop = f"stop-{uuid.uuid4().hex}"
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        with self.client.monitor() as monitor:
            self._ready.set()
            while True:
                command = monitor.next_command()["command"]
                if self._stop in command:
                    return
                self.commands.append(command)

    def __enter__(self) -> Monitor:
        self._thread.start()
        self._ready.wait(10)
        time.sleep(0.1)  # MONITOR answered before the first command is watched
        return self

    def __exit__(self, *exc: object) -> None:
        with redis.Redis.from_url(self.url) as other:
            other.echo(self._stop)
        self._thread.join(10)
        self.client.close()
