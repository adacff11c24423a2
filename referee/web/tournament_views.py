"""The shapes of what the referee shows of tournaments, as the contract states them: a
tournament's view (``getTournament``), a union told apart by ``ruleset``, and the listing
(``listTournaments``). The service builds them as plain values
(``referee.core.tournament``); the suite checks them against the committed contract."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from ..games import RULESETS
from .views import RANKING, Commitment, EpochSeconds, NextPage, Placing, RulesetId, Seed, shape_name

__all__ = [
    "TOURNAMENT_VIEWS",
    "TournamentPage",
    "TournamentStatus",
    "TournamentSummary",
]

TournamentStatus = Annotated[
    Literal["registering", "running", "finished"],
    msgspec.Meta(
        description="registering: open to entrants until full; running: its rounds are "
        "played; finished: over, standings final and the seed shown"
    ),
]


class TableResult(msgspec.Struct):
    """A finished table: entrants in seat order, their totals and places."""

    round: Annotated[int, msgspec.Meta(ge=0)]
    entrants: list[int]
    totals: Annotated[list[int], msgspec.Meta(description="each seat's total, in seat order")]
    places: Annotated[list[Placing], msgspec.Meta(description=RANKING)]


class Table(msgspec.Struct):
    """A game of a round: its entrants in seat order, its dice group, and its result once
    every game of its group is over."""

    game_id: str
    entrants: Annotated[list[int], msgspec.Meta(description="entrant numbers, in seat order")]
    group: Annotated[int, msgspec.Meta(description="tables of a group are dealt the same dice")]
    result: TableResult | None


class Standing(msgspec.Struct):
    """An entrant's figures so far. Standings are sorted by ``rating`` (mu - 3 sigma of its
    Plackett-Luce rating: a rating it has earned with high confidence), highest first, then
    by points, then by entrant number."""

    entrant: int
    name: str
    games: Annotated[int, msgspec.Meta(description="finished games whose result is shown")]
    wins: Annotated[
        int, msgspec.Meta(description="games at first place, a shared first place included")
    ]
    points: Annotated[
        int,
        msgspec.Meta(
            description="the sum of the entrant's game totals: the second sort key, after "
            "rating (swiss pairs by wins, two points each, not by these)"
        ),
    ]
    mu: Annotated[
        float,
        msgspec.Meta(
            description="Plackett-Luce skill estimate (openskill, from 25), rated on each "
            "game's places: seats sharing a place count as a tie"
        ),
    ]
    sigma: Annotated[float, msgspec.Meta(description="the estimate's uncertainty (from 25/3)")]
    rating: Annotated[
        float,
        msgspec.Meta(
            description="mu - 3 sigma: the first sort key, highest first (then points, then "
            "entrant number)"
        ),
    ]


class _Plan(msgspec.Struct, kw_only=True):
    format: Literal["round-robin", "swiss", "gauntlet"]
    entrants: int
    table_size: int
    games_per_pairing: int
    rounds: int | None
    deadline_s: Annotated[float, msgspec.Meta(description="seconds per decision; 0: none")]


class _Tournament(msgspec.Struct, kw_only=True):
    id: str
    status: TournamentStatus
    commitment: Commitment
    seed: Annotated[Seed | None, msgspec.Meta(description="null until the tournament is over")]
    entrants: Annotated[list[str], msgspec.Meta(description="names, by entrant number")]
    round: Annotated[int, msgspec.Meta(ge=-1, description="the round being played; -1: none")]
    rounds: list[list[Table]]
    standings: list[Standing]
    ratings: Annotated[
        list[list[float]],
        msgspec.Meta(
            description="each entrant's rating (by entrant number) after each round that is "
            "over, oldest first: the standings' rating as it moved"
        ),
    ]


def _tournament_view(ruleset: Any) -> Any:
    """A ruleset's tournament view: its plan holds the ruleset's options."""
    name = shape_name(ruleset.id)
    plan: Any = msgspec.defstruct(
        f"{name}TournamentPlan",
        [("options", ruleset.Options)],
        bases=(_Plan,),
        module=__name__,
        tag=ruleset.id,
        tag_field="ruleset",
        kw_only=True,
    )
    plan.__doc__ = f"A {ruleset.title} tournament's plan (its seed stays secret until it is over)."
    view: Any = msgspec.defstruct(
        f"{name}TournamentView",
        [("spec", plan)],
        bases=(_Tournament,),
        module=__name__,
        tag=ruleset.id,
        tag_field="ruleset",
        kw_only=True,
    )
    view.__doc__ = f"A {ruleset.title} tournament: its rounds, tables and standings."
    return view


#: each ruleset's tournament view, joined from the registry
TOURNAMENT_VIEWS: tuple[Any, ...] = tuple(_tournament_view(r) for r in RULESETS.values())


class TournamentSummary(msgspec.Struct):
    """A tournament as the listing shows it (``getTournament`` has the rest)."""

    id: str
    ruleset: RulesetId
    status: TournamentStatus
    format: Literal["round-robin", "swiss", "gauntlet"]
    entrants: Annotated[int, msgspec.Meta(ge=0, description="entrants registered so far")]
    seats: Annotated[int, msgspec.Meta(ge=2, description="entrants it starts with")]
    invite_only: Annotated[bool, msgspec.Meta(description="registering needs its invite code")]
    created: EpochSeconds


class TournamentPage(msgspec.Struct):
    """A page of tournaments, newest first; ask for the next with ``?before=next``."""

    tournaments: list[TournamentSummary]
    next: NextPage
