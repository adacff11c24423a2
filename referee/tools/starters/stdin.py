#!/usr/bin/env python3
"""A stdin bot with the standard library only: one Turn JSON line in, one move line out.

Run it with `referee bot --exec "python3 bot.py" --url URL --seat-token TOKEN` (or
--entrant-token). It plays legal_moves[seq % len(legal_moves)]: put your strategy there.
"""

import json
import sys


def choose(turn):
    moves = turn["legal_moves"]
    return moves[turn["seq"] % len(moves)]


for line in sys.stdin:
    turn = json.loads(line)
    print(json.dumps(choose(turn)), flush=True)
    print(f"seq {turn['seq']}: {len(turn['legal_moves'])} legal moves", file=sys.stderr)
