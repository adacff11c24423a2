"""What the CHOPTA ruleset's views are built of, as the engine returns them and the contract
states them (``ChoptaRuleset.views``)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from ...games._common import Die
from ...games.shapes import Decided, GameBase, Ranking, RecordBase, Seat, Sitting
from .scoring import Arrangement
from .state import ChoptaMove, ChoptaOptions

__all__ = [
    "ChoptaBoard",
    "ChoptaDecision",
    "ChoptaGameView",
    "ChoptaPool",
    "ChoptaPublicSeat",
    "ChoptaRecord",
    "ChoptaSeat",
    "ChoptaSeatView",
    "ChoptaYou",
]


class ChoptaSeat(msgspec.Struct, kw_only=True):
    """A seat's public CHOPTA figures: its play area, its pool's size (not its dice)."""

    seat: Seat
    pool_size: Annotated[int, msgspec.Meta(ge=0, description="dice left in its hidden pool")]
    area: Annotated[list[Die], msgspec.Meta(description="its play area")]
    retired: bool
    total: int
    rounds: Annotated[list[int], msgspec.Meta(description="points of each round over")]
    arrangement: Arrangement


Round = Annotated[int, msgspec.Meta(ge=0)]
ToPlay = Annotated[Seat | None, msgspec.Meta(description="the seat to play; null when over")]
PlayedThisTurn = Annotated[int, msgspec.Meta(ge=0)]


class ChoptaYou(msgspec.Struct):
    """What only this seat sees: its own pool."""

    seat: Seat
    pool: list[Die]


class ChoptaBoard(msgspec.Struct, kw_only=True):
    """What every seat sees of a CHOPTA game (``view(state)``): every play area and pool
    size."""

    options: ChoptaOptions
    finished: bool
    round: Round
    first_seat: Seat
    turn: ToPlay
    played_this_turn: PlayedThisTurn
    seats: list[ChoptaSeat]
    ranking: Ranking | UnsetType = UNSET


class ChoptaSeatView(ChoptaBoard, tag_field="ruleset", tag="chopta", kw_only=True):
    """A CHOPTA seat's view: every play area and pool size, and its own pool (``you``)."""

    you: ChoptaYou


class ChoptaPublicSeat(Sitting):
    """Who sits there and, once the game runs (and unless sealed), their play area."""

    pool_size: int | UnsetType = UNSET
    area: list[Die] | UnsetType = UNSET
    retired: bool | UnsetType = UNSET
    total: int | UnsetType = UNSET
    rounds: list[int] | UnsetType = UNSET
    arrangement: Arrangement | UnsetType = UNSET


class ChoptaGameView(GameBase, tag_field="ruleset", tag="chopta", kw_only=True):
    """A CHOPTA game as anyone sees it; the board fields once it runs, unless sealed."""

    options: ChoptaOptions
    round: Round | UnsetType = UNSET
    first_seat: Seat | UnsetType = UNSET
    turn: (
        Annotated[Seat, msgspec.Meta(description="the seat to play; absent once it is over")]
        | UnsetType
    ) = UNSET
    played_this_turn: PlayedThisTurn | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET
    seats: list[ChoptaPublicSeat]


class ChoptaDecision(Decided):
    """A decision as the record tells it."""

    moves: list[ChoptaMove]


class ChoptaPool(msgspec.Struct, gc=False):
    """A seat's pool as rolled at the start of a round."""

    round: Annotated[int, msgspec.Meta(ge=0)]
    seat: Seat
    dice: list[Die]


class ChoptaRecord(RecordBase, tag_field="ruleset", tag="chopta", kw_only=True):
    """A CHOPTA game's record."""

    options: ChoptaOptions
    decisions: list[ChoptaDecision]
    dice: Annotated[list[ChoptaPool], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoptaSeat], msgspec.Meta(description="empty until over")]
