"""Rulesets installed from outside: every distribution that declares an entry point in the
group ``referee.rulesets`` adds its ruleset to the registry (``referee.games.RULESETS``) when
a process starts, beside the built-in ones.

An entry point names a ruleset object, or a class made without arguments, that has the
engine's surface (``referee.games.Ruleset``); a ``bots`` attribute (name -> a function of a
seed that makes a bot) adds its house bots. A plug-in that fails to load, or lacks part of
that surface, is disabled with one log line naming it and why: the referee starts without it.
Two rulesets with one id are an error that stops the start (``DuplicateRuleset``): a game's
document names its ruleset by id alone. A move body is decoded by one union of every
ruleset's moves, told apart by ``type``: a plug-in whose moves are not Structs tagged by
``type``, or that names a move as another ruleset names a different one, is disabled too,
as is one whose own refusal codes (its optional ``codes``: ``referee.games.declared_codes``)
are malformed; a code the referee or another ruleset has stops the start (the web layer's
``DuplicateCode``, ``referee.web.codes``).
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points, version
from typing import Any

from .games import ORIGINS, RULESETS, declared_codes, register

__all__ = ["GROUP", "load_plugins"]

GROUP = "referee.rulesets"
log = logging.getLogger("referee")

#: What the service asks of a ruleset (``referee.games.Ruleset``): checked before it is taken.
SURFACE = (
    "id",
    "title",
    "min_seats",
    "max_seats",
    "Options",
    "Move",
    "State",
    "options",
    "create",
    "to_decide",
    "must_decide",
    "seq",
    "public_seq",
    "legal_moves",
    "normalize",
    "decide",
    "timeout",
    "finished",
    "disclosed",
    "view",
    "seat_view",
    "scores",
    "totals",
    "ranking",
    "dice_log",
    "default_moves",
)

_loaded = False


def _builtins() -> None:
    own = version("referee")
    for ruleset_id, ruleset in list(RULESETS.items()):
        if ruleset_id not in ORIGINS:
            register(ruleset, "referee", own)


def _move_clash(ruleset: Any) -> str | None:
    """Why a ruleset's moves cannot join the union of every registered ruleset's, if so."""
    taken: dict[Any, tuple[Any, str]] = {}
    for other in RULESETS.values():
        if other.id != ruleset.id:
            for move in getattr(other.Move, "__args__", (other.Move,)):
                taken.setdefault(move.__struct_config__.tag, (move, other.id))
    for move in getattr(ruleset.Move, "__args__", (ruleset.Move,)):
        config = getattr(move, "__struct_config__", None)
        if config is None or config.tag_field != "type" or not isinstance(config.tag, str):
            return f"its move {getattr(move, '__name__', move)!r} is no Struct tagged by 'type'"
        known = taken.get(config.tag)
        if known is not None and known[0] is not move:
            return f"its move type {config.tag!r} is another move of {known[1]!r}"
    return None


def load_plugins(*, again: bool = False) -> list[str]:
    """Register every installed plug-in, once per process (``again``: look anew); the ids of
    those registered now."""
    global _loaded
    if _loaded and not again:
        return []
    _loaded = True
    _builtins()
    added = []
    for point in entry_points(group=GROUP):
        distribution, release = (point.dist.name, point.dist.version) if point.dist else ("", "")
        source = f"{point.name} ({distribution} {release})"
        try:
            found: Any = point.load()
            ruleset = found() if isinstance(found, type) else found
        except Exception as exc:  # a plug-in's own fault: disabled, not a failed start
            log.error("ruleset plug-in %s is disabled: it failed to load: %r", source, exc)
            continue
        missing = [name for name in SURFACE if not hasattr(ruleset, name)]
        if missing:
            log.error("ruleset plug-in %s is disabled: it lacks %s", source, ", ".join(missing))
            continue
        clash = _move_clash(ruleset)
        if clash:
            log.error("ruleset plug-in %s is disabled: %s", source, clash)
            continue
        try:
            declared_codes(ruleset)
        except ValueError as exc:
            log.error("ruleset plug-in %s is disabled: %s", source, exc)
            continue
        register(ruleset, distribution, release)
        added.append(ruleset.id)
        log.info("ruleset %s registered from %s", ruleset.id, source)
    return added
