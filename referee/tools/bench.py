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
   own calls included; the servers' own CPU per decision (``INFO cpu``), so that capacity is
   planned from both sides; and the memory of one finished game with its record.

``--redis-url`` measures on a server of your own instead (nothing in it is flushed: the
figures are differences), ``--cluster`` on a Redis Cluster (figures summed over every
primary), ``--local-cluster N`` on N Valkey primaries started on loopback for the run.

Every load generator is a separate process talking only HTTP.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
import redis

from ..store import SCRIPT_COMMANDS, GameKeys
from ..store.embedded import start_embedded
from .launch import LOAD_LIMITS, start_referee
from .load import BENCH_GAME, play_game, run_load
from .local_cluster import start_local_cluster

__all__ = ["command_calls", "cpu_seconds", "main", "redis_cpu_seconds", "run_bench"]


# --- the referee's own CPU ---------------------------------------------------------------


def cpu_seconds(process: psutil.Process) -> float:
    """CPU time (user + system) of the referee: its process and any worker processes."""
    total = 0.0
    for each in (process, *process.children(recursive=True)):
        with contextlib.suppress(psutil.NoSuchProcess):
            times = each.cpu_times()
            total += times.user + times.system
    return total


# --- Redis figures -------------------------------------------------------------------------


def _primaries(url: str, cluster: bool) -> list[redis.Redis]:
    """A client per server whose figures count: the one server, or every primary."""
    if not cluster:
        return [redis.Redis.from_url(url)]
    with redis.RedisCluster.from_url(url) as seed:
        nodes = seed.get_primaries()
    seed = redis.ConnectionPool.from_url(url)  # password, TLS: as the URL says
    return [
        redis.Redis(
            connection_pool=redis.ConnectionPool(
                connection_class=seed.connection_class,
                **{**seed.connection_kwargs, "host": node.host, "port": node.port},
            )
        )
        for node in nodes
    ]


def command_calls(servers: list[redis.Redis]) -> tuple[int, int]:
    """Commands the servers ran (also those a script called) and commands clients sent."""
    calls: dict[str, int] = {}
    for server in servers:
        for name, figures in server.info("commandstats").items():
            if not name.endswith(("info", "config", "resetstat")):
                command = name.removeprefix("cmdstat_")
                calls[command] = calls.get(command, 0) + figures["calls"]
    ran = sum(calls.values())
    return ran, ran - sum(calls.get(name, 0) for name in SCRIPT_COMMANDS)


def _reads(servers: list[redis.Redis]) -> int:
    """Reads of a client's socket the servers processed so far: fewer a decision, the more
    commands each of the referee's writes carried (``SharedConnection`` writes everything
    queued in one turn of its loop together)."""
    return sum(int(server.info("stats")["total_reads_processed"]) for server in servers)


def redis_cpu_seconds(servers: list[redis.Redis]) -> float:
    """CPU time (user + system, main thread and the rest) of the servers so far."""
    total = 0.0
    for server in servers:
        cpu = server.info("cpu")
        total += float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
    return total


def _bytes_per_game(
    client: redis.Redis | redis.RedisCluster, url: str, games: int = 5
) -> dict[str, int]:
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


def _live_games(url: str, count: int) -> list[str]:
    """Idle running games that no bot touches: latency must not grow with them."""
    with httpx.Client(base_url=url, timeout=30) as http:
        return [http.post("/v1/games", json=BENCH_GAME).json()["id"] for _ in range(count)]


def _bytes_per_live_game(client: redis.Redis | redis.RedisCluster, game_ids: list[str]) -> int:
    """Memory of a 2-seat CHOICE game as it starts (document and event stream)."""
    sizes = [
        sum(client.memory_usage(key) or 0 for key in GameKeys(game_id).all())
        for game_id in game_ids
    ]
    return round(statistics.mean(sizes)) if sizes else 0


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=1000, method="inclusive")[int(q * 1000) - 1]


def _measured_load(
    kind: str, url: str, bots: int, processes: int, seconds: float, server: psutil.Process
) -> tuple[list[dict[str, Any]], float]:
    """One load phase's results, with the referee's CPU seconds meanwhile."""
    cpu_before = cpu_seconds(server)
    results = run_load(kind, url, bots, processes, seconds)
    return results, cpu_seconds(server) - cpu_before


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
    appendfsync: str = "everysec",
    redis_url: str | None = None,
    cluster: bool = False,
    local_cluster: int = 0,
) -> dict[str, Any]:
    """The figures, on an embedded Valkey; or on the server at ``redis_url`` (with
    ``cluster``: a node of a Redis Cluster, figures summed over its primaries); or on a
    cluster of ``local_cluster`` primaries started on loopback for the run."""
    started = time.monotonic()
    data_dir = tempfile.mkdtemp(prefix="referee-bench-")
    valkey = local = None
    if local_cluster:
        local = start_local_cluster(local_cluster, Path(data_dir))
        redis_url, cluster = local.url, True
    elif redis_url is None:
        valkey = start_embedded(data_dir, persist=False, appendfsync=appendfsync)
        redis_url = valkey.url
    referee = None
    servers: list[redis.Redis] = []
    try:
        env = {**LOAD_LIMITS, "REFEREE_REDIS_CLUSTER": "1" if cluster else "0"}
        referee, url = start_referee(redis_url, workers, env=env)
        servers = _primaries(redis_url, cluster)
        client = redis.RedisCluster.from_url(redis_url) if cluster else servers[0]
        live = _live_games(url, live_games)
        server = psutil.Process(referee.pid)
        # the ceiling is measured in two halves, before and after the games, so that a drift
        # of the machine's speed during the run weighs on both sides of the ratio alike
        before = _ceiling_phase(url, bots, processes, seconds * 0.15, server)
        ran_before, sent_before = command_calls(servers)
        redis_cpu, reads = redis_cpu_seconds(servers), _reads(servers)
        games, games_cpu = _measured_load("games", url, bots, processes, seconds * 0.7, server)
        redis_cpu, reads = redis_cpu_seconds(servers) - redis_cpu, _reads(servers) - reads
        ran_after, sent_after = command_calls(servers)
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
        waited = [x for r in games for x in r["waited"]]
        ceiling_latencies = before["latencies"] + after["latencies"]
        memory = _bytes_per_game(client, url)
        live_bytes = _bytes_per_live_game(client, live)
        figures = {
            "ceiling_rps": round(ceiling_rps, 1),
            "ceiling_rps_before": round(before["requests"] / before["elapsed"], 1),
            "ceiling_rps_after": round(after["requests"] / after["elapsed"], 1),
            "decisions_per_s": round(decisions / elapsed, 1),
            "game_requests_per_s": round(requests / elapsed, 1),
            "ratio": round(requests / elapsed / ceiling_rps, 3),
            # a bot's game request carries a decision and its next turn: decisions per
            # /healthz is the figure that does not depend on how a loop splits its requests
            "decision_ratio": round(decisions / elapsed / ceiling_rps, 3),
            "referee_cores_ceiling": round(ceiling_cpu / ceiling_elapsed, 2),
            "referee_cores_games": round(games_cpu / elapsed, 2),
            "referee_cpu_us_per_healthz": round(healthz_cpu_us, 1),
            "referee_cpu_us_per_game_request": round(game_cpu_us, 1),
            "cpu_ratio": round(healthz_cpu_us / max(game_cpu_us, 1e-9), 3),
            "p50_ms": round(_percentile(latencies, 0.5), 2),
            "p99_ms": round(_percentile(latencies, 0.99), 2),
            "p99_waited_ms": round(_percentile(waited, 0.99), 2),
            # the stack's own latency floor at the same concurrency: GET /healthz
            "ceiling_p50_ms": round(_percentile(ceiling_latencies, 0.5), 2),
            "ceiling_p99_ms": round(_percentile(ceiling_latencies, 0.99), 2),
            "redis_round_trips_per_decision": round(sent / max(decisions, 1), 2),
            "redis_calls_per_decision": round(calls / max(decisions, 1), 2),
            # how the referee's commands reach the servers: in few large writes, or many
            "redis_reads_per_decision": round(reads / max(decisions, 1), 3),
            # the servers' own CPU while the games played (every primary's, on a cluster)
            "redis_cores_games": round(redis_cpu / elapsed, 2),
            "redis_cpu_us_per_decision": round(redis_cpu / max(decisions, 1) * 1e6, 1),
            "redis_bytes_per_live_game": live_bytes,
            "redis_bytes_per_game": memory["mean"],
            "redis_bytes_per_game_max": memory["max"],
            "redis_bytes_per_game_retained": memory["retained"],
            "games_finished": sum(r["games"] for r in games),
            "errors": sum(r["errors"] for r in games),
            "workers": workers,
            "bots": bots,
            "live_games": live_games,
            "appendfsync": appendfsync if valkey is not None else None,
            "redis_primaries": len(servers),
            "seconds": round(time.monotonic() - started, 1),
        }
        client.close()
        return figures
    finally:
        if referee is not None:
            referee.terminate()
            referee.wait(timeout=15)
        for each in servers:
            each.close()
        if valkey is not None:
            valkey.stop()
        if local is not None:
            local.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def main(args: Any) -> int:
    if args.cluster and not args.redis_url:
        print("--cluster needs --redis-url: a node of the cluster (or --local-cluster N)")
        return 2
    figures = run_bench(
        args.seconds,
        args.workers,
        args.bots,
        args.live_games,
        appendfsync=args.appendfsync,
        redis_url=args.redis_url,
        cluster=args.cluster,
        local_cluster=args.local_cluster,
    )
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:28} {value}")
    return 0
