"""One exception tree for everything the rules refuse.

Every refusal carries a stable ``code`` (it becomes the problem+json ``type`` of the API),
a human sentence, and, where it helps, the ``field`` at fault.
"""

from __future__ import annotations

__all__ = ["GameError", "InvalidOption", "RuleViolation"]


class GameError(Exception):
    """Base of everything the rules engines refuse; nothing was changed."""

    code = "game-error"

    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class InvalidOption(GameError):
    """A game cannot be created with these options or seats."""


class RuleViolation(GameError):
    """A decision breaks a rule of the game."""
