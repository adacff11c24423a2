"""CHOPTA bots: ``greedy`` plays the die that raises its own area's score most now; ``strong``
also counts what a swap takes from the opponent and keeps sets and chains within reach."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from .scoring import score_area

__all__ = ["greedy_bot", "random_bot", "strong_bot"]


def random_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    rnd = random.Random(seed)

    def choose(turn: dict[str, Any]) -> Any:
        return rnd.choice(turn["legal_moves"])

    return choose


def _table(turn: dict[str, Any]) -> tuple[int, list[list[int]], bool, bool]:
    """The bot's seat, every play area, and the scoring options (bonus, face value)."""
    view = turn["view"]
    options = view.get("options", {})
    areas = [list(s["area"]) for s in view["seats"]]
    return view["you"]["seat"], areas, bool(options.get("bonus")), bool(options.get("face_value"))


def _after(areas: list[list[int]], seat: int, move: dict[str, Any]) -> list[list[int]]:
    areas = [list(a) for a in areas]
    if move["type"] == "place":
        areas[seat].append(move["die"])
    else:
        opponent = areas[move["opponent"]]
        opponent.remove(move["take"])
        opponent.append(move["die"])
        areas[seat].append(move["take"])
    return areas


def greedy_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    def choose(turn: dict[str, Any]) -> Any:
        seat, areas, bonus, face = _table(turn)

        def gain(move: dict[str, Any]) -> int:
            return score_area(_after(areas, seat, move)[seat], bonus=bonus, face_value=face).points

        return max(turn["legal_moves"], key=gain)

    return choose


def _potential(area: list[int]) -> float:
    """Near-groups count a little: pairs toward sets, runs toward chains."""
    counts = [area.count(v) for v in range(7)]
    pairs = sum(1 for v in range(1, 7) if counts[v] == 2)
    runs = sum(
        1 for start in range(1, 4) if sum(1 for v in range(start, start + 4) if counts[v]) == 3
    )
    return 0.4 * pairs + 0.3 * runs


def strong_bot(seed: int | None = None) -> Callable[[dict[str, Any]], Any]:
    def choose(turn: dict[str, Any]) -> Any:
        seat, areas, bonus, face = _table(turn)

        def value(move: dict[str, Any]) -> float:
            after = _after(areas, seat, move)
            mine = score_area(after[seat], bonus=bonus, face_value=face).points
            total = mine + _potential(after[seat])
            if move["type"] == "swap":
                opponent = move["opponent"]
                before = score_area(areas[opponent], bonus=bonus, face_value=face).points
                now = score_area(after[opponent], bonus=bonus, face_value=face).points
                total += (before - now) / max(1, len(areas) - 1)
            return total

        return max(turn["legal_moves"], key=value)

    return choose
