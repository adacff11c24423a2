"""Sid Sackson's CHOICE: every seat evaluates the same shared roll, marks two sums and a fifth die.

Rules: RULES.md "CHOICE" and docs/RULES.md. The engine is shared with ``choice-specials``
(see :mod:`referee.rulesets.choice_specials`), which adds cards through the ``_card_*`` hooks.

Rolls are handed out in *postal rounds* (batches) of k rolls (option ``schedule``). Every active
seat decides each roll of the batch; its decisions stay hidden (``drafts``) until every active
seat has completed the batch, then all are revealed together and the next batch is rolled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from itertools import combinations, combinations_with_replacement
from pathlib import Path
from typing import Annotated, Any, ClassVar, Generic, NoReturn, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from ...games import dice as _dice
from ...games._common import Die, Scorer, check_seats, parse_options, places
from ...games.errors import RuleViolation
from ...games.shapes import (
    Decided,
    GameBase,
    Ranking,
    RecordBase,
    Seat,
    Sitting,
    ViewShapes,
)

__all__ = [
    "POINTS",
    "ChoiceBoard",
    "ChoiceDecision",
    "ChoiceGame",
    "ChoiceGameView",
    "ChoiceMove",
    "ChoiceOptions",
    "ChoicePublicSeat",
    "ChoicePublicSheet",
    "ChoiceRecord",
    "ChoiceRoll",
    "ChoiceRuleset",
    "ChoiceScore",
    "ChoiceSeatSheet",
    "ChoiceSeatView",
    "ChoiceSheet",
    "ChoiceState",
    "ChoiceYou",
    "FifthDie",
    "FreeThrow",
    "Mark",
    "Pass",
    "Sheet",
    "SumKey",
    "SumScore",
    "score_marks",
    "warm_rounds",
]

#: Points per mark past the fifth, per sum (RULES.md CHOICE §5).
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
_NORMAL_MOVES = frozenset((Mark, FreeThrow))

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


# -- the views: what the engine returns, and the contract states (``views``) ----------------

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


_pack_sheet = msgspec.msgpack.Encoder().encode
_unpack_sheet = msgspec.msgpack.Decoder(Sheet).decode


@lru_cache(maxsize=4096)
def _sheet_shown(packed: bytes, cards: bool) -> tuple[Any, ...]:
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


def roll_dice(key: bytes, n: int) -> bytes:
    """The five dice of game-wide roll ``n``, in the order drawn.

    Six rolls share a dice position (``rolls/<n // 6>``, 30 dice): one HMAC block serves six
    decisions of solitaire play.
    """
    start = 5 * (n % ROLLS_PER_POSITION)
    return _roll_position(key, n // ROLLS_PER_POSITION)[start : start + 5]


@lru_cache(maxsize=4096)
def _roll_position(key: bytes, position: int) -> bytes:
    """The 30 dice of a roll position, remembered: each is read by six rolls."""
    return _dice.faces(key, f"rolls/{position}", 5 * ROLLS_PER_POSITION)


# --- enumeration of one round

_PAIRINGS = ((0, 1, 2, 3), (0, 2, 1, 3), (0, 3, 1, 2))


def _pairings(four: tuple[int, ...]) -> list[tuple[Pair, Pair]]:
    """Distinct ways to split four sorted dice into two pairs, canonical (sorted) form."""
    out: list[tuple[Pair, Pair]] = []
    for a, b, c, d in _PAIRINGS:
        p, q = (four[a], four[b]), (four[c], four[d])
        pairs = (p, q) if p <= q else (q, p)
        if pairs not in out:
            out.append(pairs)
    return out


def _without(dice: tuple[int, ...], *values: int) -> tuple[int, ...]:
    rest = list(dice)
    for v in values:
        rest.remove(v)
    return tuple(rest)


@cache
def _partitions(dice: tuple[int, ...]) -> tuple[tuple[int, tuple[Pair, Pair]], ...]:
    """Every distinct (fifth die, two pairs) split of five sorted dice, sorted."""
    out = {(fifth, pairs) for fifth in set(dice) for pairs in _pairings(_without(dice, fifth))}
    return tuple(sorted(out))


@cache
def round_moves(
    dice: tuple[int, ...], slots: tuple[int, ...] | None
) -> tuple[Mark | FreeThrow, ...]:
    """The legal normal moves of a round, canonical order; ``slots`` as :meth:`Sheet.slots`."""
    parts = _partitions(dice)
    if slots is None:
        return tuple(Mark(f, p) for f, p in parts)
    forced = tuple(Mark(f, p) for f, p in parts if f in slots)
    return forced or tuple(FreeThrow(f, p) for f, p in parts)


@cache
def _round_move_set(dice: tuple[int, ...], slots: tuple[int, ...] | None) -> frozenset[Any]:
    return frozenset(round_moves(dice, slots))


def warm_rounds() -> None:
    """Fill the round caches at once: every sorted roll of five dice with every state of the
    fifth-die slots (252 x 21 entries, about 30,000 objects). A server does this before it
    freezes its startup objects, so the garbage collector's full passes skip them."""
    for dice in combinations_with_replacement(range(1, 7), 5):
        for slots in (None, *combinations(range(1, 7), 3)):
            _round_move_set(dice, slots)


def _sorted_pairs(pairs: Sequence[Sequence[int]]) -> tuple[Pair, Pair]:
    p, q = (tuple(sorted(pair)) for pair in pairs)
    # each of two dice, sorted: still a Pair (tuple() makes a tuple[int, ...])
    return (p, q) if p <= q else (q, p)  # type: ignore[return-value]


def _fmt(values: Sequence[int]) -> str:
    return ",".join(map(str, sorted(values)))


def check_uses_dice(used: Sequence[int], dice: Sequence[int], what: str = "the roll") -> None:
    """Every die of the round is used exactly once (RULES.md CHOICE §2)."""
    if sorted(used) != sorted(dice):
        raise RuleViolation(
            "dice-not-in-roll",
            f"the move uses dice {_fmt(used)} but {what} is {_fmt(dice)}; use every die once",
        )


def check_fifth(sheet: Sheet, fifth: int, dice: Sequence[int]) -> None:
    """The fifth-die rule for a die that is to be marked (RULES.md CHOICE §3)."""
    if len(sheet.fifth_values) < 3 or fifth in sheet.fifth_values:
        return
    shown = sorted(set(dice) & set(sheet.fifth_values))
    if shown:
        raise RuleViolation(
            "fifth-die-must-match",
            f"your fifth-die values are {_fmt(sheet.fifth_values)} and the dice show "
            f"{_fmt(shown)}: the fifth die must be one of those, not {fifth}",
        )
    raise RuleViolation(
        "fifth-die-must-match",
        f"your fifth-die values are {_fmt(sheet.fifth_values)} and the dice show none of them: "
        f"this is a free throw, {fifth} cannot be marked",
    )


def check_free_throw(sheet: Sheet, dice: Sequence[int]) -> None:
    """A free throw only with all three values chosen and none of them shown."""
    if len(sheet.fifth_values) < 3:
        raise RuleViolation(
            "free-throw-not-allowed",
            "a free throw needs all three fifth-die values chosen; choose a fifth die",
        )
    shown = sorted(set(dice) & set(sheet.fifth_values))
    if shown:
        raise RuleViolation(
            "free-throw-not-allowed",
            f"the dice show {_fmt(shown)}, one of your fifth-die values: mark it as fifth die",
        )


def diagnose_round(sheet: Sheet, dice: tuple[int, ...], move: Any) -> None:
    """Raise the rule a normal move breaks; independent of :func:`round_moves`."""
    if isinstance(move, Mark):
        check_uses_dice([move.fifth, *move.pairs[0], *move.pairs[1]], dice)
        check_fifth(sheet, move.fifth, dice)
    elif isinstance(move, FreeThrow):
        check_uses_dice([move.set_aside, *move.pairs[0], *move.pairs[1]], dice)
        check_free_throw(sheet, dice)
    else:
        raise RuleViolation("unknown-move", f"{type(move).__name__} is not a move of this ruleset")


def mark_sum(sheet: Sheet, pair: Sequence[int]) -> None:
    sheet.marks[pair[0] + pair[1] - 2] += 1


def mark_fifth(sheet: Sheet, value: int) -> None:
    if value in sheet.fifth_values:
        sheet.fifth_counts[sheet.fifth_values.index(value)] += 1
    else:
        sheet.fifth_values.append(value)
        sheet.fifth_counts.append(1)


def apply_round(sheet: Sheet, move: Mark | FreeThrow) -> None:
    """Write a legal normal move on the sheet."""
    mark_sum(sheet, move.pairs[0])
    mark_sum(sheet, move.pairs[1])
    if isinstance(move, Mark):
        mark_fifth(sheet, move.fifth)
    else:
        sheet.free_throws += 1
    sheet.rounds += 1


def normalize(move: Any) -> Any:
    """The canonical form of a normal move: each pair sorted, pairs sorted."""
    if isinstance(move, (Mark, FreeThrow)):
        p, q = move.pairs
        if p[0] <= p[1] and q[0] <= q[1] and p <= q:
            return move  # already canonical: the common case, as bots echo legal_moves
        return msgspec.structs.replace(move, pairs=_sorted_pairs(move.pairs))
    return move


# --- the ruleset


class ChoiceRuleset:
    """``choice``: 1..64 seats share each roll; a seat is done at a fifth-die value's 8th mark."""

    id: ClassVar[str] = "choice"
    title: ClassVar[str] = "CHOICE (Sid Sackson)"
    min_seats: ClassVar[int] = 1
    max_seats: ClassVar[int] = 64
    end_marks: ClassVar[int] = 8
    cards: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type] = ChoiceOptions
    Move: ClassVar[Any] = ChoiceMove
    State: ClassVar[Any] = ChoiceState[ChoiceMove]
    #: house bots by name, each a function of a seed (the package sets them: ``bots.py``)
    bots: ClassVar[dict[str, Callable[[int | None], Any]]] = {}
    #: its score calculator (the package sets it: ``shapes.py``)
    scorer: ClassVar[Scorer | None] = None
    #: its views, as the engine returns them and the contract states them
    views: ClassVar[ViewShapes | None] = ViewShapes(
        ChoiceSeatView, ChoiceGameView, ChoiceDecision, ChoiceRecord
    )
    #: the parts its views are built of (the specials' hold cards and a plate too)
    _shapes: ClassVar[ViewParts] = ViewParts(ChoiceSheet, ChoiceSeatSheet, ChoiceYou, ChoiceBoard)
    #: its part of the pages, a JavaScript module (the package sets it: ``page.js``)
    page_script: ClassVar[Path | None] = None
    rules_help: ClassVar[Path | None] = None
    #: its rounds in the turn report (the package sets it: ``report.py``)
    report: ClassVar[Any] = None
    #: the turn report's rounds: the postal rounds (the view's ``batch``), each with its rolls
    round_field: ClassVar[str] = "batch"
    round_dealt: ClassVar[tuple[str, ...]] = ("first_roll", "rolls")

    def warm(self) -> None:
        """Fill the round caches before a server freezes its startup objects."""
        warm_rounds()

    # -- creation ------------------------------------------------------------------------------

    def options(self, raw: Any) -> ChoiceOptions:
        options: ChoiceOptions = parse_options(self.Options, raw)
        return options

    def create(self, options: Any, seats: int, key: bytes) -> ChoiceState[Any]:
        options = self.options(options)
        check_seats(seats, self.min_seats, self.max_seats, self.id)
        sheets = [Sheet([0] * 11, [], [], cards=list(self.cards)) for _ in range(seats)]
        state: ChoiceState[Any] = ChoiceState(
            self.id,
            options,
            key,
            0,
            0,
            [],
            sheets,
            [None] * seats,
            [0] * seats,
            [[] for _ in range(seats)],
            [0] * seats,
            [0] * seats,
        )
        state.rolls = self._roll_batch(state)
        return state

    def batch_size(self, state: ChoiceState[Any]) -> int:
        schedule = state.options.schedule
        return schedule[state.batch] if state.batch < len(schedule) else schedule[-1]

    def _roll_batch(self, state: ChoiceState[Any]) -> list[tuple[int, ...]]:
        first, key = state.first_roll, state.key
        size = self.batch_size(state)
        if size == 1:  # the common schedule
            return [tuple(sorted(roll_dice(key, first)))]
        return [tuple(sorted(roll_dice(key, n))) for n in range(first, first + size)]

    # -- whose turn ----------------------------------------------------------------------------

    def _current(self, state: ChoiceState[Any], seat: int) -> Sheet:
        draft = state.drafts[seat]
        return draft if draft is not None else state.sheets[seat]

    def _complete(self, state: ChoiceState[Any], seat: int) -> bool:
        """Whether the seat has closed the round, or was done before it: public facts only.
        A draft sheet that completed inside the round does not close it (``Pass`` does)."""
        return state.sheets[seat].done or state.progress[seat] >= len(state.rolls)

    def to_decide(self, state: ChoiceState[Any]) -> list[int]:
        if state.finished:
            return []
        return [s for s in range(len(state.sheets)) if not self._complete(state, s)]

    def must_decide(self, state: ChoiceState[Any], seat: int) -> bool:
        return not state.finished and not self._complete(state, seat)

    def seq(self, state: ChoiceState[Any], seat: int) -> int:
        return state.seqs[seat]

    def public_seq(self, state: ChoiceState[Any], seat: int) -> int:
        """The postal rounds the seat has closed: a step inside a round changes nothing that
        another party sees, so neither a deadline nor an event moves with it."""
        return state.submitted[seat] if state.submitted else 0

    def finished(self, state: ChoiceState[Any]) -> bool:
        return state.finished

    def disclosed(self, state: ChoiceState[Any], seat: int) -> int:
        """How many of the seat's decisions anyone may see: those of the postal rounds already
        revealed (every decision, once the game is over)."""
        if state.finished:
            return state.seqs[seat]
        return state.revealed[seat] if state.revealed else 0

    # -- legal moves ---------------------------------------------------------------------------

    def legal_moves(self, state: ChoiceState[Any], seat: int) -> list[Any]:
        """Every legal decision on the seat's next roll, canonical order (first = default)."""
        self._check_seat(state, seat)
        sheet = self._current(state, seat)
        progress = state.progress[seat]
        if state.finished or state.sheets[seat].done or progress >= len(state.rolls):
            return []
        if sheet.done:  # completed inside the round: only closing it is left
            return [Pass()]
        dice = state.rolls[progress]
        moves: list[Any] = list(round_moves(dice, sheet.slots()))
        if sheet.cards:
            moves.extend(self._card_moves(sheet, dice))
        return moves

    def _card_moves(self, sheet: Sheet, dice: tuple[int, ...]) -> list[Any]:
        return []

    # -- deciding ------------------------------------------------------------------------------

    def _check_seat(self, state: ChoiceState[Any], seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < len(state.sheets):
            raise RuleViolation("no-such-seat", f"there is no seat {seat}", field="seat")

    def decide(
        self, state: ChoiceState[Any], seat: int, moves: Sequence[Any]
    ) -> list[dict[str, Any]]:
        """Apply a seat's decisions (one, or several of a postal round) all or nothing."""
        self._check_seat(state, seat)
        sheet = self._check_turn(state, seat)
        if len(moves) != 1 or type(moves[0]) not in _NORMAL_MOVES or sheet.done:
            return self._decide_many(state, seat, sheet, moves)
        # the common case, one normal move: validated before the sheet is copied
        progress = state.progress[seat]
        move = normalize(moves[0])
        dice = state.rolls[progress]
        self._validate(sheet, move, dice)
        reveals = progress + 1 == len(state.rolls) and self._others_complete(state, seat)
        if state.drafts[seat] is None and not reveals:
            sheet = sheet.clone()  # the committed sheet stays as it is until the reveal
        apply_round(sheet, move)
        self._check_end(sheet)
        return self._commit(state, seat, sheet, progress + 1, [move], 0, reveals or None)

    def timeout(self, state: ChoiceState[Any], seat: int) -> list[dict[str, Any]]:
        """The deadline passed: the seat's remaining rolls of the batch get the default move.

        After three timeouts in a row the seat is retired: its sheet is frozen and scored.
        """
        sheet, progress, defaults = self._defaults(state, seat)
        streak = state.timeouts[seat] + 1
        if streak >= 3 and not sheet.done:
            sheet.done = sheet.retired = True
        return self._commit(state, seat, sheet, progress, defaults, streak)

    def default_moves(self, state: ChoiceState[Any], seat: int) -> list[Any]:
        """What :meth:`timeout` would apply: the first legal move of each remaining roll."""
        return self._defaults(state, seat)[2]

    def _defaults(self, state: ChoiceState[Any], seat: int) -> tuple[Sheet, int, list[Any]]:
        self._check_seat(state, seat)
        sheet = self._check_turn(state, seat).clone()
        progress = state.progress[seat]
        defaults: list[Any] = []
        while progress < len(state.rolls):
            if sheet.done:  # completed inside the round by a step before: closed
                defaults.append(Pass())
                progress = len(state.rolls)
                break
            move = round_moves(state.rolls[progress], sheet.slots())[0]
            self._apply(sheet, move, state.rolls[progress])
            defaults.append(move)
            progress += 1
        return sheet, progress, defaults

    def _check_turn(self, state: ChoiceState[Any], seat: int) -> Sheet:
        """The seat's current sheet, if the seat has a roll to decide."""
        if state.finished:
            raise RuleViolation("game-over", "the game is over")
        if state.sheets[seat].done:
            raise RuleViolation("not-your-turn", f"seat {seat} has finished its game")
        if state.progress[seat] < len(state.rolls):
            return self._current(state, seat)
        raise RuleViolation(
            "not-your-turn",
            f"seat {seat} has decided every roll of this postal round; waiting for the other seats",
        )

    def _decide_many(
        self, state: ChoiceState[Any], seat: int, sheet: Sheet, moves: Sequence[Any]
    ) -> list[dict[str, Any]]:
        """Cards, extra rounds and postal batches: applied one by one to a copy of the sheet."""
        if not moves:
            raise RuleViolation("no-moves", "submit at least one move", field="moves")
        progress = state.progress[seat]
        sheet = sheet.clone()
        applied: list[Any] = []
        for index, raw in enumerate(moves):
            try:
                move = self.normalize(raw)
                if isinstance(move, Pass):
                    if not sheet.done:
                        raise RuleViolation(
                            "illegal-move",
                            "pass closes a postal round only once the seat's sheet is complete",
                        )
                    if progress >= len(state.rolls):
                        raise RuleViolation("batch-complete", "this postal round is closed already")
                    progress = len(state.rolls)
                elif sheet.done:
                    raise RuleViolation(
                        "player-finished",
                        "the seat finished its game with an earlier move; close this postal "
                        'round with {"type": "pass"}, if it is not closed yet',
                    )
                elif self._is_extra_round(move):
                    self._validate_extra_round(sheet, move)
                    self._apply(sheet, move, ())
                else:
                    if progress >= len(state.rolls):
                        raise RuleViolation(
                            "batch-complete",
                            f"this postal round has {len(state.rolls)} roll(s) and all are decided",
                        )
                    dice = state.rolls[progress]
                    self._validate(sheet, move, dice)
                    self._apply(sheet, move, dice)
                    progress += 1
            except RuleViolation as exc:
                if len(moves) > 1:
                    exc.field = f"moves[{index}]" + (f".{exc.field}" if exc.field else "")
                    exc.message = f"move {index}: {exc.message}"
                    exc.args = (exc.message,)
                raise
            applied.append(move)
        return self._commit(state, seat, sheet, progress, applied, 0)

    def _others_complete(self, state: ChoiceState[Any], seat: int) -> bool:
        """Whether every seat but ``seat`` has decided the batch or finished its game."""
        for other in range(len(state.sheets)):
            if other != seat and not self._complete(state, other):
                return False
        return True

    def _commit(
        self,
        state: ChoiceState[Any],
        seat: int,
        sheet: Sheet,
        progress: int,
        moves: list[Any],
        streak: int,
        reveals: bool | None = None,
    ) -> list[dict[str, Any]]:
        """Keep the seat's decisions hidden; ``reveals``: whether they complete the batch."""
        if progress >= len(state.rolls) > state.progress[seat]:  # the seat closes its round
            if not state.submitted:
                state.submitted = [0] * len(state.sheets)
            state.submitted[seat] += 1
        state.drafts[seat] = sheet
        state.progress[seat] = progress
        state.pending[seat] += moves
        state.seqs[seat] += 1
        state.timeouts[seat] = streak
        if reveals is None:
            reveals = self._complete(state, seat) and self._others_complete(state, seat)
        return self._resolve(state) if reveals else []

    def _resolve(self, state: ChoiceState[Any]) -> list[dict[str, Any]]:
        """Every active seat decided the batch: reveal all decisions, roll the next batch.

        The game's end is not an event here: the service announces it with the ranking.
        """
        sheets, pending = state.sheets, state.pending
        decisions: dict[str, list[Any]] = {}  # moves stay Structs: events are encoded as sent
        events: list[dict[str, Any]] = [
            {  # the rolls themselves were announced by the batch's "rolls" event
                "type": "rolls_decided",
                "batch": state.batch,
                "first_roll": state.first_roll,
                "decisions": decisions,
            }
        ]
        playing = False
        for seat, draft in enumerate(state.drafts):
            if draft is not None:
                decisions[str(seat)] = pending[seat]
                pending[seat] = []  # the list now belongs to the event
                if draft.done:
                    events.append({"type": "seat_done", "seat": seat, "retired": draft.retired})
                sheets[seat] = draft
            playing = playing or not sheets[seat].done
        seats = len(sheets)
        state.revealed = list(state.seqs)
        state.first_roll += len(state.rolls)
        state.batch += 1
        state.drafts = [None] * seats
        state.progress = [0] * seats
        if not playing:
            state.finished = True
            state.rolls = []
            return events
        state.rolls = self._roll_batch(state)
        events.append(
            {
                "type": "rolls",
                "batch": state.batch,
                "first_roll": state.first_roll,
                "rolls": state.rolls,
            }
        )
        return events

    # -- hooks the specials ruleset extends ------------------------------------------------

    def normalize(self, move: Any) -> Any:
        """The canonical form of a move, as :meth:`legal_moves` lists it."""
        return normalize(move)

    def _is_extra_round(self, move: Any) -> bool:
        return False

    def _validate_extra_round(self, sheet: Sheet, move: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def _validate(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> None:
        if isinstance(move, (Mark, FreeThrow)):
            if move in _round_move_set(dice, sheet.slots()):
                return
            diagnose_round(sheet, dice, move)
            raise RuleViolation("illegal-move", "the move is not legal on this roll")
        self._validate_card(sheet, move, dice)

    def _validate_card(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> NoReturn:
        raise RuleViolation(
            "unknown-move", f"{type(move).__name__} is not a move of {self.id}", field="type"
        )

    def _apply(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> None:
        apply_round(sheet, move)
        self._check_end(sheet)

    def _check_end(self, sheet: Sheet) -> None:
        if sheet.fifth_counts and max(sheet.fifth_counts) >= self.end_marks:
            sheet.done = True

    # -- what players see ----------------------------------------------------------------------

    def scores(self, state: ChoiceState[Any]) -> list[ChoiceScore]:
        """Scores of the committed (public) sheets."""
        return [score_marks(sheet.marks) for sheet in state.sheets]

    def totals(self, state: ChoiceState[Any]) -> list[int]:
        return [score.total for score in self.scores(state)]

    def ranking(self, state: ChoiceState[Any]) -> list[int]:
        return places(self.totals(state))

    def _sheet_shown(self, sheet: Sheet) -> tuple[Any, ...]:
        return _sheet_shown(_pack_sheet(sheet), bool(self.cards))

    def view(self, state: ChoiceState[Any], seat: int | None = None) -> ChoiceBoard:
        """The board every seat sees (``views.seat_view``'s fields but ``you``), or with
        ``seat``, that seat's view: the board and its own hidden decisions and draft sheet."""
        seat_sheet = self._shapes.seat_sheet
        board: dict[str, Any] = {
            "options": state.options,
            "finished": state.finished,
            "batch": state.batch,
            "first_roll": state.first_roll,
            "rolls": [list(r) for r in state.rolls],
            "end_marks": self.end_marks,
            "seats": [
                seat_sheet(
                    *self._sheet_shown(sheet),
                    s,
                    state.finished or sheet.done or self._complete(state, s),
                )
                for s, sheet in enumerate(state.sheets)
            ],
        }
        if state.finished:
            board["ranking"] = self.ranking(state)
        if seat is None:
            public: ChoiceBoard = self._shapes.board(**board)
            return public
        shown: ChoiceBoard = self.views.seat_view(**board, you=self.seat_view(state, seat))  # type: ignore[union-attr]
        return shown

    def seat_view(self, state: ChoiceState[Any], seat: int) -> ChoiceYou:
        """What only ``seat`` sees: its hidden decisions and draft sheet (``view``'s "you")."""
        self._check_seat(state, seat)
        shapes = self._shapes
        you: ChoiceYou = shapes.you(
            seat,
            state.progress[seat],
            list(state.pending[seat]),
            shapes.sheet(*self._sheet_shown(self._current(state, seat))),
        )
        return you

    def dice_log(self, state: ChoiceState[Any]) -> list[ChoiceRoll]:
        """Every roll drawn so far, by game-wide index (public rolls, so no secret here)."""
        last = state.first_roll + len(state.rolls)
        return [ChoiceRoll(n, list(roll_dice(state.key, n))) for n in range(last)]
