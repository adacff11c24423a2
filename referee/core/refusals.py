"""Refusals: what the referee answers instead of doing what was asked, with nothing changed.

A refusal names a stable ``code`` (the problem+json ``type`` of the API), a sentence, and
where it helps the ``field`` at fault; it carries no HTTP status: the web layer maps each
code to one (``referee.web.problems``). The rules engines refuse with their own
``GameError``s, which are refusals of the same kind (``from_rules``).
"""

from __future__ import annotations

from typing import Any

from ..games import GameError

__all__ = ["Refusal", "busy", "from_rules", "not_found"]


class Refusal(Exception):
    """A request the referee turns down; nothing was changed. ``extra`` holds what a client
    needs to try again (``current_seq``)."""

    def __init__(self, code: str, detail: str, *, field: str | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.field = field
        self.extra = extra

    def __repr__(self) -> str:
        return f"Refusal({self.code!r}, {self.detail!r})"


def from_rules(error: GameError, **extra: Any) -> Refusal:
    """The rules engines' refusal, as the referee's."""
    return Refusal(error.code, error.message, field=error.field, **extra)


def busy(what: str = "the game") -> Refusal:
    """A change lost its race every time it was tried: the client may try again."""
    return Refusal("busy", f"{what} changed too often; try again", retry_after=1)


def not_found(kind: str, identifier: str) -> Refusal:
    """No game (or tournament) of that id: ``game-not-found``, ``tournament-not-found``."""
    return Refusal(f"{kind}-not-found", f"there is no {kind} {identifier!r}")
