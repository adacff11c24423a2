"""What the contract shows of CHOICE beside its engine's Structs: its views' shapes (a seat's,
the public one, a decision, the record: ``views``), and the score calculator's body and the
function that answers it (``POST /v1/rulesets/choice/score``). ``choice_specials`` builds its
own on these."""

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
from .engine import ChoiceMove, ChoiceOptions, ChoiceScore, score_marks

__all__ = [
    "ChoiceDecision",
    "ChoiceGameView",
    "ChoicePublicSeat",
    "ChoiceRecord",
    "ChoiceRoll",
    "ChoiceSeatSheet",
    "ChoiceSeatView",
    "ChoiceSheet",
    "ChoiceYou",
    "FifthDie",
    "MarksRequest",
    "SumKey",
    "scorer",
    "views",
]

SumKey = Annotated[str, msgspec.Meta(pattern="^([2-9]|1[0-2])$", description="a sum, 2..12")]


# -- the views ----------------------------------------------------------------------------


class FifthDie(msgspec.Struct):
    """One of the (up to three) fifth-die values chosen, and how often it was marked."""

    value: Die
    marks: Annotated[int, msgspec.Meta(ge=0)]


class _Sheet(msgspec.Struct, kw_only=True):
    marks: Annotated[
        dict[SumKey, Annotated[int, msgspec.Meta(ge=0)]],
        msgspec.Meta(description="marks per sum, '2'..'12'"),
    ]
    fifth_dice: Annotated[list[FifthDie], msgspec.Meta(max_length=3)]
    done: Annotated[bool, msgspec.Meta(description="a fifth die reached its last mark")]
    retired: bool
    rounds: Annotated[int, msgspec.Meta(ge=0, description="rounds played")]
    free_throws: Annotated[int, msgspec.Meta(ge=0)]
    score: ChoiceScore


class ChoiceSheet(_Sheet):
    """A CHOICE score sheet: marks per sum, the fifth dice, and what it scores."""


class ChoiceSeatSheet(ChoiceSheet):
    """A seat's committed (public) sheet."""

    seat: Seat
    decided: Annotated[bool, msgspec.Meta(description="the seat has decided this batch")]


Roll = Annotated[list[Die], msgspec.Meta(min_length=5, max_length=5)]


Batch = Annotated[int, msgspec.Meta(ge=0, description="the batch of rolls being decided")]
FirstRoll = Annotated[int, msgspec.Meta(ge=0, description="the game-wide index of rolls[0]")]
Rolls = Annotated[list[Roll], msgspec.Meta(description="this batch's rolls, five dice each")]
EndMarks = Annotated[int, msgspec.Meta(description="a fifth die's marks that end a sheet")]


class _ChoiceBoard(msgspec.Struct, kw_only=True):
    batch: Batch
    first_roll: FirstRoll
    rolls: Rolls
    end_marks: EndMarks
    ranking: Ranking | UnsetType = UNSET


class ChoiceYou(msgspec.Struct):
    """What only this seat sees: its draft sheet and its decisions not yet disclosed."""

    seat: Seat
    roll_index: Annotated[int, msgspec.Meta(ge=0, description="this batch's roll to decide")]
    decisions: list[ChoiceMove]
    sheet: ChoiceSheet


class ChoiceSeatView(_ChoiceBoard, tag_field="ruleset", tag="choice"):
    """A CHOICE seat's view: the board, every committed sheet, and its own (``you``)."""

    options: ChoiceOptions
    finished: bool
    seats: list[ChoiceSeatSheet]
    you: ChoiceYou


# -- the public view


class ChoicePublicSeat(Sitting, kw_only=True):
    """Who sits there and, once the game runs (and unless sealed), their sheet."""

    marks: dict[SumKey, int] | UnsetType = UNSET
    fifth_dice: list[FifthDie] | UnsetType = UNSET
    done: bool | UnsetType = UNSET
    retired: bool | UnsetType = UNSET
    rounds: int | UnsetType = UNSET
    free_throws: int | UnsetType = UNSET
    score: ChoiceScore | UnsetType = UNSET
    decided: bool | UnsetType = UNSET


class _ChoiceGame(GameBase, kw_only=True):
    options: ChoiceOptions
    batch: Batch | UnsetType = UNSET
    first_roll: FirstRoll | UnsetType = UNSET
    rolls: Rolls | UnsetType = UNSET
    end_marks: EndMarks | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET


class ChoiceGameView(_ChoiceGame, tag_field="ruleset", tag="choice", kw_only=True):
    """A CHOICE game as anyone sees it; the board fields once it runs, unless sealed."""

    seats: list[ChoicePublicSeat]


# -- the record


class ChoiceDecision(Decided):
    """A decision as the record tells it."""

    moves: list[ChoiceMove]


class ChoiceRoll(msgspec.Struct):
    """A roll of the game, by its game-wide index."""

    roll: Annotated[int, msgspec.Meta(ge=0)]
    dice: Roll


class ChoiceRecord(RecordBase, tag_field="ruleset", tag="choice", kw_only=True):
    """A CHOICE game's record: what its view and events disclosed; once over, every die."""

    options: ChoiceOptions
    decisions: list[ChoiceDecision]
    dice: Annotated[list[ChoiceRoll], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoiceSeatSheet], msgspec.Meta(description="empty until over")]


views = ViewShapes(ChoiceSeatView, ChoiceGameView, ChoiceDecision, ChoiceRecord)

# -- the score calculator ----------------------------------------------------------------------


class MarksRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A CHOICE sheet's marks, by sum (a sum left out has none)."""

    marks: dict[SumKey, Annotated[int, msgspec.Meta(ge=0, le=1000)]]


def score_sheet(request: MarksRequest) -> ChoiceScore:
    """A sheet's figures from its marks."""
    return score_marks({int(k): v for k, v in request.marks.items()})


def scorer(title: str, description: str) -> Scorer:
    """A CHOICE ruleset's calculator (both score sheets alike; each has its own route, as the
    contract states one body per route)."""
    return Scorer(
        MarksRequest,
        ChoiceScore,
        score_sheet,
        f"Score a {title} sheet from its marks",
        description,
    )
