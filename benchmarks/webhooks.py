"""Webhook decisions per second beside polled ones, on one machine (issue 37).

One referee process on an embedded Valkey; the same games (the bench's: the default ruleset,
2 seats) played for ``--seconds`` each way, ``--bots`` seats at once:

- polled: ``referee bench``'s own bots (``referee.tools.load``: lean HTTP/1.1, one request
  per decision, long-polled), in a process of their own;
- webhook: both seats of each game are webhook seats; the referee calls a bot server on
  loopback (uvicorn, a bare ASGI app answering the first legal move, in a process of its
  own; it does not check signatures), which creates a new game as each of its games ends,
  as the polled bench's tables do.

The referee does the calling in the second phase, on the same two cores. Decisions are
counted within the window: the polled bots count accepted moves, the bot server the turns it
answered. Beside the rates, the referee process's CPU time (user and system, psutil) per
decision in each phase: a machine that other work loads moves the rates a lot and this much
less (the polled phase's is taken over the whole load run, its start included). Prints one
JSON line. Run from a checkout: ``python benchmarks/webhooks.py``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import msgspec
import psutil

from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, free_port, start_referee
from referee.tools.load import BENCH_GAME, run_load


def _serve_bot(port: int, referee: str, body: dict, turns: Any, created: Any, refused: Any) -> None:
    """The webhook bot: the first legal move for each turn, 204 for start and end; like the
    polled bench's tables, it creates a game as each of its games ends (seat 0's end), and
    counts the creations the referee refused."""
    import asyncio

    import uvicorn

    client: httpx.AsyncClient | None = None
    pending: set[asyncio.Task] = set()

    async def create() -> None:
        nonlocal client
        client = client or httpx.AsyncClient(base_url=referee, timeout=30)
        try:
            reply = await client.post("/v1/games", json=body)
        except httpx.HTTPError:
            refused.value += 1
            return
        if reply.status_code == 201:
            created.value += 1
        else:
            refused.value += 1

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        call = msgspec.json.decode(raw)
        status, out = 204, b""
        if call["type"] == "turn":
            status, out = 200, msgspec.json.encode(call["turn"]["legal_moves"][0])
            turns.value += 1
        elif (call["type"] == "end" and call["turn"]["seat"] == 0) or call["type"] == "seed":
            task = asyncio.create_task(create())
            pending.add(task)
            task.add_done_callback(pending.discard)
        headers = [(b"content-length", str(len(out)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": out})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _cpu_s(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _webhook_phase(url: str, bots: int, seconds: float, referee: psutil.Process) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    turns, created, refused = (context.Value("l", 0, lock=False) for _ in range(3))
    port = free_port()
    hook = {"webhook": {"url": f"http://127.0.0.1:{port}/"}}
    body = {**BENCH_GAME, "seats": [hook, hook], "deadline_s": 30}
    counts = (turns, created, refused)
    server = context.Process(target=_serve_bot, args=(port, url, body, *counts), daemon=True)
    server.start()
    try:
        for _ in range(100):  # the bot server answers
            try:
                httpx.post(f"http://127.0.0.1:{port}/", content=b'{"type": "x"}')
                break
            except httpx.TransportError:
                time.sleep(0.1)
        for _ in range(max(1, bots // 2)):  # its tables: each creates its next game
            httpx.post(f"http://127.0.0.1:{port}/", content=b'{"type": "seed"}')
        time.sleep(2.0)  # warm up, as the polled bots' first games do
        start_turns, start, cpu = turns.value, time.monotonic(), _cpu_s(referee)
        time.sleep(seconds)
        decisions = turns.value - start_turns
        elapsed = time.monotonic() - start
        cpu = _cpu_s(referee) - cpu
    finally:
        server.kill()
        server.join(timeout=5)
    return {
        "decisions": decisions,
        "elapsed": elapsed,
        "games_created": created.value,
        "creations_refused": refused.value,
        "cpu_s": cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--bots", type=int, default=64, help="seats deciding at once")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    data = tempfile.mkdtemp(prefix="referee-webhook-bench-")
    valkey = start_embedded(data, persist=False)
    env = {
        **LOAD_LIMITS,
        "REFEREE_WEBHOOK_ALLOW": "127.0.0.1",
        # one host serves every seat here: as many calls at once as there are seats
        "REFEREE_WEBHOOK_PER_HOST": str(args.bots),
    }
    referee, url = start_referee(valkey.url, env=env)
    try:
        process = psutil.Process(referee.pid)
        cpu = _cpu_s(process)
        (polled,) = run_load("games", url, args.bots, 1, args.seconds)
        polled_cpu = _cpu_s(process) - cpu
        webhook = _webhook_phase(url, args.bots, args.seconds, process)
    finally:
        referee.terminate()
        referee.wait(timeout=15)
        valkey.stop()
        shutil.rmtree(data, ignore_errors=True)
    polled_rate = polled["decisions"] / polled["elapsed"]
    webhook_rate = webhook["decisions"] / webhook["elapsed"]
    polled_us = 1e6 * polled_cpu / max(1, polled["decisions"])
    webhook_us = 1e6 * webhook["cpu_s"] / max(1, webhook["decisions"])
    print(
        json.dumps(
            {
                "label": args.label,
                "bots": args.bots,
                "seconds": args.seconds,
                "polled_decisions_per_s": round(polled_rate, 1),
                "webhook_decisions_per_s": round(webhook_rate, 1),
                "webhook_over_polled": round(webhook_rate / polled_rate, 3),
                "webhook_games_created": webhook["games_created"],
                # the polled bots' refused or failed requests; the webhook bot's creations
                # the referee refused (its calls' failures show as fewer decisions)
                "polled_errors": polled["errors"],
                "webhook_creations_refused": webhook["creations_refused"],
                "referee_cpu_us_per_polled_decision": round(polled_us, 1),
                "referee_cpu_us_per_webhook_decision": round(webhook_us, 1),
                "polled_over_webhook_cpu": round(polled_us / webhook_us, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
