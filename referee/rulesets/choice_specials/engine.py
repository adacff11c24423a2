"""CHOICE with special cards: 7-mark end, six one-shot cards and a public leftovers plate.

Rules: RULES.md "CHOICE with special cards" and docs/RULES.md. A card replaces the normal move
of a round; Suppen-Kasper is an extra round of its own (played from the plate) that does not
use up a roll: in a postal round it may stand at any of the k + 1 places between the rolls.
"""

from __future__ import annotations

from itertools import combinations
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ...games._common import Die
from ...games.errors import RuleViolation
from ...games.shapes import Decided, RecordBase, Seat, ViewShapes
from ..choice.engine import ChoiceRuleset
from ..choice.rounds import (
    _fmt,
    _pairings,
    _sorted_pairs,
    _without,
    apply_round,
    check_uses_dice,
    diagnose_round,
    mark_fifth,
    mark_sum,
    normalize,
    round_moves,
)
from ..choice.sheet import ChoiceOptions, ChoiceState, FreeThrow, Mark, Pair, Pass, Sheet
from ..choice.views import (
    ChoiceBoard,
    ChoiceGame,
    ChoicePublicSheet,
    ChoiceRoll,
    ChoiceSheet,
    ViewParts,
)

__all__ = [
    "CARDS",
    "ChoiceSpecialsBoard",
    "ChoiceSpecialsDecision",
    "ChoiceSpecialsGameView",
    "ChoiceSpecialsMove",
    "ChoiceSpecialsPublicSeat",
    "ChoiceSpecialsRecord",
    "ChoiceSpecialsRuleset",
    "ChoiceSpecialsSeatSheet",
    "ChoiceSpecialsSeatView",
    "ChoiceSpecialsSheet",
    "ChoiceSpecialsYou",
    "Fdh",
    "Kur",
    "Minus1",
    "Minus2",
    "NullCard",
    "SuppenKasper",
]

#: Card ids in the canonical order their moves are listed.
CARDS = ("fdh", "null", "kur", "minus1", "minus2", "suppen_kasper")


class Fdh(msgspec.Struct, frozen=True, tag="fdh", forbid_unknown_fields=True):
    """FdH: two dice to the plate, one pair marked, one fifth die (or set aside as a free throw)."""

    remove: Pair
    pair: Pair
    fifth: Die | None = None
    set_aside: Die | None = None


class NullCard(msgspec.Struct, frozen=True, tag="null", forbid_unknown_fields=True):
    """The Null card: no fifth die; two pairs marked, the fifth die goes to the plate."""

    pairs: tuple[Pair, Pair]
    plate: Die


class Kur(msgspec.Struct, frozen=True, tag="kur", forbid_unknown_fields=True):
    """KUR: a fifth die (usual rule) and no sums; the other four dice go to the plate."""

    fifth: Die


class Minus1(msgspec.Struct, frozen=True, tag="minus1", forbid_unknown_fields=True):
    """−1: refuse the roll; all five dice go to the plate."""


class Minus2(msgspec.Struct, frozen=True, tag="minus2", forbid_unknown_fields=True):
    """−2: refuse the roll and take one mark off a fifth-die value; all five dice to the plate."""

    value: Die


CardInRound = Fdh | NullCard | Kur | Minus1 | Minus2


class SuppenKasper(msgspec.Struct, frozen=True, tag="suppen_kasper", forbid_unknown_fields=True):
    """Suppen-Kasper: eat five plate values as an extra round; the rest of the plate is discarded.

    ``round`` is the extra round's move. A card inside it is refused (one card per round).
    """

    eat: tuple[Die, Die, Die, Die, Die]
    round: Mark | FreeThrow | CardInRound


ChoiceSpecialsMove = Mark | FreeThrow | Pass | Fdh | NullCard | Kur | Minus1 | Minus2 | SuppenKasper

_CARD_OF: dict[type, str] = {
    Fdh: "fdh",
    NullCard: "null",
    Kur: "kur",
    Minus1: "minus1",
    Minus2: "minus2",
    SuppenKasper: "suppen_kasper",
}


def _sorted2(pair: Any) -> Pair:
    a, b = pair
    return (a, b) if a <= b else (b, a)


def _normalize(move: Any) -> Any:
    """Canonical form of any move: pairs and dice lists sorted."""
    if isinstance(move, Fdh):
        return msgspec.structs.replace(move, remove=_sorted2(move.remove), pair=_sorted2(move.pair))
    if isinstance(move, NullCard):
        return msgspec.structs.replace(move, pairs=_sorted_pairs(move.pairs))
    if isinstance(move, SuppenKasper):
        # five dice sorted are five dice; a round's move normalizes to one of its own kind
        return SuppenKasper(tuple(sorted(move.eat)), _normalize(move.round))  # type: ignore[arg-type]
    return normalize(move)


def _fifth_options(sheet: Sheet, dice: tuple[int, ...]) -> tuple[list[int], bool]:
    """Values that may be marked as fifth die from ``dice``; True if none may (a free throw)."""
    values = sorted(set(dice))
    if len(sheet.fifth_values) < 3:
        return values, False
    allowed = [v for v in values if v in sheet.fifth_values]
    return allowed, not allowed


def _fdh_moves(sheet: Sheet, dice: tuple[int, ...]) -> list[Fdh]:
    out: set[Fdh] = set()
    for i, j in combinations(range(5), 2):
        removed = (dice[i], dice[j])
        three = _without(dice, *removed)
        allowed, free = _fifth_options(sheet, three)
        for k in range(3):
            single = three[k]
            pair = _sorted2(three[:k] + three[k + 1 :])
            if free:
                out.add(Fdh(removed, pair, set_aside=single))
            elif single in allowed:
                out.add(Fdh(removed, pair, fifth=single))
    return sorted(out, key=lambda m: (m.remove, m.pair, m.fifth or 0, m.set_aside or 0))


def _plate_combos(plate: list[int]) -> list[tuple[int, int, int, int, int]]:
    return sorted(set(combinations(sorted(plate), 5)))


# -- the views: CHOICE's, with the cards left and the leftovers plate ---------------------

Card = Literal["fdh", "null", "kur", "minus1", "minus2", "suppen_kasper"]


class ChoiceSpecialsSheet(ChoiceSheet):
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


class ChoiceSpecialsBoard(ChoiceBoard, kw_only=True):
    """What every seat sees of a CHOICE-with-special-cards game (``view(state)``)."""

    # a specials sheet in each seat's place (the same position in the JSON as CHOICE's)
    seats: list[ChoiceSpecialsSeatSheet]  # type: ignore[assignment]


class ChoiceSpecialsSeatView(
    ChoiceSpecialsBoard, tag_field="ruleset", tag="choice-specials", kw_only=True
):
    """A CHOICE-with-special-cards seat's view."""

    you: ChoiceSpecialsYou


class ChoiceSpecialsPublicSeat(ChoicePublicSheet):
    """Who sits there and, once the game runs (and unless sealed), their sheet and cards."""

    cards: list[Card] | UnsetType = UNSET
    plate: list[Die] | UnsetType = UNSET
    decided: bool | UnsetType = UNSET


class ChoiceSpecialsGameView(ChoiceGame, tag_field="ruleset", tag="choice-specials", kw_only=True):
    """A CHOICE-with-special-cards game as anyone sees it."""

    seats: list[ChoiceSpecialsPublicSeat]


class ChoiceSpecialsDecision(Decided):
    """A decision as the record tells it."""

    moves: list[ChoiceSpecialsMove]


class ChoiceSpecialsRecord(RecordBase, tag_field="ruleset", tag="choice-specials", kw_only=True):
    """A CHOICE-with-special-cards game's record."""

    options: ChoiceOptions
    decisions: list[ChoiceSpecialsDecision]
    dice: Annotated[list[ChoiceRoll], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoiceSpecialsSeatSheet], msgspec.Meta(description="empty until over")]


class ChoiceSpecialsRuleset(ChoiceRuleset):
    """``choice-specials``: done at the 7th mark; cards fdh, null, kur, −1, −2, Suppen-Kasper."""

    id: ClassVar[str] = "choice-specials"
    title: ClassVar[str] = "CHOICE with special cards (play-by-mail variant)"
    end_marks: ClassVar[int] = 7
    cards: ClassVar[tuple[str, ...]] = CARDS
    Move: ClassVar[Any] = ChoiceSpecialsMove
    State: ClassVar[Any] = ChoiceState[ChoiceSpecialsMove]
    views: ClassVar[ViewShapes | None] = ViewShapes(
        ChoiceSpecialsSeatView,
        ChoiceSpecialsGameView,
        ChoiceSpecialsDecision,
        ChoiceSpecialsRecord,
    )
    _shapes: ClassVar[ViewParts] = ViewParts(
        ChoiceSpecialsSheet, ChoiceSpecialsSeatSheet, ChoiceSpecialsYou, ChoiceSpecialsBoard
    )

    # -- enumeration -------------------------------------------------------------------------

    def _card_moves(self, sheet: Sheet, dice: tuple[int, ...]) -> list[Any]:
        moves: list[Any] = []
        cards = sheet.cards
        if "fdh" in cards:
            moves.extend(_fdh_moves(sheet, dice))
        if "null" in cards:
            for plate in sorted(set(dice)):
                moves.extend(NullCard(pairs, plate) for pairs in _pairings(_without(dice, plate)))
        if "kur" in cards:
            allowed, _ = _fifth_options(sheet, dice)
            moves.extend(Kur(v) for v in allowed)
        if "minus1" in cards:
            moves.append(Minus1())
        if "minus2" in cards:
            moves.extend(
                Minus2(v)
                for v, n in sorted(zip(sheet.fifth_values, sheet.fifth_counts, strict=True))
                if n >= 1
            )
        moves.extend(self._extra_rounds(sheet))
        return moves

    def _extra_rounds(self, sheet: Sheet) -> list[SuppenKasper]:
        if "suppen_kasper" not in sheet.cards or len(sheet.plate) < 5:
            return []
        slots = sheet.slots()
        return [
            SuppenKasper(eat, move)
            for eat in _plate_combos(sheet.plate)
            for move in round_moves(eat, slots)
        ]

    # -- validation ----------------------------------------------------------------------------

    def normalize(self, move: Any) -> Any:
        return _normalize(move)

    def _is_extra_round(self, move: Any) -> bool:
        return isinstance(move, SuppenKasper)

    def _check_card(self, sheet: Sheet, card: str) -> None:
        if card not in sheet.cards:
            raise RuleViolation(
                "card-already-used", f"the card {card} was already played; each card is played once"
            )

    def _validate_extra_round(self, sheet: Sheet, move: SuppenKasper) -> None:
        self._check_card(sheet, "suppen_kasper")
        if len(sheet.plate) < 5:
            raise RuleViolation(
                "plate-too-small",
                f"Suppen-Kasper needs 5 dice on the leftovers plate; it holds {len(sheet.plate)}",
            )
        plate = list(sheet.plate)
        for value in move.eat:
            if value not in plate:
                raise RuleViolation(
                    "dice-not-on-plate",
                    f"the plate holds {_fmt(sheet.plate)}: it cannot give {_fmt(move.eat)}",
                    field="eat",
                )
            plate.remove(value)
        if not isinstance(move.round, (Mark, FreeThrow)):
            raise RuleViolation(
                "one-card-per-round",
                "the Suppen-Kasper round is the card played in it; no other card may join it",
                field="round",
            )
        if move.round not in round_moves(move.eat, sheet.slots()):
            diagnose_round(sheet, move.eat, move.round)
            raise RuleViolation("illegal-move", "the extra round's move is not legal")

    def _validate(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> None:
        if isinstance(move, (Mark, FreeThrow)):
            super()._validate(sheet, move, dice)
            return
        card = _CARD_OF.get(type(move))
        if card is None:
            super()._validate_card(sheet, move, dice)
        self._check_card(sheet, card)
        legal = [m for m in self._card_moves(sheet, dice) if type(m) is type(move)]
        if move in legal:
            return
        self._diagnose_card(sheet, move, dice)
        raise RuleViolation("illegal-move", f"this {card} move is not legal on this roll")

    def _diagnose_card(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> None:
        """Raise the rule a card move breaks; independent of :meth:`_card_moves`."""
        if isinstance(move, Fdh):
            if (move.fifth is None) == (move.set_aside is None):
                raise RuleViolation(
                    "fifth-or-set-aside", "FdH names exactly one of fifth and set_aside"
                )
            single = move.fifth if move.fifth is not None else move.set_aside
            assert single is not None  # exactly one of the two is set: checked just above
            three = [*move.pair, single]
            check_uses_dice([*move.remove, *three], dice)
            allowed, free = _fifth_options(sheet, tuple(three))
            if move.fifth is not None and move.fifth not in allowed:
                raise RuleViolation(
                    "fifth-die-must-match",
                    f"your fifth-die values are {_fmt(sheet.fifth_values)}: of the three dice "
                    f"left, only {_fmt(allowed) or 'none'} may be marked, not {move.fifth}",
                )
            if move.set_aside is not None and not free:
                raise RuleViolation(
                    "free-throw-not-allowed",
                    f"a fifth die must be marked (one of {_fmt(allowed)}), not set aside",
                )
        elif isinstance(move, NullCard):
            check_uses_dice([move.plate, *move.pairs[0], *move.pairs[1]], dice)
        elif isinstance(move, Kur):
            allowed, _ = _fifth_options(sheet, dice)
            if not allowed:
                raise RuleViolation(
                    "card-needs-fifth-die",
                    "KUR needs a legal fifth die and the roll shows none of your values",
                )
            if move.fifth not in dice:
                check_uses_dice([move.fifth], dice)
            if move.fifth not in allowed:
                raise RuleViolation(
                    "fifth-die-must-match",
                    f"the fifth die must be one of {_fmt(allowed)}, not {move.fifth}",
                )
        elif isinstance(move, Minus2):
            marked = [v for v, n in zip(sheet.fifth_values, sheet.fifth_counts, strict=True) if n]
            if move.value not in marked:
                raise RuleViolation(
                    "no-mark-to-remove",
                    f"−2 takes a mark off one of your marked fifth-die values "
                    f"({_fmt(marked) or 'none'}), not {move.value}",
                    field="value",
                )

    # -- applying ------------------------------------------------------------------------------

    def _apply(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> None:
        card = _CARD_OF.get(type(move))
        if card is None:
            apply_round(sheet, move)
        else:
            sheet.cards.remove(card)
            sheet.rounds += 1
            plate = sheet.plate
            if isinstance(move, Fdh):
                plate.extend(move.remove)
                mark_sum(sheet, move.pair)
                if move.fifth is not None:
                    mark_fifth(sheet, move.fifth)
                else:
                    sheet.free_throws += 1
            elif isinstance(move, NullCard):
                plate.append(move.plate)
                mark_sum(sheet, move.pairs[0])
                mark_sum(sheet, move.pairs[1])
            elif isinstance(move, Kur):
                mark_fifth(sheet, move.fifth)
                plate.extend(_without(dice, move.fifth))
            elif isinstance(move, Minus1):
                plate.extend(dice)
            elif isinstance(move, Minus2):
                plate.extend(dice)
                sheet.fifth_counts[sheet.fifth_values.index(move.value)] -= 1
            else:  # Suppen-Kasper: the extra round eats five, the dog gets the rest
                sheet.plate = []
                sheet.rounds -= 1  # apply_round counts the extra round itself
                apply_round(sheet, move.round)
            sheet.plate.sort()
        self._check_end(sheet)
