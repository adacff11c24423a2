"""Instructions the referee spends per request, counted by callgrind: figures that do not drift.

Run: python benchmarks/server_instructions.py [--games 6] [--healthz 300] [--bots 16]
[--arena 16] [--deadline S] [--json]

This machine's speed varies between runs by up to a third, so small changes to the request
path cannot be told apart by `referee bench`. Here the referee runs under
`valgrind --tool=callgrind` (about 50x slower), a single client plays whole 2-seat CHOICE
games one request at a time (GET /turn, POST /moves), and the server's user-space
instructions are counted after a warm-up. With ``--bots N``, N bots also play at once, as in
``referee bench``, and their game requests are counted the same way. The same code gives the
same count within about half a percent for the same games; games are dealt at random, and
their lengths move the sequential figure by about 3 % (a game's creation is counted in it,
shared by fewer requests in a shorter game), so the same number of games is then created
(``creation``, per game) and played (``game_request``, per request, no creation) apart.
With ``--idle S``, the process's instructions per second with no request are counted too,
and each figure is also given net of them over its run's wall time (``*_net_*``): under load
from other processes a run takes longer, and its timers fire more often. Needs valgrind
(Debian's package); not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, answers, free_port
from referee.tools.load import BENCH_GAME, play_game, run_load

#: how the harness's games are created (``--deadline`` gives them a deadline)
GAME = dict(BENCH_GAME)


def play(url: str, games: int) -> int:
    """Whole bench games, one request at a time; returns the requests made."""
    with httpx.Client(base_url=url, timeout=600) as http:
        return sum(play_game(http, GAME)[1] for _ in range(games))


def create(url: str, count: int, games: list[dict]) -> int:
    """``count`` bench games created, each kept in ``games``; returns ``count``."""
    with httpx.Client(base_url=url, timeout=600) as http:
        for _ in range(count):
            games.append(http.post("/v1/games", json=GAME).json())
    return count


def play_created(url: str, games: list[dict]) -> int:
    """The games ``create`` made, played to their end as ``play_game`` plays (each seat in
    turn asks for its turn and posts its first legal move); returns the requests made."""
    requests = 0
    with httpx.Client(base_url=url, timeout=600) as http:
        for game in games:
            tokens = [seat["token"] for seat in game["seats"]]
            path = f"/v1/games/{game['id']}"
            finished = False
            while not finished:
                for token in tokens:
                    headers = {"Authorization": f"Bearer {token}"}
                    turn = http.get(f"{path}/turn", headers=headers).json()
                    requests += 1
                    if turn["status"] == "finished":
                        finished = True
                        break
                    if turn["status"] == "your_turn":
                        move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
                        http.post(f"{path}/moves", headers=headers, json=move)
                        requests += 1
    return requests


def healthz(url: str, count: int) -> int:
    with httpx.Client(base_url=url, timeout=600) as http:
        for _ in range(count):
            http.get("/healthz")
    return count


def concurrent(url: str, bots: int, seconds: float) -> int:
    """``bots`` bots playing at once, as in ``referee bench``, for ``seconds``; returns the
    game requests answered (the games' creation is counted in the instructions, not here)."""
    results = run_load("games", url, bots, 1, seconds)
    return sum(r["turn"] + r["moves"] for r in results)


def arena(url: str, bots: int, seconds: float) -> int:
    """``bots`` bot accounts playing the arena at once (``benchmarks/league.py``'s bots: one
    request per decision, ``POST /v1/me/games/{id}/moves?wait=``) for ``seconds``; returns
    the decisions answered (their registrations and joins are counted in the instructions)."""
    from league import arena_bots  # benchmarks/league.py, beside this script

    names = [f"arena {i}" for i in range(bots)]
    return int(asyncio.run(arena_bots(url, names, seconds, 1))["decisions"])


def _counted(out: Path, pid: int) -> tuple[int, Path, float]:
    """Zero the counters before, dump after: the instructions of what ran in between, the
    dump that counted them, and when it was asked for."""
    subprocess.run(["callgrind_control", "-d", str(pid)], capture_output=True, check=True)
    dumped = time.monotonic()
    time.sleep(1)
    dumps = sorted(out.parent.glob(out.name + ".*"), key=lambda p: p.stat().st_mtime)
    for line in dumps[-1].read_text(errors="ignore").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1]), dumps[-1], dumped
    raise RuntimeError("callgrind wrote no totals")


def measure(
    games: int,
    health_requests: int,
    bots: int = 0,
    seconds: float = 60,
    keep: Path | None = None,
    idle: float = 0,
    arena_bots: int = 0,
) -> dict[str, float]:
    """The figures; with ``keep``, each run's callgrind dump is copied there as
    ``<run>.callgrind`` (for ``callgrind_annotate --inclusive=yes``)."""
    workdir = Path(tempfile.mkdtemp(prefix="referee-instructions-"))
    valkey = start_embedded(workdir / "valkey", persist=False)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    out = workdir / "callgrind.out"
    server = subprocess.Popen(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "referee.cli",
            "serve",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        env={**os.environ, **LOAD_LIMITS, "REDIS_URL": valkey.url},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if not answers(server, url + "/readyz", within=300, patience=10):
            raise RuntimeError("the referee did not start under valgrind")
        play(url, 2)  # warm-up: imports, caches, the Lua script
        healthz(url, 20)
        figures: dict[str, float] = {}
        if idle:
            # what the process spends with no request at all (its timers: uvicorn's clock, the
            # store's watchdog and sweeps, the subscription's PING), per second of wall time:
            # under load from other processes a run takes longer, and these timers then add
            # more to its count
            zeroed = time.monotonic()
            subprocess.run(["callgrind_control", "-z", str(server.pid)], capture_output=True)
            time.sleep(idle)
            counted, _, dumped = _counted(out, server.pid)
            figures["idle_instructions_per_second"] = round(counted / (dumped - zeroed))
        created: list[dict] = []
        runs = [
            ("game", lambda: play(url, games)),
            # the same, with the games' creation counted apart: how many requests a game
            # takes varies with its dice, and moves the figure above by a few per cent
            ("creation", lambda: create(url, games, created)),
            ("game_request", lambda: play_created(url, created)),
            ("healthz", lambda: healthz(url, health_requests)),
        ]
        if bots:
            runs.append((f"game_{bots}_bots", lambda: concurrent(url, bots, seconds)))
        if arena_bots:
            # per decision (one request each, as the bots' game requests above)
            runs.append((f"arena_{arena_bots}_bots", lambda: arena(url, arena_bots, seconds)))
        for name, run in runs:
            zeroed = time.monotonic()
            subprocess.run(["callgrind_control", "-z", str(server.pid)], capture_output=True)
            requests = run()
            figures[f"{name}_requests"] = requests
            counted, dump, dumped = _counted(out, server.pid)
            elapsed = dumped - zeroed
            figures[f"{name}_seconds"] = round(elapsed, 1)
            figures[f"{name}_instructions_per_request"] = counted // requests
            if idle:
                # the same, less what the process's timers spent in the run's wall time
                background = figures["idle_instructions_per_second"] * elapsed
                figures[f"{name}_net_instructions_per_request"] = round(
                    (counted - background) / requests
                )
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(dump, keep / f"{name}.callgrind")
        figures["ratio"] = round(
            figures["healthz_instructions_per_request"] / figures["game_instructions_per_request"],
            3,
        )
        return figures
    finally:
        server.terminate()
        server.wait(timeout=60)
        valkey.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--healthz", type=int, default=300)
    parser.add_argument(
        "--bots", type=int, default=0, help="also count game requests with this many bots at once"
    )
    parser.add_argument("--seconds", type=float, default=60, help="how long the bots play")
    parser.add_argument(
        "--keep", type=Path, help="copy each run's callgrind dump into this directory"
    )
    parser.add_argument(
        "--idle", type=float, default=0, help="also count this many seconds with no request"
    )
    parser.add_argument(
        "--arena", type=int, default=0, help="also count arena decisions with this many bots"
    )
    parser.add_argument(
        "--deadline", type=float, default=0, help="the games' deadline_s (0: none, as the bench's)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    GAME["deadline_s"] = args.deadline
    figures = measure(
        args.games, args.healthz, args.bots, args.seconds, args.keep, args.idle, args.arena
    )
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:36} {value}")


if __name__ == "__main__":
    main()
