"""What the contract shows of CHOICE with special cards beside its engine's Structs: its
views' shapes (``views``), CHOICE's with the cards left and the leftovers plate."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ...games._common import Die
from ...games.shapes import Decided, RecordBase, Seat, ViewShapes
from ..choice.engine import ChoiceOptions
from ..choice.shapes import (
    ChoicePublicSeat,
    ChoiceRoll,
    _ChoiceBoard,
    _ChoiceGame,
    _Sheet,
)
from .engine import ChoiceSpecialsMove

__all__ = [
    "ChoiceSpecialsDecision",
    "ChoiceSpecialsGameView",
    "ChoiceSpecialsPublicSeat",
    "ChoiceSpecialsRecord",
    "ChoiceSpecialsSeatSheet",
    "ChoiceSpecialsSeatView",
    "ChoiceSpecialsSheet",
    "ChoiceSpecialsYou",
    "views",
]

Card = Literal["fdh", "null", "kur", "minus1", "minus2", "suppen_kasper"]


class ChoiceSpecialsSheet(_Sheet):
    """A CHOICE sheet with special cards: also the cards left and the leftovers plate."""

    cards: list[Card]
    plate: Annotated[list[Die], msgspec.Meta(description="the leftovers plate's dice")]


class ChoiceSpecialsSeatSheet(ChoiceSpecialsSheet):
    """A seat's committed (public) sheet."""

    seat: Seat
    decided: Annotated[bool, msgspec.Meta(description="the seat has decided this batch")]


class ChoiceSpecialsYou(msgspec.Struct):
    """What only this seat sees: its draft sheet and its decisions not yet disclosed."""

    seat: Seat
    roll_index: Annotated[int, msgspec.Meta(ge=0, description="this batch's roll to decide")]
    decisions: list[ChoiceSpecialsMove]
    sheet: ChoiceSpecialsSheet


class ChoiceSpecialsSeatView(_ChoiceBoard, tag_field="ruleset", tag="choice-specials"):
    """A CHOICE-with-special-cards seat's view."""

    options: ChoiceOptions
    finished: bool
    seats: list[ChoiceSpecialsSeatSheet]
    you: ChoiceSpecialsYou


# -- the public view


class ChoiceSpecialsPublicSeat(ChoicePublicSeat, kw_only=True):
    """Who sits there and, once the game runs (and unless sealed), their sheet and cards."""

    cards: list[Card] | UnsetType = UNSET
    plate: list[Die] | UnsetType = UNSET


class ChoiceSpecialsGameView(_ChoiceGame, tag_field="ruleset", tag="choice-specials", kw_only=True):
    """A CHOICE-with-special-cards game as anyone sees it."""

    seats: list[ChoiceSpecialsPublicSeat]


# -- the record


class ChoiceSpecialsDecision(Decided):
    """A decision as the record tells it."""

    moves: list[ChoiceSpecialsMove]


class ChoiceSpecialsRecord(RecordBase, tag_field="ruleset", tag="choice-specials", kw_only=True):
    """A CHOICE-with-special-cards game's record."""

    options: ChoiceOptions
    decisions: list[ChoiceSpecialsDecision]
    dice: Annotated[list[ChoiceRoll], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoiceSpecialsSeatSheet], msgspec.Meta(description="empty until over")]


views = ViewShapes(
    ChoiceSpecialsSeatView, ChoiceSpecialsGameView, ChoiceSpecialsDecision, ChoiceSpecialsRecord
)
