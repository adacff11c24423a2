"""A bounded soak: bots play for a while against a referee on its embedded Valkey, with bursts
of event streams beside them, and the referee's resident memory, open files and Redis
connections and memory are sampled as they go. Not in CI: ten minutes by default.

    python benchmarks/soak.py [--minutes 10] [--bots 16] [--sample-s 10] [--json]

Each sample is a line (JSON with --json); the last line sums up the growth between the first
full minute and the end, which should be flat for resident memory, files and connections,
and bounded for Redis memory (finished games expire after their retention, set short here).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil
import redis

sys.path.insert(0, str(Path(__file__).parents[1]))

from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, start_referee
from referee.tools.load import BENCH_GAME, run_load


def _sample(started: float, referee: psutil.Process, store: redis.Redis) -> dict:
    info = store.info()
    return {
        "t_s": round(time.monotonic() - started),
        "referee_rss_mb": round(referee.memory_info().rss / 2**20, 1),
        "referee_fds": referee.num_fds(),
        "redis_clients": info["connected_clients"],
        "redis_used_mb": round(info["used_memory"] / 2**20, 2),
        "redis_keys": store.dbsize(),
    }


def _stream_bursts(url: str, stop: threading.Event, every_s: float) -> None:
    """Now and then, twenty event streams opened at once, held a moment and dropped."""
    with httpx.Client(base_url=url, timeout=10) as http:
        game = http.post("/v1/games", json=BENCH_GAME).json()
    while not stop.wait(every_s):
        clients = [httpx.Client(base_url=url, timeout=10) for _ in range(20)]
        streams = [c.stream("GET", f"/v1/games/{game['id']}/events") for c in clients]
        for stream in streams:
            stream.__enter__()
        time.sleep(1)
        for stream, client in zip(streams, clients, strict=True):
            stream.__exit__(None, None, None)
            client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--sample-s", type=float, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="referee-soak-")
    valkey = start_embedded(data_dir, persist=False)
    env = {**LOAD_LIMITS, "REFEREE_RETENTION_S": "60", "REFEREE_EVENTS_RETENTION_S": "30"}
    referee, url = start_referee(valkey.url, env=env)
    store = redis.Redis.from_url(valkey.url)
    process = psutil.Process(referee.pid)
    seconds = args.minutes * 60
    results: list[dict] = []
    load = threading.Thread(
        target=lambda: results.extend(run_load("games", url, args.bots, 1, seconds))
    )
    stop = threading.Event()
    bursts = threading.Thread(target=_stream_bursts, args=(url, stop, 15.0), daemon=True)
    samples = []
    try:
        started = time.monotonic()
        load.start()
        bursts.start()
        while load.is_alive():
            load.join(timeout=args.sample_s)
            samples.append(_sample(started, process, store))
            line = samples[-1]
            print(json.dumps(line) if args.json else "  ".join(f"{k}={v}" for k, v in line.items()))
        stop.set()
        settled = [s for s in samples if s["t_s"] >= 60] or samples
        first, last = settled[0], samples[-1]
        summary = {
            "minutes": args.minutes,
            "bots": args.bots,
            "decisions": sum(r["decisions"] for r in results),
            "errors": sum(r["errors"] for r in results),
            **{
                f"{name}_growth": round(last[name] - first[name], 2)
                for name in ("referee_rss_mb", "referee_fds", "redis_clients", "redis_used_mb")
            },
            "referee_rss_mb_max": max(s["referee_rss_mb"] for s in samples),
            "referee_fds_max": max(s["referee_fds"] for s in samples),
            "redis_clients_max": max(s["redis_clients"] for s in samples),
        }
        print(json.dumps(summary))
        return 0
    finally:
        stop.set()
        referee.terminate()
        referee.wait(timeout=20)
        store.close()
        valkey.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
