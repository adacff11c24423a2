"""A thin client for the referee: every operation of ``openapi/openapi.json``, sync and async,
and ``run_bot``, so that a bot is one function ``choose(turn) -> move``."""

from ._client import AsyncClient, Client, RefereeError
from ._models import (
    Claimed,
    GameCreated,
    MoveAccepted,
    NextDecision,
    Problem,
    Registered,
    SeatToken,
    Turn,
)
from ._run import run_arena, run_bot, run_bot_async, run_entrant, run_entrant_async

__all__ = [
    "AsyncClient",
    "Claimed",
    "Client",
    "GameCreated",
    "MoveAccepted",
    "NextDecision",
    "Problem",
    "RefereeError",
    "Registered",
    "SeatToken",
    "Turn",
    "run_arena",
    "run_bot",
    "run_bot_async",
    "run_entrant",
    "run_entrant_async",
]
