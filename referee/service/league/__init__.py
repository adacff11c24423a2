"""The league, as use cases over the store: bot accounts and their tokens, lifetime ratings
settled exactly once per finished game, the arena's matchmaker, challenges, and a bot's next
decision across all of its games.

Every replica runs the same background loop (``run_forever``): the one that holds the
matchmaker's lock in Redis pairs the pool and settles finished games; any request that finds
a finished league game settles it too. Settling is exactly once whoever races: the store's
script refuses a game settled before, and a rating update read from ratings that have moved
since (then it is read and computed again).
"""

from __future__ import annotations

import asyncio
import math
import secrets

from ...store.league import LeagueStore
from ..games import GameService
from ..tournaments import TournamentService
from ..webhooks import WebhookSeats
from .base import BOTS_KEPT as BOTS_KEPT
from .base import LEAGUE_GAMES_KEPT as LEAGUE_GAMES_KEPT
from .base import RECHECK_S as RECHECK_S
from .base import LeagueSettings
from .rekeys import Rekeys

__all__ = ["LeagueService", "LeagueSettings"]


class LeagueService(Rekeys):
    """The league of one Redis; its games are the ``GameService``'s."""

    def __init__(
        self,
        games: GameService,
        store: LeagueStore,
        settings: LeagueSettings | None = None,
        tournaments: TournamentService | None = None,
    ) -> None:
        self.games = games
        self.store = store
        self.tournaments = tournaments
        if tournaments is not None:
            tournaments.on_rated_round = self.rate_tournament_games
            tournaments.bot_name = self.is_bot_name
        self.settings = settings or LeagueSettings()
        if tournaments is not None:
            tournaments.min_rated_deadline_s = self.settings.min_deadline_s
        self.holder = secrets.token_hex(8)  # this process's mark on the matchmaker's lock
        self.waiting = 0  # bots the matchmaker last found in the arena's pool
        self.webhooks = None
        self._league_games = {}  # see _league_game
        self._rekeying = set()  # see Rekeys._rekey: rekeys left to retry
        self._settled = set()  # see settle: the games this process found settled
        self._sealed_until = {}  # see _settle: game id -> when to look at its group again
        self._settling = {}  # see settle: a settling under way, which callers meanwhile share
        # see known_bot: token digest -> (key, account, when read); key -> token digest
        self._bots = {}
        self._token_of = {}
        self._digests = {}  # see known_bot: a bot token -> its digest
        self._seen_at = {}  # see _seen: when each bot was last marked
        self._free_looks = {}  # see refuse_bot_names: a look no bot had -> when read
        self._looks_kept = False  # see looks_ready
        self._bots_made = 0  # see refuse_bot_names: bots made through this process
        self._keeping_looks = asyncio.Lock()
        self._unmarked = {}  # see _seen: marks not yet written
        self._marked_at = -math.inf
        self._marking = None  # see _seen: the write of marks left waiting, when due
        self._marks_written = set()  # see _write_marks_later
        self._playing = {}  # each bot's games as last read
        # see _lookout: key -> (when read, its games in play), for a bot then found with games
        # in play and no tournament or challenge
        self._looked = {}
        self.seats = None  # see decide_next
        self._news = {}  # see _changed: a bot waiting to be paired
        self.matching = False  # whether this replica held the matchmaker's lock last time
        self.freed = asyncio.Event()  # see Arena.run_forever: bots came free through here

    def attach(self, webhooks: WebhookSeats) -> None:
        """Deliver the games of bots with a webhook through ``webhooks``, told of each call."""
        self.webhooks = webhooks
        webhooks.observer = self._webhook_call
