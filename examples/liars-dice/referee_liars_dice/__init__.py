"""Liar's dice for the referee, installed from outside: the entry point ``liars-dice`` in the
group ``referee.rulesets`` names :class:`LiarsDiceRuleset` (pyproject.toml)."""

from __future__ import annotations

from .bots import greedy_bot, random_bot, strong_bot
from .rules import (
    Bid,
    Liar,
    LiarsDiceMove,
    LiarsDiceOptions,
    LiarsDiceRuleset,
    LiarsDiceState,
    bid_rank,
)

__all__ = [
    "Bid",
    "Liar",
    "LiarsDiceMove",
    "LiarsDiceOptions",
    "LiarsDiceRuleset",
    "LiarsDiceState",
    "bid_rank",
    "greedy_bot",
    "random_bot",
    "strong_bot",
]
