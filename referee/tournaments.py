"""Tournament scheduling and standings: pure functions, no I/O.

A tournament is a list of rounds; a round is a list of tables; a table seats entrants (by
index) in seat order. Every table of a round plays with the same dice seed (duplicate format),
so luck cancels across tables. The service creates a round's games when the round before it
is over; ``next_round`` says what that round is.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Annotated, Literal

import msgspec
from openskill.models import PlackettLuce

__all__ = [
    "FORMATS",
    "GameResult",
    "Standing",
    "TournamentSpec",
    "next_round",
    "spec_problem",
    "standings",
    "total_rounds",
]

FORMATS = ("round-robin", "swiss", "gauntlet")


class TournamentSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How a tournament is played (entrants register separately)."""

    ruleset: str
    format: Literal["round-robin", "swiss", "gauntlet"] = "round-robin"
    entrants: Annotated[int, msgspec.Meta(ge=2, le=64, description="it starts when full")] = 4
    table_size: Annotated[int, msgspec.Meta(ge=2, le=8)] = 2
    games_per_pairing: Annotated[int, msgspec.Meta(ge=1, le=20)] = 1
    rounds: Annotated[int, msgspec.Meta(ge=1, le=64)] | None = None  # swiss only
    options: dict = {}
    deadline_s: Annotated[float, msgspec.Meta(ge=0, le=3600)] = 10.0
    seed: (
        Annotated[
            str,
            msgspec.Meta(
                pattern="^([0-9a-f]{2}){1,64}$",
                description="hex; fixes every round's dice (replays)",
            ),
        ]
        | None
    ) = None


class GameResult(msgspec.Struct, frozen=True):
    """A finished table: entrants in seat order, their totals and places."""

    round: int
    entrants: list[int]
    totals: list[int]
    places: list[int]


class Standing(msgspec.Struct, frozen=True):
    entrant: int
    games: int
    wins: int
    points: int
    mu: float
    sigma: float
    rating: float  # mu - 3 sigma: a rating the entrant has earned with high confidence


def spec_problem(spec: TournamentSpec) -> tuple[str, str] | None:
    """(field, sentence) for a spec whose fields fit the schema but not each other."""
    if spec.table_size > spec.entrants:
        return "table_size", f"a table of {spec.table_size} needs as many entrants at least"
    if spec.format == "swiss" and spec.table_size != 2:
        return "table_size", "swiss pairs entrants: table_size must be 2"
    return None


def total_rounds(spec: TournamentSpec) -> int:
    if spec.format == "swiss":
        return spec.rounds or max(1, spec.entrants - 1)
    return spec.games_per_pairing


def _rotate(table: Sequence[int], by: int) -> list[int]:
    """Seat order shifted by ``by``: over the rounds every entrant sits in every seat."""
    by %= len(table)
    return list(table[by:]) + list(table[:by])


def next_round(spec: TournamentSpec, played: Sequence[GameResult], round_: int) -> list[list[int]]:
    """The tables of round ``round_`` (0-based), given every game played before it."""
    if round_ >= total_rounds(spec):
        return []
    n = spec.entrants
    if spec.format == "round-robin":
        return [_rotate(t, round_) for t in combinations(range(n), spec.table_size)]
    if spec.format == "gauntlet":  # entrant 0 faces every other entrant
        return [
            _rotate([0, *rest], round_) for rest in combinations(range(1, n), spec.table_size - 1)
        ]
    return _swiss_round(spec, played, round_)


def _swiss_round(
    spec: TournamentSpec, played: Sequence[GameResult], round_: int
) -> list[list[int]]:
    """Pairs by points (then entrant order), avoiding rematches where it can; one bye if odd."""
    points = [0] * spec.entrants
    met: set[tuple[int, int]] = set()
    for game in played:
        for seat, entrant in enumerate(game.entrants):
            points[entrant] += 2 if game.places[seat] == 1 else 0
        for a, b in combinations(sorted(game.entrants), 2):
            met.add((a, b))
    order = sorted(range(spec.entrants), key=lambda e: (-points[e], e))
    tables: list[list[int]] = []
    waiting = list(order)
    while len(waiting) >= 2:
        first = waiting.pop(0)
        partner = next(
            (e for e in waiting if (min(first, e), max(first, e)) not in met), waiting[0]
        )
        waiting.remove(partner)
        tables.append(_rotate([first, partner], round_))
    return tables


def standings(entrants: int, results: Sequence[GameResult]) -> list[Standing]:
    """Games, wins (first place, shared or not), points (game totals) and Plackett-Luce ratings,
    best rating first; games are rated in the order they are given."""
    model = PlackettLuce()
    ratings = [model.rating() for _ in range(entrants)]
    games, wins, points = [0] * entrants, [0] * entrants, [0] * entrants
    for game in results:
        teams = [[ratings[e]] for e in game.entrants]
        rated = model.rate(teams, ranks=list(game.places))
        for seat, entrant in enumerate(game.entrants):
            ratings[entrant] = rated[seat][0]
            games[entrant] += 1
            points[entrant] += game.totals[seat]
            wins[entrant] += game.places[seat] == 1
    table = [
        Standing(
            e,
            games[e],
            wins[e],
            points[e],
            round(ratings[e].mu, 3),
            round(ratings[e].sigma, 3),
            round(ratings[e].ordinal(), 3),
        )
        for e in range(entrants)
    ]
    return sorted(table, key=lambda s: (-s.rating, -s.points, s.entrant))
