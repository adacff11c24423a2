"""A thin client for the referee: every operation of ``openapi/openapi.json``, sync and async,
and ``run_bot``, so that a bot is one function ``choose(turn) -> move`` (or a local program
reading turns on stdin: ``run_program``)."""

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
from ._program import Program, ProgramFailed, run_program
from ._run import run_arena, run_bot, run_bot_async, run_entrant, run_entrant_async

__all__ = [
    "AsyncClient",
    "Claimed",
    "Client",
    "GameCreated",
    "MoveAccepted",
    "NextDecision",
    "Problem",
    "Program",
    "ProgramFailed",
    "RefereeError",
    "Registered",
    "SeatToken",
    "Turn",
    "run_arena",
    "run_bot",
    "run_bot_async",
    "run_entrant",
    "run_entrant_async",
    "run_program",
]
