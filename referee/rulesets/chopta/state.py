"""A CHOPTA game's data: its options, the two moves, and the whole state (RULES.md "CHOPTA")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated

import msgspec

from ...games._common import Die

__all__ = [
    "POOL_SIZE",
    "ChoptaMove",
    "ChoptaOptions",
    "ChoptaState",
    "Place",
    "Swap",
    "swap_takes",
]

POOL_SIZE = 10


class ChoptaOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """CHOPTA options; all rule options are off by default."""

    target: Annotated[
        int, msgspec.Meta(ge=1, le=10_000, description="points that end the game")
    ] = 50
    bonus: Annotated[bool, msgspec.Meta(description="+1 per die beyond a group's minimum")] = False
    face_value: Annotated[
        bool, msgspec.Meta(description="each grouped die scores its face value instead of 1")
    ] = False
    dice_per_turn: Annotated[int, msgspec.Meta(ge=1, le=2, description="dice played per turn")] = 1
    max_rounds: Annotated[
        int, msgspec.Meta(ge=1, le=1_000, description="the game also ends after this many rounds")
    ] = 100


class Place(msgspec.Struct, frozen=True, tag="place", forbid_unknown_fields=True):
    """Put a die from the pool into your own play area."""

    die: Die


class Swap(msgspec.Struct, frozen=True, tag="swap", forbid_unknown_fields=True):
    """Put a die into an opponent's area and take a lower die (a 1 takes a 6) into yours."""

    die: Die
    opponent: Annotated[int, msgspec.Meta(ge=0, le=7)]
    take: Die


ChoptaMove = Place | Swap


def swap_takes(die: int) -> tuple[int, ...]:
    """The values a die of value ``die`` may take in a swap (RULES.md CHOPTA §2)."""
    return (6,) if die == 1 else tuple(range(1, die))


class ChoptaState(msgspec.Struct, array_like=True):
    """A whole CHOPTA game. ``key`` and ``pools`` are secret; views show pool sizes only."""

    ruleset: str
    options: ChoptaOptions
    key: bytes
    round: int
    turn: int  # the seat to play
    played: int  # dice played by ``turn`` in this turn
    pools: list[list[int]]  # per seat, counts indexed by face value (index 0 unused)
    areas: list[list[int]]  # per seat, counts indexed by face value
    totals: list[int]
    history: list[list[int]]  # round scores per finished round
    retired: list[bool]
    seqs: list[int]
    timeouts: list[int]
    finished: bool = False


def _counts(dice: Iterable[int]) -> tuple[int, ...]:
    counts = [0] * 7
    for d in dice:
        counts[d] += 1
    return tuple(counts)


def _dice_of(counts: Sequence[int]) -> list[int]:
    return [v for v in range(1, 7) for _ in range(counts[v])]
