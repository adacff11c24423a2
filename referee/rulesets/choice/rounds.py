"""One round of CHOICE on one sheet: the roll's dice, every legal move (enumerated once per
roll and sheet shape), the rule a move breaks, and the move written on the sheet (RULES.md
CHOICE §2-§4)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from itertools import combinations, combinations_with_replacement
from typing import Any

import msgspec

from ...games import dice as _dice
from ...games.errors import RuleViolation
from .sheet import ROLLS_PER_POSITION, FreeThrow, Mark, Pair, Sheet

__all__ = [
    "apply_round",
    "check_fifth",
    "check_free_throw",
    "check_uses_dice",
    "diagnose_round",
    "mark_fifth",
    "mark_sum",
    "normalize",
    "roll_dice",
    "round_moves",
    "warm_rounds",
]


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
