"""Pure rules engines (no I/O): ``choice``, ``choice-specials`` and ``chopta``.

The service, the clients' offline tools and the tests all share these. Nothing here imports
the web or storage layers.
"""

from __future__ import annotations

from typing import Any

from ._common import Ruleset, places
from .choice import ChoiceRuleset, score_marks, warm_rounds
from .choice_specials import ChoiceSpecialsRuleset
from .chopta import ChoptaRuleset, score_area
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
    "RULESETS",
    "Decision",
    "GameError",
    "InvalidOption",
    "Record",
    "Recorder",
    "RuleViolation",
    "Ruleset",
    "VerifyReport",
    "chain_link",
    "chain_start",
    "commitment",
    "dice_key",
    "final_seats",
    "get_ruleset",
    "new_seed",
    "places",
    "record_decision",
    "roll",
    "score_area",
    "score_marks",
    "verify",
    "warm_caches",
]

RULESETS: dict[str, Any] = {
    r.id: r for r in (ChoiceRuleset(), ChoiceSpecialsRuleset(), ChoptaRuleset())
}


def warm_caches() -> None:
    """Fill the engines' bounded caches now (tens of milliseconds), rather than during play:
    a long-running server then holds them from the start, with its other startup objects."""
    warm_rounds()


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
