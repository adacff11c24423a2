"""What every ruleset shares (no I/O): the engine's protocol, dice, records, refusals, and the
registry of rulesets: the built-in ones (``referee.rulesets``, one package each, registered
here, the one place outside them that names them) and the plug-ins ``referee.plugins`` adds.

The service, the clients' offline tools and the tests all share these. Nothing here imports
the web or storage layers.
"""

from __future__ import annotations

from ._common import Ruleset, check_seats, parse_options, places
from .dice import commitment, dice_key, new_seed, roll
from .errors import (
    REFUSAL_STATUSES,
    GameError,
    InvalidOption,
    RefusalCode,
    RuleViolation,
    declared_codes,
)
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
from .registry import ORIGINS, RULESETS, DuplicateRuleset, get_ruleset, register, warm_caches

__all__ = [
    "DEFAULT",
    "ORIGINS",
    "REFUSAL_STATUSES",
    "RULESETS",
    "Decision",
    "DuplicateRuleset",
    "GameError",
    "InvalidOption",
    "Record",
    "Recorder",
    "RefusalCode",
    "RuleViolation",
    "Ruleset",
    "VerifyReport",
    "chain_link",
    "chain_start",
    "check_seats",
    "commitment",
    "declared_codes",
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
