"""The turn report's part of a CHOICE game (``/games/{id}/report`` and ``report.txt``): a
postal round's title and rolls, and each sheet as the round ended, in a few lines."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

__all__ = ["SheetReport"]

_CARDS = {
    "fdh": "FdH",
    "null": "Null",
    "kur": "KUR",
    "minus1": "−1",
    "minus2": "−2",
    "suppen_kasper": "Suppen-Kasper",
}


class SheetReport:
    """A round of the report of either CHOICE ruleset (``specials``: with cards and plate)."""

    def __init__(self, specials: bool) -> None:
        self.specials = specials

    def title(self, entry: dict[str, Any]) -> str:
        return f"Postal round {entry['batch'] + 1}"

    def rolls(self, entry: dict[str, Any]) -> list[tuple[int, list[int]]]:
        """Each roll of the round: its game-wide number and its dice."""
        first = entry["first_roll"]
        return [(first + index + 1, roll) for index, roll in enumerate(entry["rolls"])]

    def seat_lines(self, seat: dict[str, Any]) -> list[str]:
        """A sheet in a few lines: marks per sum, fifth dice, score, cards and plate."""
        marks = " ".join(f"{s}:{n}" for s, n in seat["marks"].items() if n)
        fifth = ", ".join(f"{f['value']}×{f['marks']}" for f in seat["fifth_dice"]) or "none"
        score = seat["score"]
        state = " (done)" if seat["done"] else ""
        state = " (retired)" if seat["retired"] else state
        lines = [
            f"    marks     {marks or 'none'}",
            f"    fifth die {fifth}; free throws {seat['free_throws']}",
            f"    score     +{score['plus']} −{score['minus']} = {score['total']}{state}",
        ]
        if self.specials:
            cards = ", ".join(_CARDS[c] for c in seat["cards"]) or "none"
            plate = " ".join(str(d) for d in seat["plate"]) or "empty"
            lines += [f"    cards     {cards}", f"    plate     {plate}"]
        return lines

    def seat_cells(self, seat: dict[str, Any], dice_html: Callable[[list[int]], str]) -> str:
        """The sheet's cells of the page's table."""
        return f"<td>{'<br>'.join(html.escape(x.strip()) for x in self.seat_lines(seat))}</td>"
