"""Rules-engine speed, in-process on one core: CHOICE solitaire self-play and CHOPTA scoring.

Run: python benchmarks/rules.py [--games N] [--areas N] [--json]
Targets (issue: rules engines): >= 2,000 CHOICE solitaire games/s of random legal self-play;
scoring a 30-die CHOPTA area in <= 50 µs.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from referee.games import get_ruleset
from referee.rulesets.chopta.scoring import _best, score_area


def choice_solitaire(games: int, warmup: int = 300) -> dict:
    ruleset = get_ruleset("choice")
    rnd = random.Random(2026)
    decisions = 0
    for game in range(-warmup, games):  # warm-up games (negative ids) are not timed
        if game == 0:
            decisions = 0
            start = time.perf_counter()
        state = ruleset.create({}, 1, game.to_bytes(8, "big", signed=True))
        while not state.finished:
            ruleset.decide(state, 0, [rnd.choice(ruleset.legal_moves(state, 0))])
            decisions += 1
    elapsed = time.perf_counter() - start
    return {
        "choice_games": games,
        "choice_games_per_s": round(games / elapsed),
        "choice_decisions_per_s": round(decisions / elapsed),
    }


def chopta_scoring(areas: int) -> dict:
    rnd = random.Random(7)
    samples = [[rnd.randint(1, 6) for _ in range(30)] for _ in range(areas)]
    results = {}
    for options in ({}, {"bonus": True, "face_value": True}):
        _best.cache_clear()
        start = time.perf_counter()
        for area in samples:
            score_area(area, **options)
        cold = (time.perf_counter() - start) / areas * 1e6
        name = "chopta_score_30_dice_us" + ("_bonus_face" if options else "")
        results[name] = round(cold, 1)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4_000)
    parser.add_argument("--areas", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {**choice_solitaire(args.games), **chopta_scoring(args.areas)}
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:38} {value}")


if __name__ == "__main__":
    main()
