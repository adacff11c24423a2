"""The league's settings, how long a process takes what it read as read, and the state
the parts of ``LeagueService`` share."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from ...core.game import LoadedGame
from ...core.league import LeagueGame
from ...core.refusals import Refusal
from ...store.league import LeagueStore
from ..games import GameService
from ..tournaments import TournamentService
from ..webhooks import WebhookSeats

__all__ = [
    "BOTS_KEPT",
    "LEAGUE_GAMES_KEPT",
    "RECHECK_S",
    "SEEN_BATCH_S",
    "LeagueBase",
    "LeagueSettings",
]


#: how long a bot's token and account are taken as read for its games' requests (and how
#: often it is marked seen): a token rotated or revoked through another replica stops
#: working within this long (through this one: at once)
RECHECK_S = 1.0
#: how often a process writes the marks of the bots seen since (see ``_seen``)
SEEN_BATCH_S = 0.25
#: bots remembered in the process at most (see ``known_bot``)
BOTS_KEPT = 10_000
#: league games' records remembered in the process at most (see ``_league_game``)
LEAGUE_GAMES_KEPT = 10_000


class LeagueSettings(msgspec.Struct, frozen=True):
    """The league's quotas and the matchmaker's pace."""

    games_per_day: int = 2000
    concurrent_games: int = 4
    timeouts_to_pause: int = 3
    #: the least deadline_s of a league game: a thousandth of a second, which no request
    #: meets, paused a bot after three games whoever it was (and rated them)
    min_deadline_s: float = 1.0
    #: a bot whose webhook fails this many turn calls in a row is paused (0: never)
    webhook_failures_to_pause: int = 5
    #: a bot that has not asked for this long leaves the arena's pool
    stale_s: float = 60.0
    interval_s: float = 0.1
    #: the least time from one round to the next when bots came free through this replica
    #: (a game of theirs settled, a bot joined): the round comes then instead of at the
    #: interval, so that the time a bot waits between two games is mostly the round's own
    soonest_s: float = 0.03


def _not_found(name: str) -> Refusal:
    return Refusal("bot-not-found", f"there is no bot {name!r}")


class LeagueBase:
    """What every part of the league works with (``LeagueService`` sets it). Each part builds
    on the one before it: accounts, ratings, the arena, challenges, next decisions."""

    games: GameService
    store: LeagueStore
    settings: LeagueSettings
    tournaments: TournamentService | None
    webhooks: WebhookSeats | None

    if TYPE_CHECKING:
        # the next decisions' own (``NextDecisions``), which the parts before it call
        def _changed(self, keys: list[str]) -> None: ...

        def _made(self, keys: list[str], game_id: str, league_game: LeagueGame) -> None: ...

        async def _league_game(self, game_id: str) -> LeagueGame | None: ...

        async def _game_now(self, game_id: str) -> LoadedGame: ...
