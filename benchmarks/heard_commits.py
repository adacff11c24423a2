"""What hearing commits costs a referee process as the platform's commit rate grows.

Every commit publishes one message (``<game id> <event id>``) with ``SPUBLISH`` on its game's
channel (``store.hearing``), and a referee process subscribes only to the channels of the games
it serves waiters on. This starts a Valkey (``--local-cluster N``: N primaries on loopback) and
``--replicas`` referee processes, has ``--watched`` games each with a seat long-polling on one of
the referees (their channels subscribed), then publishes commits of other games (that no one
there waits on) at growing rates, ``--seconds`` each, from a client of its own, each message on
its slot's primary, and reports per rate:

- ``referee_cores``: each referee process's CPU meanwhile, beyond its idle rate (cores);
- ``redis_cores``: the servers' CPU, all nodes together, and per message published.

``python benchmarks/heard_commits.py [--rates 0 5000 20000 …] [--local-cluster N] --json``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil
import redis

from referee.store.cluster import slot_of
from referee.store.embedded import start_embedded
from referee.store.hearing import channel_of
from referee.tools.bench import _primaries, redis_cpu_seconds
from referee.tools.launch import LOAD_LIMITS, start_referee
from referee.tools.load import BENCH_GAME
from referee.tools.local_cluster import start_local_cluster


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def _watch(urls: list[str], watched: int, seconds: float) -> tuple[threading.Thread, list[str]]:
    """``watched`` games, seat 0 of each decided and long-polling (``seconds``) on one of the
    referees, from a thread of its own; their ids."""
    ids: list[str] = []
    seats: list[tuple[str, str, str]] = []
    with httpx.Client(base_url=urls[0], timeout=30) as http:
        for i in range(watched):
            game = http.post("/v1/games", json=BENCH_GAME).json()
            token = game["seats"][0]["token"]
            auth = {"Authorization": f"Bearer {token}"}
            path = f"/v1/games/{game['id']}"
            turn = http.get(path + "/turn", headers=auth).json()
            move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
            http.post(path + "/moves", headers=auth, json=move)
            ids.append(game["id"])
            seats.append((urls[i % len(urls)], path, token))

    async def waits() -> None:
        limits = httpx.Limits(max_connections=watched + 8)
        async with httpx.AsyncClient(timeout=seconds + 30, limits=limits) as client:
            await asyncio.gather(
                *(
                    client.get(
                        f"{url}{path}/turn?wait={seconds:g}",
                        headers={"Authorization": f"Bearer {token}"},
                    )
                    for url, path, token in seats
                ),
                return_exceptions=True,
            )

    thread = threading.Thread(target=lambda: asyncio.run(waits()), daemon=True)
    thread.start()
    return thread, ids


def _owners(url: str, cluster: bool, servers: list[redis.Redis]) -> list[redis.Redis]:
    """Slot -> the client of its primary."""
    if not cluster:
        return [servers[0]] * 16384
    by_port = {s.connection_pool.connection_kwargs["port"]: s for s in servers}
    owners: list[redis.Redis] = [servers[0]] * 16384
    for start, end, primary, *_ in servers[0].execute_command("CLUSTER", "SLOTS"):
        owners[start : end + 1] = [by_port[primary[1]]] * (end - start + 1)
    return owners


def measure(rates: list[int], seconds: float, local_cluster: int, replicas: int, watched: int):
    directory = tempfile.mkdtemp(prefix="referee-heard-")
    embedded = cluster = None
    if local_cluster:
        cluster = start_local_cluster(local_cluster, Path(directory))
        url = cluster.url
    else:
        embedded = start_embedded(directory, persist=False)
        url = embedded.url
    referees = []
    servers: list[redis.Redis] = []
    try:
        env = {**LOAD_LIMITS, "REFEREE_REDIS_CLUSTER": "1" if cluster else "0"}
        started = [start_referee(url, env=env) for _ in range(replicas)]
        referees = [process for process, _ in started]
        servers = _primaries(url, bool(cluster))
        owners = _owners(url, bool(cluster), servers)
        total_s = seconds * (len(rates) + 1) + 10
        waiter, ids = _watch([u for _, u in started], watched, total_s)
        time.sleep(2.0)  # every waiter subscribed
        subscribed = sum(
            owners[slot_of(channel_of(g))].pubsub_shardnumsub(channel_of(g))[0][1] for g in ids
        )
        processes = [psutil.Process(r.pid) for r in referees]
        before = [_cpu(p) for p in processes]
        redis_before = redis_cpu_seconds(servers)
        time.sleep(seconds)
        idle = [(_cpu(p) - b) / seconds for p, b in zip(processes, before, strict=True)]
        redis_idle = (redis_cpu_seconds(servers) - redis_before) / seconds
        rnd = random.Random(1)
        phases = []
        for rate in rates:
            before = [_cpu(p) for p in processes]
            redis_before = redis_cpu_seconds(servers)
            began = time.monotonic()
            published = 0
            tick = 0.05
            while time.monotonic() - began < seconds:
                due = int(rate * (time.monotonic() - began + tick)) - published
                batches: dict[int, redis.client.Pipeline] = {}
                for _ in range(max(0, due)):
                    game_id = f"{rnd.getrandbits(64):016x}"
                    channel = channel_of(game_id)
                    owner = owners[slot_of(channel)]
                    pipe = batches.get(id(owner))
                    if pipe is None:
                        pipe = batches[id(owner)] = owner.pipeline(transaction=False)
                    pipe.execute_command("SPUBLISH", channel, f"{game_id} 1-0")
                for pipe in batches.values():
                    pipe.execute()
                published += max(0, due)
                time.sleep(max(0.0, began + (published / rate if rate else 0) - time.monotonic()))
                if not rate:
                    time.sleep(tick)
            elapsed = time.monotonic() - began
            spent = [
                (_cpu(p) - b) / elapsed - i for p, b, i in zip(processes, before, idle, strict=True)
            ]
            redis_spent = (redis_cpu_seconds(servers) - redis_before) / elapsed - redis_idle
            phases.append(
                {
                    "commits_per_s": round(published / elapsed),
                    "referee_cores": [round(s, 4) for s in spent],
                    "redis_cores": round(redis_spent, 3),
                    # none at rate 0: the servers' CPU beyond idle is then noise, not a cost
                    "redis_cpu_us_per_commit_all_nodes": (
                        round(redis_spent / (published / elapsed) * 1e6, 2) if published else None
                    ),
                }
            )
        return {
            "primaries": len(servers),
            "replicas": replicas,
            "watched_games": watched,
            "watched_channels_subscribed": subscribed,
            "referee_idle_cores": [round(i, 4) for i in idle],
            "seconds_per_rate": seconds,
            "phases": phases,
            "waiters_alive": waiter.is_alive(),
        }
    finally:
        for referee in referees:
            referee.terminate()
            referee.wait(timeout=15)
        for server in servers:
            server.close()
        if embedded is not None:
            embedded.stop()
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=int, nargs="+", default=[0, 2000, 8000, 32000])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--local-cluster", type=int, default=0, metavar="N")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--watched", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.rates, args.seconds, args.local_cluster, args.replicas, args.watched)
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
