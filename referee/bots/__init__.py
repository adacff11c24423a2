"""Reference bots: each is one function ``choose(turn) -> move`` over the JSON a bot receives
(``turn["legal_moves"]`` and ``turn["view"]``), so they run unchanged over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import choice as _choice
from . import chopta as _chopta

__all__ = ["BOTS", "get_bot"]

Bot = Callable[[dict[str, Any]], Any]

BOTS: dict[str, dict[str, Callable[..., Bot]]] = {
    "choice": {
        "random": _choice.random_bot,
        "greedy": _choice.greedy_bot,
        "strong": _choice.strong_bot,
    },
    "choice-specials": {
        "random": _choice.random_bot,
        "greedy": _choice.greedy_bot,
        "strong": _choice.strong_bot,
    },
    "chopta": {
        "random": _chopta.random_bot,
        "greedy": _chopta.greedy_bot,
        "strong": _chopta.strong_bot,
    },
}


def get_bot(ruleset: str, name: str, seed: int | None = None) -> Bot:
    """A fresh bot; ``seed`` makes a random bot repeatable."""
    return BOTS[ruleset][name](seed)
