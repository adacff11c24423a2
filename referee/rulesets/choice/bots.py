"""CHOICE bots. A move is judged by the sheet it leaves: ``greedy`` by the score it would show
now, ``strong`` by a value that also prices the marks still to come and the fifth-die pace."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from .sheet import POINTS

__all__ = ["greedy_bot", "random_bot", "sheet_after", "strong_bot"]

#: Ways two dice make each sum (out of 36): how easily a sum collects marks.
WAYS = {2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 6, 8: 5, 9: 4, 10: 3, 11: 2, 12: 1}


def _score(marks: dict[int, int]) -> int:
    total = 0
    for s, n in marks.items():
        if 1 <= n <= 4:
            total -= 200
        elif n >= 6:
            total += (min(n, 10) - 5) * POINTS[s]
    return total


def sheet_after(
    sheet: dict[str, Any], move: dict[str, Any]
) -> tuple[dict[int, int], dict[int, int], bool]:
    """Marks per sum and fifth-die marks after ``move`` (cards that refuse marks included)."""
    marks = {int(s): n for s, n in sheet["marks"].items()}
    fifth = {f["value"]: f["marks"] for f in sheet["fifth_dice"]}
    kind = move["type"]
    if kind == "suppen_kasper":
        move = move["round"]
        kind = move["type"]
    pairs = move.get("pairs") or ([move["pair"]] if "pair" in move else [])
    for a, b in pairs:
        marks[a + b] = marks.get(a + b, 0) + 1
    value = move.get("fifth") if kind in ("mark", "fdh", "kur") else None
    if value is not None:
        fifth[value] = fifth.get(value, 0) + 1
    if kind == "minus2":
        fifth[move["value"]] -= 1
    return marks, fifth, kind in ("free_throw",) or move.get("set_aside") is not None


def _own_sheet(turn: dict[str, Any]) -> dict[str, Any]:
    sheet: dict[str, Any] = turn["view"]["you"]["sheet"]
    return sheet


def random_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    rnd = random.Random(seed)

    def choose(turn: dict[str, Any]) -> Any:
        return rnd.choice(turn["legal_moves"])

    return choose


def greedy_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    """One step: the move whose sheet scores best right now (ties: the first listed)."""

    def choose(turn: dict[str, Any]) -> Any:
        sheet = _own_sheet(turn)
        return max(turn["legal_moves"], key=lambda m: _score(sheet_after(sheet, m)[0]))

    return choose


#: How readily a sum collects marks when the player picks the pairs (7 the easiest).
EASE = {2: 0.3, 3: 0.45, 4: 0.6, 5: 0.8, 6: 0.9, 7: 1.0, 8: 0.9, 9: 0.8, 10: 0.6, 11: 0.45, 12: 0.3}


def _rolls_left(fifth: dict[int, int], end: int, imbalance: float = 1.0) -> float:
    """Marked rolls left: all of them if the fifth dice stay even, fewer the further they
    drift apart (a roll may show only the value that is furthest along)."""
    counts = list(fifth.values())
    if any(c >= end for c in counts):
        return 0
    left: float = 3 * (end - 1) + 1 - sum(counts)
    if len(counts) == 3:
        left -= imbalance * (max(counts) - min(counts))
    return max(0.0, left)


def _value(
    marks: dict[int, int],
    fifth: dict[int, int],
    end: int,
    discount: float = 1.0,
    efficiency: float = 0.55,
    imbalance: float = 1.0,
    slot_bonus: float = 100,
) -> float:
    """The score now, plus a plan for the marks still to come: a fractional knapsack over
    finishing begun sums (each worth its 200 back) and marks past the fifth (worth P(s)),
    a mark on sum s costing 1 / EASE[s] of the budget. The weights were tuned on seeds
    1000..1249 of benchmarks/bots.py; the benchmark reports seeds 0..1999."""
    score = _score(marks)
    budget = 2 * _rolls_left(fifth, end, imbalance) * efficiency
    items: list[tuple[float, float, float]] = []  # (gain per cost, cost, gain)
    for s in range(2, 13):
        n = marks.get(s, 0)
        cost = 1 / EASE[s]
        if 1 <= n <= 4:
            items.append((200 / ((5 - n) * cost), (5 - n) * cost, 200))
        if n >= 1:
            extra = 10 - max(n, 5)
            if extra > 0:
                items.append((POINTS[s] / cost, extra * cost, extra * POINTS[s]))
    gain = 0.0
    for _ratio, cost, value in sorted(items, reverse=True):
        if budget <= 0:
            break
        take = min(1.0, budget / cost)
        gain += take * value
        budget -= take * cost
    slots = sum(1 for v in fifth if v in (1, 6))  # ones and sixes pair badly: good fifth dice
    return score + discount * gain + slot_bonus * slots


def strong_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    """The move whose sheet has the best value; cards only when they beat every normal move."""

    def choose(turn: dict[str, Any]) -> Any:
        sheet = _own_sheet(turn)
        end = turn["view"].get("end_marks", 8)
        best, best_value = None, float("-inf")
        for move in turn["legal_moves"]:
            marks, fifth, _free = sheet_after(sheet, move)
            value = _value(marks, fifth, end)
            if move["type"] not in ("mark", "free_throw"):
                value -= 40  # a card is worth keeping for a worse roll
            if value > best_value:
                best, best_value = move, value
        return best

    return choose
