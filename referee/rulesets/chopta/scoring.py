"""What a CHOPTA play area scores: its best arrangement into sets and chains (RULES.md CHOPTA
§3), with the options' bonus and face values."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import msgspec

from ...games._common import Die
from .state import _counts

__all__ = ["Arrangement", "Group", "score_area"]


class Group(msgspec.Struct, frozen=True):
    """A set or a chain of a play area, its dice, and the points it scores."""

    kind: str  # "set" or "chain"
    dice: list[int]
    points: int


class Arrangement(msgspec.Struct, frozen=True):
    """A play area's best arrangement: its groups, the dice left out, the points."""

    points: int
    groups: list[Group]
    unused: list[Die]


@lru_cache(maxsize=1024)
def _gains(count: int, worth: int, bonus: int) -> tuple[int, ...]:
    """Points of a value's ``count`` dice when y of them are in chains and the rest in one set.

    Constant while >= 3 dice stay for the set, then y * (worth + bonus) once the set is gone.
    """
    if count >= 3:
        flat = count * worth + bonus * (count - 3)
        return (flat,) * (count - 2) + tuple(
            y * (worth + bonus) for y in range(count - 2, count + 1)
        )
    return tuple(y * (worth + bonus) for y in range(count + 1))


@lru_cache(maxsize=65536)
def _best(counts: tuple[int, ...], bonus: bool, face: bool) -> tuple[int, int, int, int, int, int]:
    """Best (points, N, y1, y2, y5, y6) for a count vector (index = face value).

    Every chain (>= 4 consecutive values inside 1..6) contains both 3 and 4, so with N chains
    y3 = y4 = N, and the chains cover 1, 2, 5, 6 y1 <= y2 <= N and y6 <= y5 <= N times. Such a
    cover splits into chains exactly when N - y2 <= y6 and N - y5 <= y1 (Hall's condition on
    chain starts and ends). The bonus of chains, sum(y) - 4N, does not depend on the split.
    Dice of a value not in chains score best as one set, so per value the score g(y) is
    constant while at least 3 dice stay for the set, and rises with y after that: only the
    top of each range, and the top of its constant part, can be best.
    """
    b = 1 if bonus else 0
    _, c1, c2, c3, c4, c5, c6 = counts
    if face:
        g1, g2, g3 = _gains(c1, 1, b), _gains(c2, 2, b), _gains(c3, 3, b)
        g4, g5, g6 = _gains(c4, 4, b), _gains(c5, 5, b), _gains(c6, 6, b)
    else:
        g1, g2, g3 = _gains(c1, 1, b), _gains(c2, 1, b), _gains(c3, 1, b)
        g4, g5, g6 = _gains(c4, 1, b), _gains(c5, 1, b), _gains(c6, 1, b)
    result = (g1[0] + g2[0] + g3[0] + g4[0] + g5[0] + g6[0], 0, 0, 0, 0, 0)
    for n in range(1, min(c3, c4) + 1):
        middle = g3[n] + g4[n] - 4 * n * b
        hi2, hi5 = min(c2, n), min(c5, n)
        # the top of each range, and the top of its flat part, are the only candidates
        for y2 in (c2 - 3, hi2) if 0 <= c2 - 3 < hi2 else (hi2,):
            for y5 in (c5 - 3, hi5) if 0 <= c5 - 3 < hi5 else (hi5,):
                lo1, hi1 = max(0, n - y5), min(y2, c1)
                lo6, hi6 = max(0, n - y2), min(y5, c6)
                if lo1 > hi1 or lo6 > hi6:
                    continue
                y1 = hi1
                if lo1 <= c1 - 3 < hi1 and g1[c1 - 3] > g1[hi1]:
                    y1 = c1 - 3
                y6 = hi6
                if lo6 <= c6 - 3 < hi6 and g6[c6 - 3] > g6[hi6]:
                    y6 = c6 - 3
                points = middle + g2[y2] + g5[y5] + g1[y1] + g6[y6]
                if points > result[0]:
                    result = (points, n, y1, y2, y5, y6)
    return result


def score_area(
    dice: Iterable[int], *, bonus: bool = False, face_value: bool = False
) -> Arrangement:
    """Score a play area with the arrangement that maximises points (RULES.md CHOPTA §3, §5)."""
    counts = _counts(dice)
    points, n, y1, y2, y5, y6 = _best(counts, bonus, face_value)
    b = 1 if bonus else 0
    # Split the chain cover: starts at 1, 2, 3 and ends at 4, 5, 6.
    starts = {1: y1, 2: y2 - y1, 3: n - y2}
    ends = {4: n - y5, 5: y5 - y6, 6: y6}
    chains: list[tuple[int, int]] = []
    for start, choices in ((3, (6,)), (2, (5, 6)), (1, (4, 5, 6))):
        for end in choices:
            k = min(starts[start], ends[end])
            chains += [(start, end)] * k
            starts[start] -= k
            ends[end] -= k
    left = list(counts)
    groups: list[Group] = []
    for start, end in sorted(chains):
        values = list(range(start, end + 1))
        for v in values:
            left[v] -= 1
        worth = sum(values) if face_value else len(values)
        groups.append(Group("chain", values, worth + b * (len(values) - 4)))
    unused: list[int] = []
    for v in range(1, 7):
        n_left = left[v]
        if n_left >= 3:
            worth = n_left * (v if face_value else 1) + b * (n_left - 3)
            groups.append(Group("set", [v] * n_left, worth))
        elif n_left:
            unused += [v] * n_left
    return Arrangement(points, groups, unused)
