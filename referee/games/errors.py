"""One exception tree for everything the rules refuse.

Every refusal carries a stable ``code`` (it becomes the problem+json ``type`` of the API),
a human sentence, and, where it helps, the ``field`` at fault. A ruleset from outside declares
the codes of its own, with their meaning and status (its ``codes``: ``declared_codes``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = [
    "REFUSAL_STATUSES",
    "GameError",
    "InvalidOption",
    "RefusalCode",
    "RuleViolation",
    "declared_codes",
]

#: the HTTP statuses a ruleset's own refusal may be answered with: 422, a rule is broken (the
#: default), or 409, the game's state does not allow it now (as ``not-your-turn``)
REFUSAL_STATUSES = (422, 409)
_CODE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


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


class RefusalCode(msgspec.Struct, frozen=True):
    """A refusal code a ruleset declares, in its optional ``codes`` attribute (code -> its
    meaning, or code -> a ``RefusalCode`` where the status is not 422). The referee answers
    a refusal of that code with this status and lists the code, so that a client can tell
    it from every other."""

    meaning: str
    status: int = 422


def declared_codes(ruleset: Any) -> dict[str, RefusalCode]:
    """A ruleset's own refusal codes (its ``codes``: none if it has no such attribute), each
    with its meaning and status. A declaration the referee cannot serve is a ``ValueError``
    that says why: a code is lower-case words joined by ``-`` (it ends the problem's
    ``type``, a URL), its meaning a sentence, its status one of ``REFUSAL_STATUSES``."""
    raw = getattr(ruleset, "codes", None)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError("its codes are not a mapping of a code to its meaning")
    codes: dict[str, RefusalCode] = {}
    for code, meaning in raw.items():
        if not isinstance(code, str) or not _CODE.fullmatch(code):
            raise ValueError(f"its code {code!r} is not lower-case words joined by '-'")
        declared = RefusalCode(meaning) if isinstance(meaning, str) else meaning
        if not isinstance(declared, RefusalCode) or not str(declared.meaning).strip():
            raise ValueError(f"its code {code!r} has no meaning (a str, or a RefusalCode)")
        if declared.status not in REFUSAL_STATUSES:
            raise ValueError(
                f"its code {code!r} has the status {declared.status!r}, not one of "
                f"{', '.join(map(str, REFUSAL_STATUSES))}"
            )
        codes[code] = declared
    return codes
