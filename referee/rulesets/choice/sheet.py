"""A CHOICE game's data: the moves, the options, a seat's sheet, the whole state, and what a
sheet scores (RULES.md CHOICE §5). Shared with ``choice-specials``, whose sheets also hold cards
and a plate."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Annotated, Generic, TypeVar

import msgspec

from ...games._common import Die

__all__ = [
    "POINTS",
    "ROLLS_PER_POSITION",
    "ChoiceMove",
    "ChoiceOptions",
    "ChoiceScore",
    "ChoiceState",
    "FreeThrow",
    "Mark",
    "Pair",
    "Pass",
    "Sheet",
    "SumScore",
    "score_marks",
]

POINTS = {2: 100, 3: 70, 4: 60, 5: 50, 6: 40, 7: 30, 8: 40, 9: 50, 10: 60, 11: 70, 12: 100}

#: CHOICE rolls drawn from one dice position (RULES.md "Dice").
ROLLS_PER_POSITION = 6

Pair = tuple[Die, Die]


class Mark(msgspec.Struct, frozen=True, tag="mark", forbid_unknown_fields=True):
    """A normal round: one fifth die (marked in its slot) and two pairs (their sums marked)."""

    fifth: Die
    pairs: tuple[Pair, Pair]


class FreeThrow(msgspec.Struct, frozen=True, tag="free_throw", forbid_unknown_fields=True):
    """All three fifth-die values are chosen and the roll shows none: one die is set aside."""

    set_aside: Die
    pairs: tuple[Pair, Pair]


class Pass(msgspec.Struct, frozen=True, tag="pass", forbid_unknown_fields=True):
    """Closes a postal round for a seat whose sheet completed before the round's last roll:
    the rest of its round is void. The seat sends it because a round that closed by itself
    would tell everyone, before the reveal, what its hidden decisions did (docs/RULES.md)."""


ChoiceMove = Mark | FreeThrow | Pass

M = TypeVar("M")

Schedule = Annotated[
    tuple[Annotated[int, msgspec.Meta(ge=1, le=20)], ...],
    msgspec.Meta(
        min_length=1,
        max_length=64,
        description="rolls per postal round; the last value repeats forever",
    ),
]


class ChoiceOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Options of both CHOICE rulesets."""

    schedule: Schedule = (1,)


class Sheet(msgspec.Struct, array_like=True):
    """One seat's score sheet: marks per sum, fifth-die slots, and (specials) cards and plate."""

    marks: list[int]  # index = sum - 2
    fifth_values: list[int]  # up to 3, in the order they were chosen (the sheet's rows)
    fifth_counts: list[int]
    done: bool = False
    retired: bool = False
    rounds: int = 0  # rounds played, extra rounds and free throws included
    free_throws: int = 0
    cards: list[str] = []  # special cards still in hand
    plate: list[int] = []  # leftovers plate, sorted

    def clone(self) -> Sheet:
        return Sheet(
            list(self.marks),
            list(self.fifth_values),
            list(self.fifth_counts),
            self.done,
            self.retired,
            self.rounds,
            self.free_throws,
            list(self.cards),
            list(self.plate),
        )

    def slots(self) -> tuple[int, ...] | None:
        """The fifth-die values once all three are chosen (the rule then binds), else None."""
        return tuple(sorted(self.fifth_values)) if len(self.fifth_values) == 3 else None


class ChoiceState(msgspec.Struct, Generic[M], array_like=True):
    """A whole CHOICE game. ``key``, ``drafts`` and ``pending`` are secret; views hide them.

    Generic in the move type, so each CHOICE ruleset decodes its own pending moves.
    """

    ruleset: str
    options: ChoiceOptions
    key: bytes
    batch: int  # index of the current postal round
    first_roll: int  # game-wide index of the batch's first roll
    rolls: list[tuple[int, ...]]  # the batch's rolls, sorted dice (public)
    sheets: list[Sheet]  # committed, public
    drafts: list[Sheet | None]  # a seat's sheet with its hidden decisions of this batch
    progress: list[int]  # rolls of the batch each seat has decided
    pending: list[list[M]]  # each seat's hidden decisions of this batch
    seqs: list[int]  # accepted submissions per seat
    timeouts: list[int]  # timeouts in a row per seat
    finished: bool = False
    # each seat's seq at the last reveal: its decisions before it are public, the rest hidden
    # (a game stored before this field reads as [], disclosing nothing until its next reveal)
    revealed: list[int] = []
    # postal rounds each seat has closed (all its rolls decided, or passed, or timed out): the
    # only count of its decisions that others see before a reveal (a game stored before this
    # field reads as [], every count 0)
    submitted: list[int] = []


# Scores are plain values (ints, tuples of scores) that cannot form cycles, and thousands stay
# remembered by ``_score``: untracked, they cost the garbage collector's full passes nothing.
class SumScore(msgspec.Struct, frozen=True, gc=False):
    """One row of the score block: a sum, its marks, and the points they score."""

    sum: int
    marks: int
    points: int


class ChoiceScore(msgspec.Struct, frozen=True, gc=False):
    """The German score sheet's figures: per-sum points, plus and minus columns, total."""

    total: int
    plus: int
    minus: int
    sums: tuple[SumScore, ...]


_SUM_KEYS = tuple(str(total) for total in range(2, 13))  # a sheet's marks, keyed as sent


def _sum_points(total: int, marks: int) -> int:
    if marks == 0 or marks == 5:
        return 0
    if marks <= 4:
        return -200
    return (min(marks, 10) - 5) * POINTS[total]


def score_marks(marks: dict[int, int] | Sequence[int]) -> ChoiceScore:
    """Score a sheet from its marks (a mapping sum -> marks, or a list indexed by sum - 2)."""
    counts = tuple(marks.get(s, 0) for s in range(2, 13)) if isinstance(marks, dict) else marks
    return _score(tuple(counts))


@lru_cache(maxsize=8192)
def _score(counts: tuple[int, ...]) -> ChoiceScore:
    """Remembered: every view scores every sheet, and sheets change once per roll."""
    sums = tuple(
        SumScore(s, n, _sum_points(s, n)) for s, n in zip(range(2, 13), counts, strict=True)
    )
    plus = sum(x.points for x in sums if x.points > 0)
    minus = -sum(x.points for x in sums if x.points < 0)
    return ChoiceScore(plus - minus, plus, minus, sums)


@lru_cache(maxsize=8192)
def _score_json(counts: tuple[int, ...]) -> ChoiceScore:
    """A sheet's score as sent, remembered: every turn shows every sheet's score, and a Raw is
    copied where the score's twelve Structs were encoded each time (a third of a turn's
    encoding). The views' ``score`` holds it: the ``ChoiceScore`` it encodes, already JSON."""
    return msgspec.Raw(msgspec.json.encode(_score(counts)))  # type: ignore[return-value]
