"""The contract's bodies as msgspec Structs; moves stay plain JSON values (dicts), as bots
send back an element of ``legal_moves`` verbatim."""

from __future__ import annotations

from typing import Any

import msgspec


class SeatToken(msgspec.Struct):
    seat: int
    name: str | None
    token: str | None


class GameCreated(msgspec.Struct):
    id: str
    ruleset: str
    status: str
    commitment: str
    seats: list[SeatToken]


class Claimed(msgspec.Struct):
    game_id: str
    seat: int
    name: str
    token: str


class Turn(msgspec.Struct):
    status: str  # your_turn | waiting | finished
    game_status: str
    seat: int
    seq: int
    legal_moves: list[dict[str, Any]]
    deadline: float | None
    view: dict[str, Any] | None


class MoveAccepted(msgspec.Struct):
    accepted: bool
    seat: int
    seq: int
    next_seq: int
    moves: list[dict[str, Any]]
    game_status: str


class Problem(msgspec.Struct):
    type: str
    title: str
    status: int
    detail: str
    code: str
    field: str | None = None
    current_seq: int | None = None
    instance: str | None = None


class Registered(msgspec.Struct):
    tournament_id: str
    entrant: int
    name: str
    token: str


class NextDecision(msgspec.Struct):
    status: str  # your_turn | waiting | finished
    tournament_id: str
    game_id: str | None = None
    seat_token: str | None = None
    turn: Turn | None = None
