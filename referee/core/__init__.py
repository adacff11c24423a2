"""What the referee decides, with no I/O: stored documents, versions and tokens; a loaded
game (start it, apply a decision or a timeout, deadlines, turns, views, its record); a
tournament (its rounds' tables, results and view) with its pairing and standings; and
refusals, each with a stable code and no HTTP status. Synchronous, and tested without Redis.

The rules themselves live in ``referee.games``; this layer holds what a referee adds to
them: who sits where, when time runs out, and who may see what.
"""

from __future__ import annotations

from .documents import Deadline, GameDoc, SeatDoc, holder_of, new_token, token_hash
from .game import LoadedGame, new_game
from .refusals import Refusal

__all__ = [
    "Deadline",
    "GameDoc",
    "LoadedGame",
    "Refusal",
    "SeatDoc",
    "holder_of",
    "new_game",
    "new_token",
    "token_hash",
]
