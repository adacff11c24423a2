"""The turn report's part of a CHOPTA game (``/games/{id}/report`` and ``report.txt``): a
round's title, and each play area and total as the round ended."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["AreaReport"]


class AreaReport:
    """A round of a CHOPTA game's report: nothing is dealt that the areas do not show."""

    def title(self, entry: dict[str, Any]) -> str:
        return f"Round {entry['round'] + 1}"

    def rolls(self, entry: dict[str, Any]) -> list[tuple[int, list[int]]]:
        return []

    def seat_lines(self, seat: dict[str, Any]) -> list[str]:
        area = " ".join(str(d) for d in seat["area"]) or "empty"
        rounds = ", ".join(str(p) for p in seat["rounds"])
        return [f"    area      {area}", f"    rounds    {rounds}; total {seat['total']}"]

    def seat_cells(self, seat: dict[str, Any], dice_html: Callable[[list[int]], str]) -> str:
        text = f"total {seat['total']}; rounds {', '.join(map(str, seat['rounds']))}"
        return f"<td>{dice_html(seat['area']) or 'empty'}</td><td>{text}</td>"
