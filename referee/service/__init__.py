"""The referee's use cases, async, over the store: games (create, claim, read, commit,
records, events, sweeping), the seats' own requests (their turn, their decisions),
tournaments, and what one process remembers between requests (``memory``).

``Services.start(settings)`` makes them for one process: the store (an embedded Valkey if no
``REDIS_URL`` is given) and the background work (sweeping deadlines, letting go of the commits
channels of games no one waits on).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from ..games import warm_caches
from ..outbound import Allowed, Outbound
from ..settings import Settings
from ..store import AVAILABILITY, STORE_BUSY, STORE_UNAVAILABLE, Store, event_order, open_store
from . import wakes
from .delivery import Delivery
from .games import GameService
from .idempotency import Idempotency
from .league import LeagueService, LeagueSettings
from .limits import Limits
from .seats import Seats
from .tournaments import TournamentService
from .webhooks import WebhookSeats

if TYPE_CHECKING:
    from ..store.embedded import Embedded

__all__ = [
    "AVAILABILITY",
    "STORE_BUSY",
    "STORE_UNAVAILABLE",
    "GameService",
    "Idempotency",
    "LeagueService",
    "LeagueSettings",
    "Limits",
    "Seats",
    "Services",
    "TournamentService",
    "WebhookSeats",
    "event_order",
]


class Services:
    """Everything one referee process serves requests with, and its background tasks."""

    def __init__(self, store: Store, settings: Settings, embedded: Embedded | None = None) -> None:
        self.store = store
        self.limits = Limits(store.limits, settings)
        self.games = GameService(
            store.games,
            retention_s=settings.retention_s,
            events_retention_s=settings.events_retention_s,
            recent_games=settings.recent_games,
            idle_ttl_s=settings.idle_ttl_s,
            limits=self.limits,
            max_seats=settings.max_seats,
            hear_linger_s=settings.hear_linger_s,
        )
        self.seats = Seats(self.games)
        self.tournaments = TournamentService(
            self.games, store.tournaments, max_entrants=settings.max_entrants
        )
        self.idempotency = Idempotency(
            store.idempotency, settings.idempotency_ttl_s, settings.idempotency_secret
        )
        self.league = LeagueService(
            self.games,
            store.league,
            LeagueSettings(
                games_per_day=settings.bot_games_per_day,
                concurrent_games=settings.bot_concurrent_games,
                timeouts_to_pause=settings.bot_timeouts_to_pause,
                min_deadline_s=settings.bot_min_deadline_s,
                webhook_failures_to_pause=settings.bot_webhook_failures_to_pause,
            ),
            self.tournaments,
        )
        allowed = Allowed(settings.webhook_allow)
        outbound = Outbound(
            allowed, per_host=settings.webhook_per_host, max_body=settings.webhook_max_body
        )
        self.webhooks = WebhookSeats(
            store.webhooks,
            self.seats,
            Delivery(outbound),
            allowed=allowed,
            lease_s=settings.webhook_lease_s,
        )
        self.league.attach(self.webhooks)
        self.league.seats = self.seats
        self._embedded = embedded
        self._tasks: list[asyncio.Task[Any]] = []

    @classmethod
    def start(cls, settings: Settings) -> Services:
        """The services on ``settings.redis_url``, or on an embedded Valkey started now."""
        embedded = None
        url = settings.redis_url
        if url is None:
            from ..store.embedded import start_embedded

            embedded = start_embedded(settings.data_dir, appendfsync=settings.appendfsync)
            url = embedded.url
        store = open_store(
            url,
            cluster=settings.redis_cluster,
            timeout_s=settings.redis_timeout_s,
            pool_size=settings.redis_pool,
        )
        services = cls(store, settings, embedded)
        warm_caches()
        services._tasks = [
            asyncio.create_task(services.games.sweep_forever(settings.sweep_interval_s)),
            asyncio.create_task(services.games.let_go_forever()),
            asyncio.create_task(services.games.watch_store()),
            asyncio.create_task(services.limits.renew_forever()),
            asyncio.create_task(services.league.run_forever()),
            asyncio.create_task(services.webhooks.run_forever()),
        ]
        if settings.wake_times is not None:  # a measure: how soon woken waiters are answered
            wakes.enable()
            services._tasks.append(asyncio.create_task(wakes.write_forever(settings.wake_times)))
        return services

    async def ready(self) -> None:
        """Raises unless Redis answers."""
        await self.store.ping()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await self.league.stop()
        await self.webhooks.stop()
        # bounded: a stop never sits on a connection that Redis leaves unanswered
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await self.store.aclose()
        if self._embedded is not None:
            self._embedded.stop()
