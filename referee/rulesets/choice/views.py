"""What a CHOICE ruleset's views are built of, as the engine returns them and the contract
states them (``ChoiceRuleset.views``), and a sheet as they show it."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from ...games._common import Die
from ...games.shapes import Decided, GameBase, Ranking, RecordBase, Seat, Sitting
from .sheet import _SUM_KEYS, ChoiceMove, ChoiceOptions, ChoiceScore, Sheet, _score_json

__all__ = [
    "ChoiceBoard",
    "ChoiceDecision",
    "ChoiceGame",
    "ChoiceGameView",
    "ChoicePublicSeat",
    "ChoicePublicSheet",
    "ChoiceRecord",
    "ChoiceRoll",
    "ChoiceSeatSheet",
    "ChoiceSeatView",
    "ChoiceSheet",
    "ChoiceYou",
    "FifthDie",
    "SumKey",
    "ViewParts",
    "pack_sheet",
    "sheet_shown",
]

SumKey = Annotated[str, msgspec.Meta(pattern="^([2-9]|1[0-2])$", description="a sum, 2..12")]
Roll = Annotated[list[Die], msgspec.Meta(min_length=5, max_length=5)]
Batch = Annotated[int, msgspec.Meta(ge=0, description="the batch of rolls being decided")]
FirstRoll = Annotated[int, msgspec.Meta(ge=0, description="the game-wide index of rolls[0]")]
Rolls = Annotated[list[Roll], msgspec.Meta(description="this batch's rolls, five dice each")]
EndMarks = Annotated[int, msgspec.Meta(description="a fifth die's marks that end a sheet")]


class FifthDie(msgspec.Struct, frozen=True, gc=False):
    """One of the (up to three) fifth-die values chosen, and how often it was marked."""

    value: Die
    marks: Annotated[int, msgspec.Meta(ge=0)]


class ChoiceSheet(msgspec.Struct):
    """A CHOICE score sheet: marks per sum, the fifth dice, and what it scores."""

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


class ChoiceSeatSheet(ChoiceSheet):
    """A seat's committed (public) sheet."""

    seat: Seat
    decided: Annotated[bool, msgspec.Meta(description="the seat has decided this batch")]


class ChoiceYou(msgspec.Struct):
    """What only this seat sees: its draft sheet and its decisions not yet disclosed."""

    seat: Seat
    roll_index: Annotated[int, msgspec.Meta(ge=0, description="this batch's roll to decide")]
    decisions: list[ChoiceMove]
    sheet: ChoiceSheet


class ChoiceBoard(msgspec.Struct, kw_only=True):
    """What every seat sees of a CHOICE game (``view(state)``): the board and every committed
    sheet."""

    options: ChoiceOptions
    finished: bool
    batch: Batch
    first_roll: FirstRoll
    rolls: Rolls
    end_marks: EndMarks
    seats: list[ChoiceSeatSheet]
    ranking: Ranking | UnsetType = UNSET


class ChoiceSeatView(ChoiceBoard, tag_field="ruleset", tag="choice", kw_only=True):
    """A CHOICE seat's view: the board, every committed sheet, and its own (``you``)."""

    you: ChoiceYou


class ChoicePublicSheet(Sitting):
    """A public seat's sheet, once the game runs (and unless sealed)."""

    marks: dict[SumKey, int] | UnsetType = UNSET
    fifth_dice: list[FifthDie] | UnsetType = UNSET
    done: bool | UnsetType = UNSET
    retired: bool | UnsetType = UNSET
    rounds: int | UnsetType = UNSET
    free_throws: int | UnsetType = UNSET
    score: ChoiceScore | UnsetType = UNSET


class ChoicePublicSeat(ChoicePublicSheet):
    """Who sits there and, once the game runs (and unless sealed), their sheet."""

    decided: bool | UnsetType = UNSET


class ChoiceGame(GameBase, kw_only=True):
    """The public view's board fields: there once the game runs, unless it is sealed."""

    options: ChoiceOptions
    batch: Batch | UnsetType = UNSET
    first_roll: FirstRoll | UnsetType = UNSET
    rolls: Rolls | UnsetType = UNSET
    end_marks: EndMarks | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET


class ChoiceGameView(ChoiceGame, tag_field="ruleset", tag="choice", kw_only=True):
    """A CHOICE game as anyone sees it; the board fields once it runs, unless sealed."""

    seats: list[ChoicePublicSeat]


class ChoiceDecision(Decided):
    """A decision as the record tells it."""

    moves: list[ChoiceMove]


class ChoiceRoll(msgspec.Struct, gc=False):
    """A roll of the game, by its game-wide index."""

    roll: Annotated[int, msgspec.Meta(ge=0)]
    dice: Roll


class ChoiceRecord(RecordBase, tag_field="ruleset", tag="choice", kw_only=True):
    """A CHOICE game's record: what its view and events disclosed; once over, every die."""

    options: ChoiceOptions
    decisions: list[ChoiceDecision]
    dice: Annotated[list[ChoiceRoll], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoiceSeatSheet], msgspec.Meta(description="empty until over")]


class ViewParts(msgspec.Struct, frozen=True):
    """The Structs a CHOICE ruleset's views are built of: a sheet, a seat's public sheet,
    what only the seat sees, and the board."""

    sheet: type
    seat_sheet: type
    you: type
    board: type


#: a sheet's packed form, by which ``sheet_shown`` remembers it
pack_sheet = msgspec.msgpack.Encoder().encode
_unpack_sheet = msgspec.msgpack.Decoder(Sheet).decode


@lru_cache(maxsize=4096)
def sheet_shown(packed: bytes, cards: bool) -> tuple[Any, ...]:
    """A sheet's fields as views show it (a ``ChoiceSheet``'s, in order; with ``cards``, a
    specials sheet's), remembered by its packed form: every view shows every sheet, and a
    sheet changes once per roll. Shared by every view that shows it, and never changed."""
    sheet = _unpack_sheet(packed)
    shown: tuple[Any, ...] = (
        dict(zip(_SUM_KEYS, sheet.marks, strict=True)),
        [FifthDie(v, n) for v, n in zip(sheet.fifth_values, sheet.fifth_counts, strict=True)],
        sheet.done,
        sheet.retired,
        sheet.rounds,
        sheet.free_throws,
        _score_json(tuple(sheet.marks)),
    )
    return (*shown, list(sheet.cards), list(sheet.plate)) if cards else shown
