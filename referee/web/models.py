"""The bodies of the HTTP contract, requests and responses, as msgspec Structs; a request's
body refuses fields it does not know."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from ..core.pairing import TournamentSpec
from ..core.refusals import Refusal
from ..games._common import Die
from ..games.choice import FreeThrow, Mark
from ..games.choice_specials import Fdh, Kur, Minus1, Minus2, Null, SuppenKasper
from ..games.chopta import Place, Swap

__all__ = [
    "AnyMove",
    "ClaimSeat",
    "Claimed",
    "CreateGame",
    "CreateTournament",
    "GameCreated",
    "MoveAccepted",
    "MoveSubmission",
    "NextDecision",
    "Problem",
    "Register",
    "Registered",
    "RulesetInfo",
    "ScoreOptions",
    "ScoreRequest",
    "SeatSpec",
    "SeatToken",
    "TournamentCreated",
    "Turn",
]

#: Every move of every ruleset, told apart by ``type``.
AnyMove = Mark | FreeThrow | Fdh | Null | Kur | Minus1 | Minus2 | SuppenKasper | Place | Swap

Name = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=64,
        description="shown to everyone: no control, line-break or bidi characters, not blank "
        "(else 422 invalid-name)",
    ),
]
ClientSeed = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
InviteCode = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=128,
        description="the organizer's invite code (403 invite-code-refused when it does not match)",
    ),
]


class SeatSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A seat: named (its token is returned now) or open (``name`` omitted; a bot claims it)."""

    name: Name | None = None
    client_seed: ClientSeed | None = None


class CreateGame(msgspec.Struct, forbid_unknown_fields=True):
    """A new game: its ruleset, options, seats, and seconds per decision."""

    ruleset: Annotated[str, msgspec.Meta(examples=["choice"])]
    seats: Annotated[list[SeatSpec], msgspec.Meta(min_length=1, max_length=64)]
    options: dict[str, Any] = {}
    deadline_s: Annotated[
        float, msgspec.Meta(ge=0, le=3600, description="seconds per decision; 0 = none")
    ] = 10.0
    invite_code: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=128,
                description="open seats are claimed only with this code (kept as a hash)",
            ),
        ]
        | None
    ) = None


class SeatToken(msgspec.Struct):
    """A seat of a created game and its token (shown once; None for an open seat)."""

    seat: int
    name: str | None
    token: str | None  # shown once; None for an open seat


class GameCreated(msgspec.Struct):
    """A game just created: its id, the commitment to its seed, and its seats."""

    id: str
    ruleset: str
    status: str
    commitment: str
    seats: list[SeatToken]


class ClaimSeat(msgspec.Struct, forbid_unknown_fields=True):
    """A player taking an open seat, with a seed of its own to mix into the dice."""

    name: Name
    client_seed: ClientSeed | None = None
    invite_code: InviteCode | None = None


class Claimed(msgspec.Struct):
    """The seat taken and its token (shown once)."""

    game_id: str
    seat: int
    name: str
    token: str


class MoveSubmission(msgspec.Struct, forbid_unknown_fields=True):
    """One decision (``move``) or a postal round's decisions (``moves``), for seat seq ``seq``."""

    seq: Annotated[int, msgspec.Meta(ge=0)]
    move: AnyMove | None = None
    moves: Annotated[list[AnyMove], msgspec.Meta(min_length=1, max_length=64)] | None = None

    def decided(self) -> list[AnyMove]:
        """The decision's moves; exactly one of ``move`` and ``moves`` must be sent."""
        if self.move is not None and self.moves is None:
            return [self.move]
        if self.moves is not None and self.move is None:
            return self.moves
        raise Refusal("move-or-moves", "send exactly one of 'move' and 'moves'", field="move")


class MoveAccepted(msgspec.Struct):
    """A decision accepted: the seq it decided, the next seq, and the game's status."""

    accepted: bool
    seat: int
    seq: int
    next_seq: int
    moves: list[AnyMove]
    game_status: str


class Turn(msgspec.Struct):
    """What a seat must decide now, and its private view of the game."""

    status: str  # your_turn | waiting | finished
    game_status: str
    seat: int
    seq: int
    legal_moves: list[AnyMove]
    deadline: float | None  # seconds since the epoch
    view: dict[str, Any] | None


class RulesetOption(msgspec.Struct):
    """An option of a ruleset: its name, default and JSON Schema."""

    name: str
    default: Any
    schema: dict[str, Any]


class RulesetInfo(msgspec.Struct):
    """A ruleset: its seats, options and move types."""

    id: str
    title: str
    min_seats: int
    max_seats: int
    options: list[RulesetOption]
    move_types: list[str]


class ScoreOptions(msgspec.Struct, forbid_unknown_fields=True):
    """CHOPTA scoring variants."""

    bonus: bool = False
    face_value: bool = False


class ScoreRequest(msgspec.Struct, forbid_unknown_fields=True):
    """CHOICE: ``marks`` (sum -> marks). CHOPTA: ``area`` (dice) and ``options``."""

    marks: (
        dict[
            Annotated[str, msgspec.Meta(pattern="^([2-9]|1[0-2])$")],
            Annotated[int, msgspec.Meta(ge=0, le=1000)],
        ]
        | None
    ) = None
    area: Annotated[list[Die], msgspec.Meta(max_length=1000)] | None = None
    options: ScoreOptions | None = None


class Problem(msgspec.Struct, omit_defaults=True):
    """RFC 9457 problem details; ``type`` ends in a stable code."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    field: str | None = None
    current_seq: int | None = None
    instance: str | None = None


class TournamentCreated(msgspec.Struct):
    """A tournament just created, open for registration."""

    id: str
    status: str
    commitment: str  # SHA-256 of the tournament's seed, revealed when it is over


class Register(msgspec.Struct, forbid_unknown_fields=True):
    """An entrant registering under a name."""

    name: Name
    invite_code: InviteCode | None = None


class CreateTournament(TournamentSpec, frozen=True, forbid_unknown_fields=True):
    """A tournament's spec, and the invite code its entrants must give, if any."""

    invite_code: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=128,
                description="entrants register only with this code (kept as a hash)",
            ),
        ]
        | None
    ) = None

    def spec(self) -> TournamentSpec:
        fields = msgspec.structs.asdict(self)
        del fields["invite_code"]
        return TournamentSpec(**fields)


class Registered(msgspec.Struct):
    """The entrant's number and token (shown once; its seats answer to it)."""

    tournament_id: str
    entrant: int
    name: str
    token: str


class NextDecision(msgspec.Struct):
    """An entrant's next decision across its games: post ``turn``'s move to ``game_id`` with
    ``seat_token``."""

    status: str  # your_turn | waiting | finished
    tournament_id: str
    game_id: str | None = None
    seat_token: str | None = None
    turn: Turn | None = None
