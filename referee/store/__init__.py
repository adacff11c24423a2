"""The only code that speaks Redis: where games and tournaments are kept, the connection that
a process's reads and commits share, and the embedded server for when no Redis is given.

``open_store(url)`` makes the clients for one Redis; the services get its ``games`` and
``tournaments``. Nothing here decides anything of a game: it keeps bytes under versions.
"""

from __future__ import annotations

import re
from typing import Any

from redis.asyncio import ConnectionPool, Redis, RedisCluster
from redis.exceptions import ConnectionError as _ConnectionError
from redis.exceptions import RedisError as StoreError
from redis.exceptions import TimeoutError as _TimeoutError

from .availability import AVAILABILITY, Availability, StoreBusy
from .connection import WaitingPool
from .events import event_order
from .games import (
    DEADLINES,
    EVENTS_PER_READ,
    SCRIPT_COMMANDS,
    Commit,
    GameKeys,
    GameStore,
    Stored,
)
from .idempotency import IdempotencyStore
from .league import LeagueStore
from .limits import LimitStore
from .tournaments import TournamentStore
from .webhooks import WebhookStore

__all__ = [
    "AVAILABILITY",
    "DEADLINES",
    "EVENTS_PER_READ",
    "SCRIPT_COMMANDS",
    "STORE_BUSY",
    "STORE_UNAVAILABLE",
    "Availability",
    "Commit",
    "GameKeys",
    "GameStore",
    "IdempotencyStore",
    "LeagueStore",
    "LimitStore",
    "Store",
    "StoreError",
    "Stored",
    "TournamentStore",
    "WebhookStore",
    "event_order",
    "open_store",
    "shown_url",
]


#: what the store raises when Redis does not answer (in time), or when no connection to it came
#: free in time (``STORE_BUSY``): nothing was changed, or a commit's outcome is unknown and
#: taking it again is safe (the version check)
STORE_UNAVAILABLE = (_ConnectionError, _TimeoutError, TimeoutError, StoreBusy)
#: of those, the one where every connection of a pool was in use (Redis may answer well)
STORE_BUSY = StoreBusy


class Store:
    """The referee's Redis: its games and tournaments, on clients made once per process;
    ``timeout_s``: how long any of its operations waits for Redis before it fails with one of
    ``STORE_UNAVAILABLE``."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        cluster_seed: ConnectionPool | None = None,
        *,
        timeout_s: float = 10,
    ) -> None:
        self._clients = (redis,)
        self.timeout_s = timeout_s
        self.games = GameStore(redis, cluster_seed=cluster_seed, timeout_s=timeout_s)
        patience = self.games.patience  # one for all the store's clients
        self.tournaments = TournamentStore(redis, timeout_s=timeout_s, patience=patience)
        self.limits = LimitStore(redis, self.games.shared, timeout_s=timeout_s, patience=patience)
        self.idempotency = IdempotencyStore(redis, timeout_s=timeout_s)
        self.league = LeagueStore(redis, self.games.shared, timeout_s=timeout_s, patience=patience)
        self.webhooks = WebhookStore(redis, self.games.shared, timeout_s=timeout_s)

    async def ping(self) -> None:
        """Returns once Redis answers a PING; raises after ``timeout_s`` at most."""
        await self.games.ping()

    async def aclose(self) -> None:
        await self.games.aclose()
        for client in self._clients:
            await client.aclose()


def shown_url(url: str) -> str:
    """``url`` as a log line may show it: any password replaced by ``***``."""
    url = re.sub(r"^([a-z+]+://[^:/@]*):[^@/]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", url)


def open_store(
    url: str, *, cluster: bool = False, timeout_s: float = 10, pool_size: int = 256
) -> Store:
    """The clients for the Redis at ``url`` (connecting lazily); with ``cluster``, for the
    Redis Cluster that ``url``'s node belongs to. ``timeout_s``: ``Store``'s; ``pool_size``:
    the connections of redis-py's pool (per node on a cluster) for everything that is not a
    game's read or commit (those share one connection) nor a wait (no connection at all)."""
    # no per-socket-call timeouts (redis-py runs each write as a task of its own for them):
    # the store puts one deadline on each of its operations instead (``timeout_s``, and a
    # blocking read's wait beyond it); connecting is bounded here too
    bounds: dict[str, Any] = {"socket_timeout": None, "socket_connect_timeout": timeout_s}
    redis: Redis | RedisCluster
    if cluster:
        # redis-py's cluster clients follow MOVED and ASK themselves; a game's reads and
        # commits share one connection per primary (``store.cluster``); a node's pool that
        # has no connection free refuses at once (``StoreBusy``)
        redis = RedisCluster.from_url(url, max_connections=pool_size, **bounds)
        store = Store(redis, ConnectionPool.from_url(url), timeout_s=timeout_s)
    else:
        # with every connection in use, an operation waits up to half its time for one to
        # come free, then fails with ``StoreBusy``
        pools = {"timeout": timeout_s / 2, **bounds}
        redis = Redis.from_pool(WaitingPool.from_url(url, max_connections=pool_size, **pools))
        store = Store(redis, timeout_s=timeout_s)
    store.games.where = shown_url(url)
    return store
