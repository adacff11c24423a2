"""The referee beside boardgame.io 0.50.2, in one run on this machine: boardgame.io's server
(in memory) with 32 two-seat games played through its socket.io client
(``benchmarks/boardgameio/``), then ``referee bench``'s games (64 bots, one request per
decision), alternated ``--rounds`` times so that the machine's drift weighs on both. Prints
decisions per second and p99 of each, and the ratio of the referee's slowest round to
boardgame.io's fastest.

    (cd benchmarks/boardgameio && npm ci) && python benchmarks/versus_boardgameio.py [--json]

boardgame.io's game is a two-seat dice game of CHOICE's shape (five dice split into two pairs
and a fifth die, 16 decisions a seat), its players taking turns; its latency is a move sent
until its new state is in the player's hands. The referee's p99 is a decision that waits on no
one (``referee bench``'s ``p99_ms``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from referee.tools.bench import run_bench

HARNESS = Path(__file__).parent / "boardgameio"


def boardgameio(games: int, seconds: float) -> dict:
    if not (HARNESS / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HARNESS, check=True)
    result = subprocess.run(
        ["node", "bench.cjs", "--games", str(games), "--seconds", str(seconds)],
        cwd=HARNESS,
        capture_output=True,
        text=True,
        timeout=seconds + 120,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="alternations (default 2)")
    parser.add_argument("--seconds", type=float, default=20, help="load time each (default 20)")
    parser.add_argument("--games", type=int, default=32, help="boardgame.io games (default 32)")
    parser.add_argument("--bots", type=int, default=64, help="referee bots (default 64)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per run")
    args = parser.parse_args(argv)
    if shutil.which("node") is None:
        sys.exit("node is needed for boardgame.io's side")
    runs = []
    for _ in range(args.rounds):
        theirs = boardgameio(args.games, args.seconds)
        ours = run_bench(seconds=args.seconds, bots=args.bots)
        runs.append({"system": theirs["system"], **theirs})
        runs.append(
            {
                "system": "referee",
                **{
                    k: ours[k]
                    for k in ("decisions_per_s", "p99_ms", "p99_waited_ms", "errors", "bots")
                },
            }
        )
        if args.json:
            print(json.dumps(runs[-2]), flush=True)
            print(json.dumps(runs[-1]), flush=True)
        else:
            for run in runs[-2:]:
                print(
                    f"{run['system']:<20} {run['decisions_per_s']:>9.1f} decisions/s"
                    f"   p99 {run['p99_ms']:.1f} ms",
                    flush=True,
                )
    theirs_best = max(r["decisions_per_s"] for r in runs if r["system"] != "referee")
    ours_worst = min(r["decisions_per_s"] for r in runs if r["system"] == "referee")
    summary = {
        "ratio_worst_to_best": round(ours_worst / theirs_best, 2),
        "referee_p99_ms_max": max(r["p99_ms"] for r in runs if r["system"] == "referee"),
    }
    print(
        json.dumps(summary)
        if args.json
        else f"referee's slowest round / boardgame.io's fastest: {summary['ratio_worst_to_best']}x;"
        f" the referee's largest p99: {summary['referee_p99_ms_max']} ms"
    )


if __name__ == "__main__":
    main()
