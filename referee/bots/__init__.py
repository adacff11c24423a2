"""House bots, as the registry holds them: each ruleset's ``bots`` (name -> a function of a
seed that makes a bot), a bot being one function ``choose(turn) -> move`` over the JSON a bot
receives (``turn["legal_moves"]`` and ``turn["view"]``), so they run unchanged over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..games import get_ruleset

__all__ = ["Bot", "bot_names", "get_bot"]

Bot = Callable[[dict[str, Any]], Any]


def _bots(ruleset_id: str) -> dict[str, Callable[[int | None], Bot]]:
    return dict(getattr(get_ruleset(ruleset_id), "bots", None) or {})


def bot_names(ruleset_id: str) -> list[str]:
    """The house bots a ruleset has, by name (none for a ruleset that declares none)."""
    return list(_bots(ruleset_id))


def get_bot(ruleset_id: str, name: str, seed: int | None = None) -> Bot:
    """A fresh bot; ``seed`` makes a random bot repeatable."""
    return _bots(ruleset_id)[name](seed)
