"""Tournament scheduling and standings: pure functions, no I/O.

A tournament is a list of rounds; a round is a list of tables; a table seats entrants (by
index) in seat order. Tables of one *dice group* are dealt the same dice (duplicate format), so
luck cancels across them; they never share an entrant, so no entrant holds at one table dice
that are hidden from it at another (docs/RULES.md, "Tournaments"). Round-robin and swiss rounds
seat each entrant at one table at most, and a round is one dice group; a gauntlet seats entrant
0 at every table, so each of its tables is a group of its own. The service creates a round's
games when the round before it is over; ``next_round`` says what that round is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations
from typing import Annotated, Any, Literal

import msgspec
from openskill.models import PlackettLuce

__all__ = [
    "FORMATS",
    "MAX_GAMES",
    "MAX_TABLES_PER_ROUND",
    "GameResult",
    "Standing",
    "TournamentPlan",
    "TournamentSpec",
    "dice_groups",
    "next_round",
    "ranked",
    "rate",
    "spec_problem",
    "standings",
    "total_games",
    "total_rounds",
]

FORMATS = ("round-robin", "swiss", "gauntlet")
#: the most games one tournament's schedule may hold (a spec past it is refused)
MAX_GAMES = 4096
#: the most tables (games) one round creates at once
MAX_TABLES_PER_ROUND = 32


class TournamentPlan(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """How a tournament's games are scheduled, whatever the ruleset."""

    format: Literal["round-robin", "swiss", "gauntlet"] = "round-robin"
    entrants: Annotated[int, msgspec.Meta(ge=2, le=64, description="it starts when full")] = 4
    table_size: Annotated[int, msgspec.Meta(ge=2, le=8)] = 2
    games_per_pairing: Annotated[int, msgspec.Meta(ge=1, le=20)] = 1
    rounds: Annotated[int, msgspec.Meta(ge=1, le=64)] | None = None  # swiss only
    deadline_s: Annotated[float, msgspec.Meta(ge=0, le=3600)] = 10.0
    seed: (
        Annotated[
            str,
            msgspec.Meta(
                pattern="^([0-9a-f]{2}){32,64}$",
                description=(
                    "hex, 32 to 64 bytes; fixes every round's dice (replays). Its SHA-256 is "
                    "the public commitment, so a shorter seed could be found from it by search "
                    "and every die foretold: full strength only"
                ),
            ),
        ]
        | None
    ) = None


class TournamentSpec(TournamentPlan, frozen=True):
    """How a tournament is played (entrants register separately): its plan, its ruleset and
    the ruleset's options."""

    ruleset: str
    options: dict[str, Any] = {}


class GameResult(msgspec.Struct, frozen=True):
    """A finished table: entrants in seat order, their totals and places."""

    round: int
    entrants: list[int]
    totals: list[int]
    places: list[int]


class Standing(msgspec.Struct, frozen=True):
    """An entrant's figures so far: games, wins, points, and its Plackett-Luce rating."""

    entrant: int
    games: int
    wins: int
    points: int
    mu: float
    sigma: float
    rating: float  # mu - 3 sigma: a rating the entrant has earned with high confidence


def total_games(spec: TournamentSpec) -> int:
    """How many games the schedule holds, counted without listing them."""
    n, k = spec.entrants, spec.table_size
    if spec.format == "swiss":
        return _swiss_rounds(spec) * (n // 2)
    if spec.format == "gauntlet":
        return math.comb(n - 1, k - 1) * spec.games_per_pairing
    return math.comb(n, k) * spec.games_per_pairing


def spec_problem(spec: TournamentSpec) -> tuple[str, str] | None:
    """(field, sentence) for a spec whose fields fit the schema but not each other."""
    if spec.table_size > spec.entrants:
        return "table_size", f"a table of {spec.table_size} needs as many entrants at least"
    if spec.format == "swiss" and spec.table_size != 2:
        return "table_size", "swiss pairs entrants: table_size must be 2"
    games = total_games(spec)
    if games > MAX_GAMES:
        return (
            "entrants",
            f"this schedule holds {games:,} games; a tournament may hold at most {MAX_GAMES:,} "
            "(fewer entrants, another table_size, or fewer games_per_pairing or rounds)",
        )
    return None


def _swiss_rounds(spec: TournamentSpec) -> int:
    return spec.rounds or max(1, spec.entrants - 1)


@lru_cache(maxsize=64)
def _round_robin_cycle(n: int, k: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Every table of ``k`` of ``n`` entrants once, in rounds of tables that share no entrant.

    Pairs: the circle method (n - 1 rounds, n when n is odd, one entrant sitting out). Larger
    tables: in order, each round taking every table that shares no entrant with those it took
    (called only for schedules within ``MAX_GAMES``).
    """
    if k == 2:
        ring: list[int | None] = list(range(n)) + ([None] if n % 2 else [])
        rounds: list[tuple[tuple[int, ...], ...]] = []
        for _ in range(len(ring) - 1):
            half = len(ring) // 2
            pairs = [(ring[i], ring[-1 - i]) for i in range(half)]
            rounds.append(
                tuple(
                    sorted(
                        (min(a, b), max(a, b)) for a, b in pairs if a is not None and b is not None
                    )
                )
            )
            ring = [ring[0], ring[-1], *ring[1:-1]]
        return tuple(rounds)
    remaining = list(combinations(range(n), k))
    rounds = []
    while remaining:
        seated: set[int] = set()
        taken: list[tuple[int, ...]] = []
        rest: list[tuple[int, ...]] = []
        for table in remaining:
            if len(taken) < MAX_TABLES_PER_ROUND and seated.isdisjoint(table):
                taken.append(table)
                seated.update(table)
            else:
                rest.append(table)
        rounds.append(tuple(taken))
        remaining = rest
    return tuple(rounds)


def _gauntlet_cycle(n: int, k: int) -> list[list[tuple[int, ...]]]:
    """Entrant 0 against every table of the others, ``MAX_TABLES_PER_ROUND`` tables a round."""
    tables = [(0, *rest) for rest in combinations(range(1, n), k - 1)]
    return [
        tables[i : i + MAX_TABLES_PER_ROUND] for i in range(0, len(tables), MAX_TABLES_PER_ROUND)
    ]


def _cycle(spec: TournamentSpec) -> Sequence[Sequence[tuple[int, ...]]]:
    if spec.format == "gauntlet":
        return _gauntlet_cycle(spec.entrants, spec.table_size)
    return _round_robin_cycle(spec.entrants, spec.table_size)


def total_rounds(spec: TournamentSpec) -> int:
    if spec.format == "swiss":
        return _swiss_rounds(spec)
    return len(_cycle(spec)) * spec.games_per_pairing


def _rotate(table: Sequence[int], by: int) -> list[int]:
    """Seat order shifted by ``by``: over the cycles every entrant sits in every seat."""
    by %= len(table)
    return list(table[by:]) + list(table[:by])


def next_round(spec: TournamentSpec, played: Sequence[GameResult], round_: int) -> list[list[int]]:
    """The tables of round ``round_`` (0-based), given every game played before it.

    Round-robin and gauntlet play their cycle of rounds ``games_per_pairing`` times, seats
    shifted by one more each cycle."""
    if round_ >= total_rounds(spec):
        return []
    if spec.format == "swiss":
        return _swiss_round(spec, played, round_)
    cycle = _cycle(spec)
    number, index = divmod(round_, len(cycle))
    return [_rotate(table, number) for table in cycle[index]]


def dice_groups(spec: TournamentSpec, tables: Sequence[Sequence[int]]) -> list[int]:
    """The dice group of each table of a round: tables of one group are dealt the same dice.

    A round-robin or swiss round seats each entrant once, so the round is one group; every
    gauntlet table seats entrant 0, so each is a group of its own (entrant 0 would otherwise
    hold at one table the dice of another)."""
    if spec.format == "gauntlet":
        return list(range(len(tables)))
    return [0] * len(tables)


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


def rate(
    entrants: int, results: Sequence[GameResult], previous: Sequence[Standing] = ()
) -> list[Standing]:
    """``previous`` (by entrant; none: a fresh start) with ``results`` rated in their order:
    games, wins (first place, shared or not), points (game totals) and Plackett-Luce ratings,
    unrounded, so a tournament keeps them as its rounds finish instead of rating every game
    again at each look."""
    model = PlackettLuce()
    if previous:
        ratings = [model.rating(mu=s.mu, sigma=s.sigma) for s in previous]
        games = [s.games for s in previous]
        wins = [s.wins for s in previous]
        points = [s.points for s in previous]
    else:
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
    return [
        Standing(e, games[e], wins[e], points[e], r.mu, r.sigma, r.ordinal())
        for e, r in enumerate(ratings)
    ]


def ranked(rated: Sequence[Standing]) -> list[Standing]:
    """Standings as shown: figures to three places, best rating first (then points)."""
    table = [
        Standing(
            s.entrant,
            s.games,
            s.wins,
            s.points,
            round(s.mu, 3),
            round(s.sigma, 3),
            round(s.rating, 3),
        )
        for s in rated
    ]
    return sorted(table, key=lambda s: (-s.rating, -s.points, s.entrant))


def standings(entrants: int, results: Sequence[GameResult]) -> list[Standing]:
    """Standings after ``results``, rated in the order they are given (``rate``, ``ranked``)."""
    return ranked(rate(entrants, results))
