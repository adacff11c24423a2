"""What the commits channel costs per commit, on each side, as the number of commits grows.

Every commit publishes one message (``<game id> <event id>``) on ``referee:commits``; every
referee process hears every message (``store.games.GameStore.listen``), and on a Redis
Cluster every node carries every message (PUBLISH is broadcast over the cluster bus). This
publishes ``--messages`` such messages, for games nobody waits on, from a client of its own
while idle referee processes listen, and reports the CPU it took:

- ``referee_cpu_us_per_message``: one listening referee process's CPU per message heard;
- ``redis_cpu_us_per_message``: the servers' CPU per message, all nodes together, and
  ``redis_cpu_us_per_message_per_node`` (on a cluster: what each node pays for a message
  published anywhere).

``python benchmarks/heard_commits.py [--messages N] [--local-cluster N] [--replicas R] --json``
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import psutil
import redis

from referee.store.embedded import start_embedded
from referee.store.hearing import channel_of
from referee.tools.bench import _primaries, _redis_cpu_seconds
from referee.tools.launch import LOAD_LIMITS, start_referee
from referee.tools.local_cluster import start_local_cluster


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def measure(messages: int, local_cluster: int, replicas: int) -> dict:
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
        referees = [start_referee(url, env=env)[0] for _ in range(replicas)]
        servers = _primaries(url, bool(cluster))
        time.sleep(1.0)  # the listeners subscribed, the sweepers settled
        watched = [psutil.Process(r.pid) for r in referees]
        publisher = servers[0]
        idle_before = [_cpu(p) for p in watched]
        redis_idle = _redis_cpu_seconds(servers)
        time.sleep(2.0)  # what they spend with no message at all, per second
        idle_rate = [(_cpu(p) - b) / 2.0 for p, b in zip(watched, idle_before, strict=True)]
        redis_idle_rate = (_redis_cpu_seconds(servers) - redis_idle) / 2.0
        before = [_cpu(p) for p in watched]
        redis_before = _redis_cpu_seconds(servers)
        began = time.monotonic()
        batch = 1000
        for start in range(0, messages, batch):
            pipe = publisher.pipeline(transaction=False)
            for i in range(start, min(start + batch, messages)):
                pipe.execute_command("SPUBLISH", channel_of(f"{i:016x}"), f"{i:016x} {i}-0")
            pipe.execute()
        time.sleep(1.0)  # the last messages heard
        elapsed = time.monotonic() - began
        spent = [
            _cpu(p) - b - rate * elapsed
            for p, b, rate in zip(watched, before, idle_rate, strict=True)
        ]
        redis_spent = _redis_cpu_seconds(servers) - redis_before - redis_idle_rate * elapsed
        per_message = max(spent) / messages * 1e6
        return {
            "messages": messages,
            "primaries": len(servers),
            "replicas": replicas,
            "referee_cpu_us_per_message": round(per_message, 2),
            "redis_cpu_us_per_message": round(redis_spent / messages * 1e6, 2),
            "redis_cpu_us_per_message_per_node": round(
                redis_spent / messages / len(servers) * 1e6, 2
            ),
            "publish_seconds": round(elapsed, 2),
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
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--local-cluster", type=int, default=0, metavar="N")
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.messages, args.local_cluster, args.replicas)
    lines = [f"{name:36} {value}" for name, value in figures.items()]
    print(json.dumps(figures) if args.json else "\n".join(lines))


if __name__ == "__main__":
    main()
