"""Bots that think: waiting seats on one referee process, their memory, and how soon a commit
wakes them.

Starts an embedded Valkey and one referee process (``--workers 1``), limits raised as the
bench raises them, and one load process whose every seat has an HTTP connection of its own:

1. ``hold``: ``--waiting`` games whose seat 0 has decided, and seat 0 of each long-polling
   its turn (``GET /turn?wait=50``), every one on its own connection: the referee's RSS
   before and with them all waiting (``referee_bytes_per_waiting_seat``), the connections
   Valkey counts meanwhile (a waiter holds none), then seat 1 of each game decides, paced at
   ``--wake-rate`` per second, and each waiter's answer is timed from the moment seat 1's
   decision was sent (``wake_ms``: commit, hearing, waking and the answer written, plus the
   decision's own request) and from the moment seat 1's answer came (``wake_after_commit_ms``);
   and, by the referee itself (``REFEREE_WAKE_TIMES``, ``referee.service.wakes``), from the
   moment its process first knew of the commit (heard, or its own commit's reply) to the moment
   the woken waiter's answer was handed to the transport (``server_wake_ms``).
2. ``thinking``: ``--games`` 2-seat CHOICE games played by bots that think a time drawn
   uniformly from ``--think`` (seconds) before each decision and post it with ``?wait=30``
   (one request per decision: the answer holds the next turn). Both seats decide each roll,
   so the seat that posts first waits for the other's commit: its answer is timed from the
   moment the other's decision was sent (``thinking_wake_ms``), and answers that took over a
   second past it are counted (``thinking_wakes_over_1s``); the referee's own figure as above
   (``thinking_server_wake_ms``). What a decision costs while they play (the games' creation
   before it excluded): the referee's CPU (``thinking_referee_cpu_us_per_decision``),
   Redis's (``thinking_redis_cpu_us_per_decision``) and the commands the referee sent
   (``thinking_redis_round_trips_per_decision``), the figures a capacity plan for bots that
   think takes (``docs/CAPACITY.md``).

``python benchmarks/thinking_bots.py [--waiting N] [--games N] [--think A B] [--seconds S]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
import redis

from referee.service.wakes import bucket_ns, percentile
from referee.store.embedded import start_embedded
from referee.tools.bench import command_calls, cpu_seconds, redis_cpu_seconds
from referee.tools.launch import LOAD_LIMITS, start_referee
from referee.tools.load import BENCH_GAME, Client, head

_ENV = {**LOAD_LIMITS, "REFEREE_RATE_PER_TOKEN": "0", "REFEREE_RATE_PER_ADDRESS": "0"}


def _pct(values: list[float], q: float) -> float | None:
    if len(values) < 2:
        return round(values[0], 2) if values else None
    return round(statistics.quantiles(values, n=1000, method="inclusive")[int(q * 1000) - 1], 2)


def _wake_counts(path: Path) -> dict[int, int]:
    """The referee's histograms of its wakes (``REFEREE_WAKE_TIMES``), summed over its
    processes, as they last wrote them (every second)."""
    counts: dict[int, int] = {}
    for each in path.parent.glob(path.name + ".*"):
        if each.name.endswith(".partial"):
            continue
        for bucket, count in json.loads(each.read_text()).items():
            counts[int(bucket)] = counts.get(int(bucket), 0) + count
    return counts


def _server_wakes(path: Path, before: dict[int, int], prefix: str) -> dict[str, Any]:
    """The referee's own wake figures since ``before`` (read 1.5 s on, once it wrote them)."""
    time.sleep(1.5)
    after = _wake_counts(path)
    counts = {b: n - before.get(b, 0) for b, n in after.items() if n - before.get(b, 0) > 0}

    def ms(q: float) -> float | None:
        value = percentile(counts, q)
        return None if value is None else round(value, 3)

    return {
        f"{prefix}server_wakes": sum(counts.values()),
        f"{prefix}server_wake_ms_p50": ms(0.5),
        f"{prefix}server_wake_ms_p99": ms(0.99),
        f"{prefix}server_wake_ms_max": round(bucket_ns(max(counts)) / 1e6, 3) if counts else None,
    }


async def _created(url: str, count: int, connections: int = 32) -> list[dict]:
    made: list[dict] = []
    create, body = head("POST", "/v1/games"), json.dumps(BENCH_GAME).encode()

    async def worker(share: int) -> None:
        client = Client(url)
        for _ in range(share):
            status, reply = await client.request(create, body)
            if status == 201:
                made.append(json.loads(reply))
        client.close()

    shares = [count // connections + (i < count % connections) for i in range(connections)]
    await asyncio.gather(*(worker(s) for s in shares if s))
    return made


async def _decide(client: Client, game_id: str, token: str, wait: str = "") -> tuple[int, Any]:
    path = f"/v1/games/{game_id}"
    _, reply = await client.request(head("GET", f"{path}/turn", token))
    turn = json.loads(reply)
    move = json.dumps({"seq": turn["seq"], "move": turn["legal_moves"][0]}).encode()
    status, reply = await client.request(head("POST", f"{path}/moves{wait}", token), move)
    return status, json.loads(reply)


class _Pool:
    """Connections lent one request-pair at a time (an ``Http`` serves one request at once)."""

    def __init__(self, url: str, size: int = 32) -> None:
        self.all = [Client(url) for _ in range(size)]
        self.free: asyncio.Queue[Client] = asyncio.Queue()
        for client in self.all:
            self.free.put_nowait(client)

    async def decide(self, game_id: str, token: str) -> tuple[int, Any]:
        client = await self.free.get()
        try:
            return await _decide(client, game_id, token)
        finally:
            self.free.put_nowait(client)


async def hold(
    url: str, waiting: int, wake_rate: float, referee: psutil.Process, valkey: Any, times: Path
):
    games = await _created(url, waiting)
    pool = _Pool(url)
    clients = pool.all

    async def first(i: int) -> None:
        game = games[i]
        await pool.decide(game["id"], game["seats"][0]["token"])

    for start in range(0, len(games), 256):
        await asyncio.gather(*(first(i) for i in range(start, min(start + 256, len(games)))))
    await asyncio.sleep(1.0)
    rss_before = referee.memory_info().rss
    redis_clients_before = valkey.info("clients")["connected_clients"]
    errors = 0
    woken_at: dict[str, float] = {}
    statuses: dict[str, str] = {}
    seats = [Client(url) for _ in games]

    async def wait(i: int) -> None:
        nonlocal errors
        game = games[i]
        path = f"/v1/games/{game['id']}/turn?wait=50"
        try:
            status, reply = await seats[i].request(head("GET", path, game["seats"][0]["token"]))
        except (ConnectionError, TimeoutError, OSError):
            errors += 1
            return
        woken_at[game["id"]] = time.perf_counter()
        if status != 200:
            errors += 1
        else:
            statuses[game["id"]] = json.loads(reply)["status"]

    waits = []
    for start in range(0, len(games), 500):  # connections opened in steps: no SYN backlog
        waits += [asyncio.create_task(wait(i)) for i in range(start, min(start + 500, len(games)))]
        await asyncio.sleep(0.25)
    await asyncio.sleep(3.0)
    early = sum(t.done() for t in waits)
    rss_waiting = referee.memory_info().rss
    redis_clients_waiting = valkey.info("clients")["connected_clients"]
    sent_at: dict[str, float] = {}
    answered_at: dict[str, float] = {}

    async def second(i: int) -> None:
        nonlocal errors
        game = games[i]
        sent_at[game["id"]] = time.perf_counter()
        status, _ = await pool.decide(game["id"], game["seats"][1]["token"])
        answered_at[game["id"]] = time.perf_counter()
        errors += status != 200

    before = _wake_counts(times)
    began = time.perf_counter()
    pending = []
    for i in range(len(games)):  # paced: a steady rate of commits, not one burst
        due = began + i / wake_rate
        pause = due - time.perf_counter()
        if pause > 0:
            await asyncio.sleep(pause)
        pending.append(asyncio.create_task(second(i)))
    await asyncio.gather(*pending)
    await asyncio.wait(waits, timeout=30)
    for each in (*clients, *seats):
        each.close()
    wake = [(woken_at[g] - sent_at[g]) * 1000 for g in sent_at if g in woken_at]
    after = [(woken_at[g] - answered_at[g]) * 1000 for g in answered_at if g in woken_at]
    return {
        "waiting_seats": len(games),
        "waits_answered_early": early,
        "errors": errors + (len(games) - len(woken_at)),
        "woken_to_their_turn": sum(s == "your_turn" for s in statuses.values()),
        "referee_bytes_per_waiting_seat": round((rss_waiting - rss_before) / max(len(games), 1)),
        "referee_rss_mb_waiting": round(rss_waiting / 2**20, 1),
        "redis_connections_before": redis_clients_before,
        "redis_connections_waiting": redis_clients_waiting,
        "wake_rate_per_s": wake_rate,
        "wake_ms_p50": _pct(wake, 0.5),
        "wake_ms_p99": _pct(wake, 0.99),
        "wake_ms_max": round(max(wake), 2) if wake else None,
        "wake_after_commit_ms_p50": _pct(after, 0.5),
        "wake_after_commit_ms_p99": _pct(after, 0.99),
    } | _server_wakes(times, before, "")


async def thinking(
    url: str,
    count: int,
    think: tuple[float, float],
    seconds: float,
    times: Path,
    process: psutil.Process,
    valkey: redis.Redis,
):
    games = await _created(url, count)
    before = _wake_counts(times)
    # the play alone: the games' creation above is not a decision's cost
    cpu, redis_cpu = cpu_seconds(process), redis_cpu_seconds([valkey])
    sent = command_calls([valkey])[1]
    stop = time.monotonic() + seconds
    rnd = random.Random(7)
    stats = {"decisions": 0, "errors": 0, "wakes": [], "games": 0}

    async def table(game: dict) -> None:
        sent: dict[int, list[float]] = {}  # seq -> when each seat's decision was sent

        async def seat(token: str) -> None:
            client = Client(url)
            path = f"/v1/games/{game['id']}"
            try:
                _, reply = await client.request(head("GET", f"{path}/turn?wait=30", token))
                turn = json.loads(reply)
                while turn["status"] != "finished" and time.monotonic() < stop:
                    if turn["status"] != "your_turn":
                        _, reply = await client.request(head("GET", f"{path}/turn?wait=30", token))
                        turn = json.loads(reply)
                        continue
                    await asyncio.sleep(rnd.uniform(*think))
                    seq = turn["seq"]
                    mine = time.perf_counter()
                    sent.setdefault(seq, []).append(mine)
                    move = json.dumps({"seq": seq, "move": turn["legal_moves"][0]}).encode()
                    post = head("POST", f"{path}/moves?wait=30", token)
                    status, reply = await client.request(post, move)
                    now = time.perf_counter()
                    if status != 200:
                        stats["errors"] += 1
                        return
                    stats["decisions"] += 1
                    times = sent.get(seq, [])
                    if len(times) == 2 and times[0] == mine:  # posted first: woken by the other
                        stats["wakes"].append((now - times[1]) * 1000)
                    turn = json.loads(reply)["turn"]
            except (ConnectionError, TimeoutError, OSError):
                stats["errors"] += 1
            finally:
                client.close()

        await asyncio.gather(*(seat(s["token"]) for s in game["seats"]))
        stats["games"] += 1

    began = time.monotonic()
    await asyncio.gather(*(table(g) for g in games))
    elapsed = time.monotonic() - began
    cpu, redis_cpu = cpu_seconds(process) - cpu, redis_cpu_seconds([valkey]) - redis_cpu
    sent = command_calls([valkey])[1] - sent
    wakes = stats["wakes"]
    decisions = max(stats["decisions"], 1)
    return {
        "thinking_games": count,
        "thinking_seats": 2 * count,
        "think_s": list(think),
        "thinking_seconds": round(elapsed, 1),
        "thinking_decisions_per_s": round(stats["decisions"] / elapsed, 1),
        "thinking_errors": stats["errors"],
        "thinking_wake_ms_p50": _pct(wakes, 0.5),
        "thinking_wake_ms_p99": _pct(wakes, 0.99),
        "thinking_wake_ms_max": round(max(wakes), 2) if wakes else None,
        "thinking_wakes_over_1s": sum(w > 1000 for w in wakes),
        "thinking_wakes": len(wakes),
        # what a decision of bots that think costs, beside ``referee bench``'s bots that never
        # do: the referee's CPU, Redis's, and the commands the referee sent (the rate limits'
        # leases too: a thinking bot's every request falls in a second of its own)
        "thinking_referee_cores": round(cpu / elapsed, 2),
        "thinking_referee_cpu_us_per_decision": round(cpu / decisions * 1e6, 1),
        "thinking_redis_cpu_us_per_decision": round(redis_cpu / decisions * 1e6, 1),
        "thinking_redis_round_trips_per_decision": round(sent / decisions, 2),
    } | _server_wakes(times, before, "thinking_")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, default=10_000)
    parser.add_argument("--wake-rate", type=float, default=500.0)
    parser.add_argument("--games", type=int, default=250)
    parser.add_argument("--think", type=float, nargs=2, default=(0.2, 2.0))
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="referee-thinking-")
    embedded = start_embedded(directory, persist=False)
    times = Path(directory) / "wakes"
    referee, url = start_referee(embedded.url, 1, env={**_ENV, "REFEREE_WAKE_TIMES": str(times)})
    valkey = redis.Redis.from_url(embedded.url)
    figures: dict[str, Any] = {}
    try:
        import uvloop

        process = psutil.Process(referee.pid)
        if args.waiting:
            figures |= uvloop.run(hold(url, args.waiting, args.wake_rate, process, valkey, times))
        if args.games:
            think = (args.think[0], args.think[1])
            figures |= uvloop.run(
                thinking(url, args.games, think, args.seconds, times, process, valkey)
            )
        figures["referee_rss_mb_end"] = round(process.memory_info().rss / 2**20, 1)
    finally:
        referee.terminate()
        referee.wait(timeout=30)
        valkey.close()
        embedded.stop()
        shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
