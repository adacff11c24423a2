#!/usr/bin/env python3
"""A polling bot with the standard library only: it asks for its turn (long-polled), posts a
move, and gets its next turn in the answer, until the game is over.

Run it with `python3 bot.py URL SEAT_TOKEN`. It plays legal_moves[seq % len(legal_moves)]:
put your strategy in choose().
"""

import json
import sys
import urllib.error
import urllib.request

URL, TOKEN = sys.argv[1].rstrip("/"), sys.argv[2]
GAME = TOKEN.split(".", 1)[0]  # a seat token starts with its game's id


def choose(turn):
    moves = turn["legal_moves"]
    return moves[turn["seq"] % len(moves)]


def call(method, path, body=None):
    request = urllib.request.Request(
        URL + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.load(answer)


turn = call("GET", f"/v1/games/{GAME}/turn?wait=30")
while turn["status"] != "finished":
    if turn["status"] != "your_turn":
        turn = call("GET", f"/v1/games/{GAME}/turn?wait=30")
        continue
    try:  # the answer holds the next turn (?wait=30)
        body = {"seq": turn["seq"], "move": choose(turn)}
        turn = call("POST", f"/v1/games/{GAME}/moves?wait=30", body)["turn"]
    except urllib.error.HTTPError as refused:  # the referee names the rule: see the problem
        print(refused.read().decode(), file=sys.stderr)
        turn = call("GET", f"/v1/games/{GAME}/turn?wait=30")
print("final:", json.dumps(turn["view"]), file=sys.stderr)
