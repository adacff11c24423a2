"""The registry of rulesets by id, and where each comes from. It names none: the built-in
rulesets are registered by ``referee.games`` (the package's ``__init__``), plug-ins by
``referee.plugins``. Records' verification looks rulesets up here, so this module imports
nothing that imports records."""

from __future__ import annotations

from typing import Any

from .errors import InvalidOption

__all__ = ["ORIGINS", "RULESETS", "DuplicateRuleset", "get_ruleset", "register", "warm_caches"]

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
