"""What every ruleset shares (no I/O): the engine's protocol, dice, records, refusals, and the
registry of rulesets: the built-in ones (``referee.rulesets``, one package each, registered
here, the one place outside them that names them) and the plug-ins ``referee.plugins`` adds.

The service, the clients' offline tools and the tests all share these. Nothing here imports
the web or storage layers.
"""

from __future__ import annotations

from typing import Any

from ._common import Ruleset, check_seats, parse_options, places
from .dice import commitment, dice_key, new_seed, roll
from .errors import GameError, InvalidOption, RuleViolation
from .record import (
    Decision,
    Record,
    Recorder,
    VerifyReport,
    chain_link,
    chain_start,
    final_seats,
    record_decision,
    verify,
)

__all__ = [
    "DEFAULT",
    "ORIGINS",
    "RULESETS",
    "Decision",
    "DuplicateRuleset",
    "GameError",
    "InvalidOption",
    "Record",
    "Recorder",
    "RuleViolation",
    "Ruleset",
    "VerifyReport",
    "chain_link",
    "chain_start",
    "check_seats",
    "commitment",
    "dice_key",
    "final_seats",
    "get_ruleset",
    "new_seed",
    "parse_options",
    "places",
    "record_decision",
    "register",
    "roll",
    "verify",
    "warm_caches",
]

#: The registry: every ruleset by its id (the built-in ones, then each plug-in that
#: ``referee.plugins`` found installed), and where each comes from: (distribution, version).
RULESETS: dict[str, Any] = {}
ORIGINS: dict[str, tuple[str, str]] = {}


class DuplicateRuleset(ValueError):
    """Two rulesets claim one id: neither could be told apart in a game's document."""


def register(ruleset: Any, distribution: str, version: str) -> None:
    """Add a ruleset to the registry (a plug-in's, or a built-in's origin; the same
    distribution registering again replaces its own); an id taken by another distribution is
    a :class:`DuplicateRuleset`."""
    taken = ORIGINS.get(ruleset.id)
    known = RULESETS.get(ruleset.id)
    if known is not None and known is not ruleset and (taken is None or taken[0] != distribution):
        where = f"{taken[0]} {taken[1]}" if taken else "the referee"
        raise DuplicateRuleset(
            f"two rulesets are named {ruleset.id!r}: one from {where}, "
            f"one from {distribution} {version}"
        )
    RULESETS[ruleset.id] = ruleset
    ORIGINS[ruleset.id] = (distribution, version)


def warm_caches() -> None:
    """Fill the engines' bounded caches now (tens of milliseconds), rather than during play:
    a long-running server then holds them from the start, with its other startup objects.
    A ruleset with such caches has a ``warm()`` method; one method shared by several rulesets
    runs once."""
    done = set()
    for ruleset in RULESETS.values():
        warm = getattr(type(ruleset), "warm", None)
        if warm is not None and warm not in done:
            done.add(warm)
            warm(ruleset)


def get_ruleset(ruleset_id: str) -> Any:
    """The ruleset engine for an id, or ``unknown-ruleset``."""
    try:
        return RULESETS[ruleset_id]
    except KeyError:
        raise InvalidOption(
            "unknown-ruleset",
            f"unknown ruleset {ruleset_id!r}; choose one of {', '.join(RULESETS)}",
            field="ruleset",
        ) from None


def _builtins() -> None:
    """The built-in rulesets, registered when the registry is first imported (their origin,
    the referee's distribution and version, is added by ``referee.plugins``)."""
    from ..rulesets.choice import ChoiceRuleset
    from ..rulesets.choice_specials import ChoiceSpecialsRuleset
    from ..rulesets.chopta import ChoptaRuleset

    for ruleset in (ChoiceRuleset(), ChoiceSpecialsRuleset(), ChoptaRuleset()):
        RULESETS[ruleset.id] = ruleset


#: the ruleset a tool plays when none is named (the bench, the load generator, the command line)
DEFAULT = "choice"

_builtins()
