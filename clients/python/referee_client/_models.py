"""The contract's bodies as msgspec Structs; moves stay plain JSON values (dicts), as bots
send back an element of ``legal_moves`` verbatim."""

from __future__ import annotations

from typing import Any

import msgspec


class SeatToken(msgspec.Struct):
    seat: int
    name: str | None
    token: str | None
    webhook_secret: str | None = None  # a webhook seat's signing secret, shown once


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
    """What a seat must decide now. Read as fields (``turn.legal_moves``) or as a mapping
    (``turn["legal_moves"]``), as the reference bots read it."""

    ruleset: str  # the ruleset's id (GET /v1/rulesets): which moves and view to expect
    status: str  # your_turn | waiting | finished
    game_status: str
    seat: int
    seq: int
    legal_moves: list[dict[str, Any]]
    deadline: float | None  # seconds since the epoch
    view: dict[str, Any] | None

    def __getitem__(self, key: str) -> Any:
        if key not in self.__struct_fields__:
            raise KeyError(key)
        return getattr(self, key)


class MoveAccepted(msgspec.Struct):
    accepted: bool
    seat: int
    seq: int
    next_seq: int
    moves: list[dict[str, Any]]
    game_status: str
    turn: Turn | None = None  # the seat's next turn, when the move was sent with a wait


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
    status: str  # your_turn | waiting | finished | challenged (a bot)
    tournament_id: str | None  # null for a bot
    game_id: str | None  # null unless status is your_turn
    seat_token: str | None
    turn: Turn | None
    challenges: list[dict[str, Any]] | None  # a bot's open challenges (status challenged)
