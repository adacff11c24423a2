"""The league's figures (issue 36): what a rating update costs, how fast the arena pairs,
and how long a bot waits from its seek to its first turn.

- rating update: ``core.league.rate_game`` for a 2-seat game (openskill, CPU alone), and the
  settling script (``LeagueStore.settle``: the exactly-once check, both ratings, the
  leaderboard, the histories and the log in one EVALSHA) against the embedded Valkey;
- pairing: ``core.league.pair`` over a pool of N waiting bots (pairings per second);
- seek to first turn: a referee in a process of its own, B bot accounts (asyncio + httpx)
  join the arena at once, each timing POST /v1/arena to its first ``your_turn`` from
  ``GET /v1/me/next?wait=``; p50 and p99 over the rounds;
- arena decisions per second (``--arena-seconds``): a fresh referee, B bot accounts in the
  arena of the bench's ruleset (2 seats, concurrent_games 1 unless told), each playing the
  first legal move with one request per decision (``POST /v1/me/games/{id}/moves?wait=``,
  which answers its next turn in any game), on the bench's own HTTP/1.1 client
  (``referee.tools.load``), spread over two processes as the bench's bots are: decisions
  answered within the window per second, to set beside ``referee bench``'s
  ``decisions_per_s`` on the same build (the time a bot waits to be paired again is in it;
  the bots' first pairing is not: the window opens ``--arena-warmup`` seconds, 1 by default,
  after they joined).

    python benchmarks/league.py [--bots 64] [--rounds 3] [--json]
    python benchmarks/league.py --arena-only --arena-seconds 14 [--bots 64]

Raw output to /tmp; the figures go to benchmarks/results/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import psutil
import redis

from referee.core.league import LogEntry, Rating, Seek, decode, encode, pair, rate_game
from referee.games import DEFAULT
from referee.store import open_store
from referee.store.embedded import start_embedded
from referee.store.league import LeagueStore, SettledSeat
from referee.tools.bench import cpu_seconds
from referee.tools.launch import LOAD_LIMITS, start_referee
from referee.tools.load import Client, TurnNeeded, head, prepare_load_process


class _Next(msgspec.Struct):
    """What an arena bot reads of ``/v1/me/next`` and ``decideNext``: the game and its
    turn, read as the bench's bots read theirs (so that both loads cost their bots alike)."""

    status: str
    game_id: str = ""
    turn: TurnNeeded | None = None


_decode_next = msgspec.json.Decoder(_Next).decode


async def arena_bots(
    url: str,
    names: list[str],
    seconds: float,
    concurrent: int,
    warmup: float = 0.0,
    pipe: Any = None,
) -> dict[str, Any]:
    """Bot accounts ``names`` join the arena, say so on ``pipe`` and play from the time it
    sends back (no pipe: at once): decisions answered within the window (``warmup`` seconds
    after that time, for ``seconds``) are counted, as ``referee bench`` counts within its
    window."""
    stats = {"decisions": 0, "errors": 0, "elapsed": seconds}
    setup = Client(url)
    tokens = []
    for name in names:
        body = msgspec.json.encode({"name": name})
        _, reply = await setup.request(head("POST", "/v1/bots"), body)
        tokens.append(msgspec.json.decode(reply)["token"])
    seek = msgspec.json.encode(
        {"ruleset": DEFAULT, "deadline_s": 10, "concurrent_games": concurrent}
    )
    for token in tokens:
        await setup.request(head("POST", "/v1/arena", token), seek)
    setup.close()
    started = time.time()
    if pipe is not None:
        pipe.send("joined")
        started = pipe.recv()  # the same wall-clock time for every process
    opens, stop = started + warmup, started + warmup + seconds

    async def bot(token: str) -> None:
        connection = Client(url)
        step = _Next("waiting")
        # built once, as the bench's bots build theirs (a 5 s wait): a game's only near the
        # window's end
        next_5 = head("GET", "/v1/me/next?wait=5", token)
        moves_5 = ("", b"")  # the game in play and its decisions' request
        try:
            while True:
                left = stop - time.time()
                if left <= 0:
                    return
                wait = f"{left:.3f}"
                if step.status != "your_turn" or step.turn is None:
                    asked = next_5 if left >= 5 else head("GET", f"/v1/me/next?wait={wait}", token)
                    _, reply = await connection.request(asked)
                    step = _decode_next(reply)
                    continue
                turn = step.turn
                decision = msgspec.json.encode({"seq": turn.seq, "move": turn.legal_moves[0]})
                path = f"/v1/me/games/{step.game_id}/moves?wait="
                if left < 5:
                    post = head("POST", path + wait, token)
                else:
                    if moves_5[0] != step.game_id:
                        moves_5 = (step.game_id, head("POST", path + "5", token))
                    post = moves_5[1]
                status, reply = await connection.request(post, decision)
                answered = time.time()
                if answered > stop:
                    return
                if status == 200:
                    stats["decisions"] += answered >= opens
                    step = _decode_next(reply)
                else:
                    stats["errors"] += 1
                    step = _Next("waiting")
        finally:
            connection.close()

    await asyncio.gather(*(bot(t) for t in tokens))
    return stats


def _arena_process(
    url: str, names: list[str], seconds: float, concurrent: int, warmup: float, pipe: Any
) -> None:
    prepare_load_process()  # as the bench's bots' processes are
    pipe.send(asyncio.run(arena_bots(url, names, seconds, concurrent, warmup, pipe)))


def arena_decisions_per_s(
    bots: int, seconds: float, concurrent: int = 1, processes: int = 2, warmup: float = 1.0
) -> dict[str, Any]:
    """Decisions per second of ``bots`` bot accounts playing the arena on a fresh referee
    and embedded Valkey (as ``referee bench`` starts them). The window opens ``warmup``
    seconds after the bots joined, so that it holds the arena as it runs on, not the
    bots' first pairing (``seek_to_first_turn`` measures that); the referee's CPU and the
    server's commands are counted within it too, not the bots' registrations."""
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as directory:
        valkey = start_embedded(Path(directory) / "valkey", persist=False)
        try:
            referee, url = start_referee(valkey.url, env=dict(LOAD_LIMITS))
            counter = redis.Redis.from_url(valkey.url)
            try:
                server = psutil.Process(referee.pid)
                pipes = [context.Pipe() for _ in range(processes)]
                workers = [
                    context.Process(
                        target=_arena_process,
                        args=(
                            url,
                            [f"arena {p} {i}" for i in range(p, bots, processes)],
                            seconds,
                            concurrent,
                            warmup,
                            pipes[p][1],
                        ),
                    )
                    for p in range(processes)
                ]
                for worker in workers:
                    worker.start()
                for mine, _ in pipes:
                    if not mine.poll(120):
                        raise RuntimeError("the arena's bots did not join within 120 s")
                    mine.recv()
                started = time.time()
                for mine, _ in pipes:
                    mine.send(started)
                time.sleep(max(0.0, started + warmup - time.time()))
                stats = counter.info("stats")
                commands, reads = stats["total_commands_processed"], stats["total_reads_processed"]
                cpu = cpu_seconds(server)
                time.sleep(max(0.0, started + warmup + seconds - time.time()))
                stats = counter.info("stats")
                commands = stats["total_commands_processed"] - commands
                reads = stats["total_reads_processed"] - reads
                cpu = cpu_seconds(server) - cpu
                results = []
                for mine, _ in pipes:
                    if not mine.poll(120):
                        raise RuntimeError("the arena's bots did not stop within 120 s")
                    results.append(mine.recv())
                for worker in workers:
                    worker.join(timeout=30)
                settled = [decode(b, LogEntry) for b in counter.lrange(LeagueStore.LOG, 0, -1)]
            finally:
                counter.close()
                referee.terminate()
                referee.wait(timeout=15)
        finally:
            valkey.stop()
    decisions = sum(r["decisions"] for r in results)
    return {
        "arena_bots": bots,
        # games settled over the whole run, and how many of them paired two bots whose last
        # games were against each other (the matchmaker penalises a rematch)
        "arena_games_settled": len(settled),
        "arena_rematches": _rematches(settled),
        "arena_concurrent_games": concurrent,
        "arena_seconds": seconds,
        "arena_warmup_s": warmup,
        "arena_decisions_per_s": round(decisions / seconds, 1),
        "arena_errors": sum(r["errors"] for r in results),
        "arena_redis_commands_per_decision": round(commands / max(decisions, 1), 1),
        # the server's reads of a client's socket per decision, as ``referee bench``'s
        # ``redis_reads_per_decision``: how many commands each of the referee's writes carried
        "arena_redis_reads_per_decision": round(reads / max(decisions, 1), 3),
        # the referee's CPU within the window per decision, and its cores (``referee bench``
        # gives ``referee_cpu_us_per_game_request``, a game request being about one decision,
        # and ``referee_cores_games``)
        "arena_referee_cpu_us_per_decision": round(cpu / max(decisions, 1) * 1e6, 1),
        "arena_referee_cores": round(cpu / seconds, 2),
    }


def _rematches(settled: list[LogEntry]) -> int:
    """Games of the log (in the order they were settled) whose bots last played each other."""
    last: dict[str, list[str]] = {}
    rematches = 0
    for entry in settled:
        if len(entry.bots) == 2 and last.get(entry.bots[0]) == [entry.bots[1]]:
            rematches += 1
        for key in entry.bots:
            last[key] = [other for other in entry.bots if other != key]
    return rematches


def rating_cpu(count: int = 2000) -> float:
    """Microseconds of CPU per 2-seat rating update (openskill)."""
    rnd = random.Random(1)
    ratings = [Rating(mu=rnd.uniform(15, 35), sigma=rnd.uniform(1, 8)) for _ in range(2)]
    start = time.process_time()
    for i in range(count):
        rate_game(ratings, [1, 2] if i % 2 else [2, 1])
    return (time.process_time() - start) / count * 1e6


async def settle_script(url: str, count: int = 2000) -> float:
    """Microseconds of wall time per settling script, one at a time."""
    store = open_store(url)
    league = store.league
    try:
        before, after = Rating(), rate_game([Rating(), Rating()], [1, 2])
        start = time.perf_counter()
        for i in range(count):
            bots = [f"bench-{i}-{s}" for s in range(2)]
            seats = [
                SettledSeat(
                    bots[s],
                    b"",
                    encode(after[s]),
                    after[s].ordinal,
                    encode([0, 25, 8]),
                    msgspec.json.encode([bots[1 - s]]),
                    s == 0,
                    False,
                )
                for s in range(2)
            ]
            await league.settle(f"bench{i:012x}", "bench", encode(before), 0.0, seats)
        return (time.perf_counter() - start) / count * 1e6
    finally:
        await store.aclose()


def pairings_per_s(pool: int, rounds: int = 20) -> float:
    """Tables ``pair`` seats per second from a pool of ``pool`` waiting bots."""
    rnd = random.Random(2)
    seekers = {f"b{i}": Seek("r", 2, 10.0, rnd.uniform(0, 30), 30.0) for i in range(pool)}
    ratings = {("r", k): Rating(mu=rnd.uniform(10, 40), games=rnd.randrange(50)) for k in seekers}
    tables = 0
    start = time.perf_counter()
    for _ in range(rounds):
        tables += len(pair(seekers, ratings, {}, now=30.0))
    return tables / (time.perf_counter() - start)


async def seek_to_first_turn(url: str, bots: int, round_: int) -> list[float]:
    """Seconds from each of ``bots`` new bots' seek to its first turn."""
    limits = httpx.Limits(max_connections=bots * 2)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        tokens = []
        for i in range(bots):
            made = await http.post("/v1/bots", json={"name": f"bench {round_} {i}"})
            made.raise_for_status()
            tokens.append(made.json()["token"])

        async def one(token: str) -> float:
            headers = {"Authorization": f"Bearer {token}"}
            start = time.perf_counter()
            seek = {"ruleset": DEFAULT, "deadline_s": 1}
            (await http.post("/v1/arena", json=seek, headers=headers)).raise_for_status()
            while True:
                step = await http.get("/v1/me/next", params={"wait": 10}, headers=headers)
                if step.json()["status"] == "your_turn":
                    waited = time.perf_counter() - start
                    await http.delete("/v1/arena", headers=headers)
                    return waited

        return list(await asyncio.gather(*(one(t) for t in tokens)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--arena-seconds", type=float, default=0, help="0: no arena load")
    parser.add_argument("--arena-concurrent", type=int, default=1)
    parser.add_argument("--arena-only", action="store_true", help="the arena load alone")
    parser.add_argument(
        "--arena-warmup", type=float, default=1.0, help="seconds of play before the window"
    )
    args = parser.parse_args()
    if args.arena_only:
        arena = arena_decisions_per_s(
            args.bots, args.arena_seconds or 14, args.arena_concurrent, warmup=args.arena_warmup
        )
        print(json.dumps(arena) if args.json else arena)
        return
    figures: dict[str, object] = {"rating_update_cpu_us": round(rating_cpu(), 1)}
    for pool in (64, 1000):
        figures[f"pairings_per_s_pool_{pool}"] = round(pairings_per_s(pool))
    with tempfile.TemporaryDirectory() as directory:
        valkey = start_embedded(Path(directory) / "valkey")
        try:
            figures["settle_script_us"] = round(asyncio.run(settle_script(valkey.url)), 1)
            process, url = start_referee(valkey.url, env=dict(LOAD_LIMITS))
            try:
                waits: list[float] = []
                for round_ in range(args.rounds):
                    waits += asyncio.run(seek_to_first_turn(url, args.bots, round_))
            finally:
                process.terminate()
                process.wait(timeout=10)
        finally:
            valkey.stop()
    waits.sort()
    figures["bots"] = args.bots
    figures["seek_to_first_turn_p50_s"] = round(statistics.median(waits), 3)
    figures["seek_to_first_turn_p99_s"] = round(
        waits[min(len(waits) - 1, int(len(waits) * 0.99))], 3
    )
    figures["seek_to_first_turn_max_s"] = round(waits[-1], 3)
    if args.arena_seconds:
        figures.update(
            arena_decisions_per_s(
                args.bots, args.arena_seconds, args.arena_concurrent, warmup=args.arena_warmup
            )
        )
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:32} {value}")


if __name__ == "__main__":
    main()
