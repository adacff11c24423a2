"""Liar's dice bots, each ``(seed) -> (turn) -> move`` over the JSON a bot receives
(``turn["legal_moves"]``, ``turn["view"]`` and its own dice in ``turn["view"]["you"]``), so they
run unchanged over HTTP.

``greedy`` knows only its own dice: every other die matches a bid's face with chance 1/3 (the
face or a six; a bid on sixes 1/6). It calls when the bid to beat is more likely false than
true, and otherwise makes the legal bid most likely true. ``strong`` also reads the bids: a
seat that bid a face is taken to hold one die matching it, and it calls when the bid to beat
is more likely false than the best raise it could make instead is true.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from math import comb
from typing import Any

__all__ = ["chance_true", "greedy_bot", "random_bot", "strong_bot"]

WILD = 6


def _tail(n: int, p: float, need: int) -> float:
    """P(at least ``need`` successes in ``n`` trials of chance ``p``)."""
    if need <= 0:
        return 1.0
    if need > n:
        return 0.0
    return sum(comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(need, n + 1))


def chance_true(quantity: int, face: int, mine: list[int], unknown: int, known: int = 0) -> float:
    """The chance that a bid holds, given one's own dice, ``unknown`` dice unseen, and
    ``known`` of those taken to match already."""
    have = sum(1 for d in mine if d in (face, WILD)) + known
    return _tail(unknown - known, 1 / 6 if face == WILD else 1 / 3, quantity - have)


def random_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    rnd = random.Random(seed)

    def choose(turn: dict[str, Any]) -> Any:
        return rnd.choice(turn["legal_moves"])

    return choose


def _table(turn: dict[str, Any]) -> tuple[list[int], int, dict[str, Any] | None]:
    view = turn["view"]
    mine = list(view["you"]["dice"])
    return mine, view["total_dice"] - len(mine), view.get("bid")  # absent before the first


def greedy_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    def choose(turn: dict[str, Any]) -> Any:
        legal = turn["legal_moves"]
        mine, unknown, last = _table(turn)
        bids = [m for m in legal if m["type"] == "bid"]
        if last is not None and (
            not bids or chance_true(last["quantity"], last["face"], mine, unknown) < 0.5
        ):
            return {"type": "liar"}
        # max keeps the first of equals: the lowest such bid
        return max(bids, key=lambda m: chance_true(m["quantity"], m["face"], mine, unknown))

    return choose


def _claimed(view: dict[str, Any], face: int) -> int:
    """Other seats whose latest bid named ``face``: each taken to hold one die matching it."""
    me = view["you"]["seat"]
    latest: dict[int, int] = {}
    for bid in view["bids"]:
        latest[bid["seat"]] = bid["face"]
    counts = {s["seat"]: s["dice_count"] for s in view["seats"]}
    return sum(1 for seat, f in latest.items() if seat != me and f == face and counts[seat])


def strong_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    def choose(turn: dict[str, Any]) -> Any:
        legal, view = turn["legal_moves"], turn["view"]
        mine, unknown, last = _table(turn)

        def chance(quantity: int, face: int) -> float:
            return chance_true(quantity, face, mine, unknown, _claimed(view, face))

        bids = [m for m in legal if m["type"] == "bid"]
        best = max(bids, key=lambda m: chance(m["quantity"], m["face"]), default=None)
        if last is not None:
            holds = chance(last["quantity"], last["face"])
            if best is None or 1 - holds > chance(best["quantity"], best["face"]):
                return {"type": "liar"}
        return best

    return choose
