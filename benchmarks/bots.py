"""Mean CHOICE solitaire score of each reference bot over seeded games, in-process.

Run: python benchmarks/bots.py [--games 2000] [--ruleset choice] [--json]
For reference (issue: clients and bots): uniform random play averages about -1,220, a one-step
greedy about -350; ``strong`` must average above 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import msgspec

from referee.bots import bot_names, get_bot
from referee.games import get_ruleset


def play(ruleset_id: str, bot_name: str, seed: int) -> int:
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create({}, 1, b"bots-benchmark/" + seed.to_bytes(8, "big"))
    choose = get_bot(ruleset_id, bot_name, seed)
    while not ruleset.finished(state):
        legal = ruleset.legal_moves(state, 0)
        view = msgspec.json.decode(msgspec.json.encode(ruleset.view(state, 0)))  # as a bot gets it
        turn = {"legal_moves": msgspec.to_builtins(legal), "view": view}
        move = msgspec.convert(choose(turn), ruleset.Move)
        ruleset.decide(state, 0, [move])
    return ruleset.totals(state)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--ruleset", default="choice", choices=["choice", "choice-specials"])
    parser.add_argument("--bots", nargs="*", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {}
    for name in args.bots or bot_names(args.ruleset):
        started = time.perf_counter()
        scores = [play(args.ruleset, name, seed) for seed in range(args.games)]
        figures[name] = {
            "mean": round(statistics.fmean(scores), 1),
            "stdev": round(statistics.pstdev(scores), 1),
            "games": args.games,
            "seconds": round(time.perf_counter() - started, 1),
        }
    if args.json:
        print(json.dumps({"ruleset": args.ruleset, "bots": figures}))
    else:
        for name, fig in figures.items():
            print(
                f"{name:8} mean {fig['mean']:8.1f}  stdev {fig['stdev']:7.1f}  "
                f"({fig['games']} games, {fig['seconds']} s)"
            )


if __name__ == "__main__":
    main()
