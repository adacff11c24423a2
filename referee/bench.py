"""``referee bench``: throughput, latency and memory over real HTTP, against the stack's ceiling.

Starts an embedded Valkey and a referee (uvicorn, W workers) in processes of their own, then:

1. the ceiling: load processes hammer ``GET /healthz`` at the bots' concurrency;
2. the game load: the same processes play 2-seat CHOICE games like real bots
   (``GET /turn``, ``POST /moves``), B bots at once;
3. the referee's own CPU in each phase (process and workers): cores it used, and CPU per
   request. The ceiling is a share of two cores that the load generators also need, so beside
   ``ratio`` (rates) the bench gives ``cpu_ratio``: CPU per ``/healthz`` over CPU per game
   request (whose phase also creates the games), which the load generators do not bound;
4. Redis command statistics per decision: the commands the referee sent (each one round trip,
   as the referee pipelines nothing on this path) and all the server ran, the commit script's
   own calls included; and the memory of one finished game with its record.

Every load generator is a separate process talking only HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from typing import Any

import httptools
import httpx
import msgspec
import psutil
import redis

from ._gc import settle_collector
from .embedded import embedded_url, start_embedded
from .store import SCRIPT_COMMANDS, GameKeys

__all__ = ["BENCH_GAME", "play_game", "run_bench", "start_referee"]

#: The game every load generator plays: 2-seat CHOICE, no deadlines.
BENCH_GAME = {"ruleset": "choice", "seats": [{"name": "a"}, {"name": "b"}], "deadline_s": 0}


class _TurnNeeded(msgspec.Struct):
    """What a bench bot reads of a turn: it plays the first legal move, sent back verbatim."""

    status: str
    seq: int = 0
    legal_moves: list[msgspec.Raw] = []


# The bots share the referee's two cores, so their own JSON work is kept small, as a bot in a
# hurry would keep it: msgspec, decoding only what they act on (the standard library's json,
# decoding the whole view, took a fifth of a bot's CPU per turn).
_decode_turn = msgspec.json.Decoder(_TurnNeeded).decode
_json_encode = msgspec.json.encode


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_referee(
    redis_url: str | None,
    workers: int = 1,
    *,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    stdout: int | None = None,
) -> tuple[subprocess.Popen, str]:
    """A referee in a process of its own on a free port, once it answers ``/readyz``; with no
    ``redis_url``, on its own embedded Valkey (``args``: more flags of ``referee serve``;
    ``stdout``: where its output goes, as text)."""
    port = _free_port()
    environment = {**os.environ, **(env or {})}
    if redis_url is None:
        environment.pop("REDIS_URL", None)
    else:
        environment["REDIS_URL"] = redis_url
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--no-access-log",
            *args,
        ],
        env=environment,
        stdout=stdout,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("the referee did not start")


# --- load generators (each runs in a process of its own) ----------------------------------


class _Http(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection of a load generator, one request at a time.

    The bots share the referee's two cores, and what their own event loop spends on a request
    is added to every latency they time: aiohttp took about as much CPU per request as the
    referee. A bot needs no more than this: requests it builds once, a response parsed by
    httptools (the parser uvicorn serves with).
    """

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.reply: asyncio.Future[tuple[int, bytes]] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.body: list[bytes] = []

    @classmethod
    async def open(cls, url: str) -> _Http:
        address = urllib.parse.urlsplit(url)
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(cls, address.hostname, address.port)
        return connection

    @property
    def closed(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    async def request(self, head: bytes, body: bytes | None = None) -> tuple[int, bytes]:
        """Status and body of the response to a request (``head`` built by ``_head``)."""
        if self.closed:
            raise ConnectionError("the referee closed the connection")
        loop = asyncio.get_running_loop()
        self.reply = reply = loop.create_future()
        self.body = []
        # a timer, not asyncio.wait_for (a waiter and callbacks more per request)
        self.timer = loop.call_later(60, self._timed_out)
        if body is None:
            self.transport.write(head + b"\r\n")
        else:
            self.transport.write(b"%sContent-Length: %d\r\n\r\n%s" % (head, len(body), body))
        return await reply

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ConnectionError(f"a response that is not HTTP: {error}"))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.reply is not None and not self.reply.done():
            self.reply.set_result((self.parser.get_status_code(), b"".join(self.body)))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(ConnectionError(f"the connection to the referee was lost: {exc!r}"))

    def _timed_out(self) -> None:
        self._fail(TimeoutError("no answer from the referee in 60 s"))

    def _fail(self, error: Exception) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.reply is not None and not self.reply.done():
            self.reply.set_exception(error)
        if self.transport is not None:
            self.transport.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class _Client:
    """A load generator's connection, opened again where the referee closed it (uvicorn
    closes a keep-alive connection idle for 5 s: a table's, while its game is played)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http: _Http | None = None

    async def request(self, head: bytes, body: bytes | None = None) -> tuple[int, bytes]:
        if self.http is None or self.http.closed:
            self.http = await _Http.open(self.url)
        return await self.http.request(head, body)

    def close(self) -> None:
        if self.http is not None:
            self.http.close()


def _head(method: str, path: str, token: str | None = None) -> bytes:
    """A request's line and headers but the body's length (``_Http.request`` adds it)."""
    head = f"{method} {path} HTTP/1.1\r\nHost: referee\r\n"
    if token is not None:
        head += f"Authorization: Bearer {token}\r\n"
    if method == "POST":
        head += "Content-Type: application/json\r\n"
    return head.encode()


async def _ceiling(url: str, concurrency: int, seconds: float) -> dict[str, Any]:
    """``GET /healthz`` at ``concurrency``; ``requests`` counts the answers within the window,
    ``all_requests`` every answer (for CPU per request)."""
    start = time.monotonic()
    stop = start + seconds
    stats: dict[str, Any] = {"requests": 0, "all_requests": 0, "elapsed": seconds, "latencies": []}
    healthz = _head("GET", "/healthz")

    async def worker() -> None:
        connection = _Client(url)
        try:
            while time.monotonic() < stop:
                began = time.perf_counter()
                status, _ = await connection.request(healthz)
                ok = status == 200
                stats["all_requests"] += ok
                if ok and time.monotonic() <= stop:
                    stats["requests"] += 1
                    stats["latencies"].append((time.perf_counter() - began) * 1000)
        finally:
            connection.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return stats


async def _games(url: str, bots: int, seconds: float) -> dict[str, Any]:
    """``bots`` bots, two per CHOICE game, playing new games until time is up.

    Rates count what was answered within the window (``elapsed``); long-polls never wait past
    its end, and ``all_requests`` counts every answer (for CPU per request).
    """
    start = time.monotonic()
    stop = start + seconds
    stats: dict[str, Any] = {
        "turn": 0,
        "moves": 0,
        "decisions": 0,
        "errors": 0,
        "games": 0,
        "all_requests": 0,
        "latencies": [],
        "elapsed": seconds,
    }
    create, game_body = _head("POST", "/v1/games"), _json_encode(BENCH_GAME)

    async def bot(game_id: str, token: str) -> None:
        connection = _Client(url)
        # built once, as a bot in a loop keeps them
        turn_path = f"/v1/games/{game_id}/turn?wait="
        long_poll = _head("GET", turn_path + "5", token)
        moves = _head("POST", f"/v1/games/{game_id}/moves", token)
        try:
            while True:
                left = stop - time.monotonic()  # a long-poll never waits past the window
                turn = (
                    long_poll
                    if left >= 5
                    else _head("GET", f"{turn_path}{max(0, left):.3f}", token)
                )
                _, reply = await connection.request(turn)
                body = _decode_turn(reply)
                stats["all_requests"] += 1
                if time.monotonic() > stop:
                    return
                stats["turn"] += 1
                if body.status != "your_turn":
                    if body.status == "finished":
                        return
                    continue
                began = time.perf_counter()
                decision = _json_encode({"seq": body.seq, "move": body.legal_moves[0]})
                status, _ = await connection.request(moves, decision)
                stats["all_requests"] += 1
                if time.monotonic() > stop:
                    return
                stats["latencies"].append((time.perf_counter() - began) * 1000)
                stats["moves"] += 1
                stats["decisions" if status == 200 else "errors"] += 1
        finally:
            connection.close()

    async def table() -> None:
        connection = _Client(url)
        try:
            while time.monotonic() < stop:
                _, reply = await connection.request(create, game_body)
                game = json.loads(reply)
                await asyncio.gather(*(bot(game["id"], s["token"]) for s in game["seats"]))
                stats["games"] += 1
        finally:
            connection.close()

    await asyncio.gather(*(table() for _ in range(max(1, bots // 2))))
    return stats


def _load_process(kind: str, url: str, concurrency: int, seconds: float, queue: Any) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover
        pass
    # the bots' own collector passes would stall their loop and add to the latencies they
    # measure: the same policy as the referee's
    settle_collector()
    runner = _ceiling if kind == "ceiling" else _games
    queue.put(asyncio.run(runner(url, concurrency, seconds)))


def _run_load(kind: str, url: str, total: int, processes: int, seconds: float) -> list[dict]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    shares = [total // processes + (1 if i < total % processes else 0) for i in range(processes)]
    workers = [
        context.Process(target=_load_process, args=(kind, url, share, seconds, queue))
        for share in shares
        if share
    ]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=seconds + 120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    return results


# --- the referee's own CPU ---------------------------------------------------------------


def _cpu_seconds(process: psutil.Process) -> float:
    """CPU time (user + system) of the referee: its process and any worker processes."""
    total = 0.0
    for each in (process, *process.children(recursive=True)):
        with contextlib.suppress(psutil.NoSuchProcess):
            times = each.cpu_times()
            total += times.user + times.system
    return total


# --- Redis figures -------------------------------------------------------------------------


def _command_calls(client: redis.Redis) -> tuple[int, int]:
    """Commands the server ran (also those a script called) and commands clients sent."""
    stats = client.info("commandstats")
    calls = {
        name.removeprefix("cmdstat_"): figures["calls"]
        for name, figures in stats.items()
        if not name.endswith(("info", "config", "resetstat"))
    }
    ran = sum(calls.values())
    return ran, ran - sum(calls.get(name, 0) for name in SCRIPT_COMMANDS)


def play_game(http: httpx.Client) -> tuple[str, int]:
    """One bench game played to its end, one request at a time: each seat in turn asks for
    its turn and posts the first legal move. Returns the game's id and the requests made."""
    game = http.post("/v1/games", json=BENCH_GAME).json()
    tokens = [seat["token"] for seat in game["seats"]]
    requests = 0
    while True:
        for token in tokens:
            headers = {"Authorization": f"Bearer {token}"}
            turn = http.get(f"/v1/games/{game['id']}/turn", headers=headers).json()
            requests += 1
            if turn["status"] == "finished":
                return game["id"], requests
            if turn["status"] == "your_turn":
                move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
                http.post(f"/v1/games/{game['id']}/moves", headers=headers, json=move)
                requests += 1


def _bytes_per_game(client: redis.Redis, url: str, games: int = 5) -> dict[str, int]:
    """Memory of finished 2-seat CHOICE games with their records, as each game ends.

    ``all``: every key (document, record, event stream); ``retained``: what stays once the
    event stream's shorter retention has passed (document and record).
    """
    totals, retained = [], []
    with httpx.Client(base_url=url, timeout=30) as http:
        for _ in range(games):
            game_id, _ = play_game(http)
            sizes = [client.memory_usage(key) or 0 for key in GameKeys(game_id).all()]
            totals.append(sum(sizes))
            retained.append(sum(sizes) - sizes[2])
    return {
        "mean": round(statistics.mean(totals)),
        "max": max(totals),
        "retained": round(statistics.mean(retained)),
    }


def _live_games(url: str, count: int) -> None:
    """Idle running games that no bot touches: latency must not grow with them."""
    with httpx.Client(base_url=url, timeout=30) as http:
        for _ in range(count):
            http.post("/v1/games", json=BENCH_GAME)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=1000, method="inclusive")[int(q * 1000) - 1]


def _measured_load(
    kind: str, url: str, bots: int, processes: int, seconds: float, server: psutil.Process
) -> tuple[list[dict], float]:
    """One load phase's results, with the referee's CPU seconds meanwhile."""
    cpu_before = _cpu_seconds(server)
    results = _run_load(kind, url, bots, processes, seconds)
    return results, _cpu_seconds(server) - cpu_before


def _ceiling_phase(
    url: str, bots: int, processes: int, seconds: float, server: psutil.Process
) -> dict[str, Any]:
    """``GET /healthz`` at the bots' concurrency, with the referee's CPU meanwhile."""
    results, cpu = _measured_load("ceiling", url, bots, processes, seconds, server)
    return {
        "requests": sum(r["requests"] for r in results),
        "all_requests": sum(r["all_requests"] for r in results),
        "elapsed": max(r["elapsed"] for r in results),
        "cpu": cpu,
        "latencies": [x for r in results for x in r["latencies"]],
    }


def run_bench(
    seconds: float = 20.0,
    workers: int = 1,
    bots: int = 64,
    live_games: int = 100,
    processes: int = 2,
) -> dict[str, Any]:
    started = time.monotonic()
    data_dir = tempfile.mkdtemp(prefix="referee-bench-")
    valkey = start_embedded(data_dir, persist=False)
    referee = None
    try:
        redis_url = embedded_url(valkey)
        referee, url = start_referee(redis_url, workers)
        client = redis.Redis.from_url(redis_url)
        _live_games(url, live_games)
        server = psutil.Process(referee.pid)
        # the ceiling is measured in two halves, before and after the games, so that a drift
        # of the machine's speed during the run weighs on both sides of the ratio alike
        before = _ceiling_phase(url, bots, processes, seconds * 0.15, server)
        ran_before, sent_before = _command_calls(client)
        games, games_cpu = _measured_load("games", url, bots, processes, seconds * 0.7, server)
        ran_after, sent_after = _command_calls(client)
        after = _ceiling_phase(url, bots, processes, seconds * 0.15, server)
        ceiling_elapsed = before["elapsed"] + after["elapsed"]
        ceiling_rps = (before["requests"] + after["requests"]) / ceiling_elapsed
        ceiling_cpu = before["cpu"] + after["cpu"]
        calls, sent = ran_after - ran_before, sent_after - sent_before
        elapsed = max(r["elapsed"] for r in games)
        decisions = sum(r["decisions"] for r in games)
        requests = sum(r["turn"] + r["moves"] for r in games)
        healthz_cpu_us = ceiling_cpu / max(before["all_requests"] + after["all_requests"], 1) * 1e6
        game_cpu_us = games_cpu / max(sum(r["all_requests"] for r in games), 1) * 1e6
        latencies = [x for r in games for x in r["latencies"]]
        ceiling_latencies = before["latencies"] + after["latencies"]
        memory = _bytes_per_game(client, url)
        figures = {
            "ceiling_rps": round(ceiling_rps, 1),
            "ceiling_rps_before": round(before["requests"] / before["elapsed"], 1),
            "ceiling_rps_after": round(after["requests"] / after["elapsed"], 1),
            "decisions_per_s": round(decisions / elapsed, 1),
            "game_requests_per_s": round(requests / elapsed, 1),
            "ratio": round(requests / elapsed / ceiling_rps, 3),
            "referee_cores_ceiling": round(ceiling_cpu / ceiling_elapsed, 2),
            "referee_cores_games": round(games_cpu / elapsed, 2),
            "referee_cpu_us_per_healthz": round(healthz_cpu_us, 1),
            "referee_cpu_us_per_game_request": round(game_cpu_us, 1),
            "cpu_ratio": round(healthz_cpu_us / max(game_cpu_us, 1e-9), 3),
            "p50_ms": round(_percentile(latencies, 0.5), 2),
            "p99_ms": round(_percentile(latencies, 0.99), 2),
            # the stack's own latency floor at the same concurrency: GET /healthz
            "ceiling_p50_ms": round(_percentile(ceiling_latencies, 0.5), 2),
            "ceiling_p99_ms": round(_percentile(ceiling_latencies, 0.99), 2),
            "redis_round_trips_per_decision": round(sent / max(decisions, 1), 2),
            "redis_calls_per_decision": round(calls / max(decisions, 1), 2),
            "redis_bytes_per_game": memory["mean"],
            "redis_bytes_per_game_max": memory["max"],
            "redis_bytes_per_game_retained": memory["retained"],
            "games_finished": sum(r["games"] for r in games),
            "errors": sum(r["errors"] for r in games),
            "workers": workers,
            "bots": bots,
            "live_games": live_games,
            "seconds": round(time.monotonic() - started, 1),
        }
        client.close()
        return figures
    finally:
        if referee is not None:
            referee.terminate()
            referee.wait(timeout=15)
        valkey.stop()


def main(args: Any) -> int:
    figures = run_bench(args.seconds, args.workers, args.bots, args.live_games)
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:28} {value}")
    return 0
