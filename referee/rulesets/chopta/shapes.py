"""What the contract shows of CHOPTA beside its engine's Structs: its views' shapes (a seat's,
the public one, a decision, the record: ``views``), and the score calculator's body, its
answer, and the function from one to the other (``POST /v1/rulesets/chopta/score``)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from ...games._common import Die, Scorer
from ...games.shapes import (
    Decided,
    GameBase,
    Ranking,
    RecordBase,
    Seat,
    Sitting,
    ViewShapes,
)
from .engine import ChoptaMove, ChoptaOptions, Group, score_area

__all__ = [
    "AreaRequest",
    "AreaScored",
    "Arrangement",
    "ChoptaDecision",
    "ChoptaGameView",
    "ChoptaPool",
    "ChoptaPublicSeat",
    "ChoptaRecord",
    "ChoptaSeat",
    "ChoptaSeatView",
    "ChoptaYou",
    "ScoreOptions",
    "scorer",
    "views",
]

# -- the views ---------------------------------------------------------------------------------


class Arrangement(msgspec.Struct):
    """A play area's best arrangement: its groups, the dice left out, the points."""

    points: int
    groups: list[Group]
    unused: list[Die]


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


class _ChoptaBoard(msgspec.Struct, kw_only=True):
    round: Round
    first_seat: Seat
    turn: ToPlay
    played_this_turn: PlayedThisTurn
    ranking: Ranking | UnsetType = UNSET


class ChoptaYou(msgspec.Struct):
    """What only this seat sees: its own pool."""

    seat: Seat
    pool: list[Die]


class ChoptaSeatView(_ChoptaBoard, tag_field="ruleset", tag="chopta"):
    """A CHOPTA seat's view: every play area and pool size, and its own pool (``you``)."""

    options: ChoptaOptions
    finished: bool
    seats: list[ChoptaSeat]
    you: ChoptaYou


# -- the public view


class ChoptaPublicSeat(Sitting, kw_only=True):
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
    seats: list[ChoptaPublicSeat]
    round: Round | UnsetType = UNSET
    first_seat: Seat | UnsetType = UNSET
    turn: ToPlay | UnsetType = UNSET
    played_this_turn: PlayedThisTurn | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET


# -- the record


class ChoptaDecision(Decided):
    """A decision as the record tells it."""

    moves: list[ChoptaMove]


class ChoptaPool(msgspec.Struct):
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


views = ViewShapes(ChoptaSeatView, ChoptaGameView, ChoptaDecision, ChoptaRecord)

# -- the score calculator ----------------------------------------------------------------------


class ScoreOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """CHOPTA scoring variants."""

    bonus: bool = False
    face_value: bool = False


class AreaRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A CHOPTA play area's dice, and the scoring variants."""

    area: Annotated[list[Die], msgspec.Meta(max_length=1000)]
    options: ScoreOptions = ScoreOptions()


class AreaScored(msgspec.Struct):
    """A CHOPTA play area's best arrangement: its groups, the dice left out, the points
    (``total`` = ``points``)."""

    total: int
    points: int
    groups: list[Group]
    unused: list[int]


def score_play_area(request: AreaRequest) -> AreaScored:
    """A play area's best arrangement under the variants asked for."""
    options = request.options
    result = score_area(request.area, bonus=options.bonus, face_value=options.face_value)
    return AreaScored(result.points, result.points, result.groups, result.unused)


scorer = Scorer(
    AreaRequest,
    AreaScored,
    score_play_area,
    "Score a CHOPTA play area: its best arrangement",
    "The best arrangement of a CHOPTA play area into sets and chains.",
)
