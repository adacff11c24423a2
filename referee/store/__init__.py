"""The only code that speaks Redis: where games and tournaments are kept, the connection that
a process's reads and commits share, and the embedded server for when no Redis is given.

``open_store(url)`` makes the clients for one Redis; the services get its ``games`` and
``tournaments``. Nothing here decides anything of a game: it keeps bytes under versions.
"""

from __future__ import annotations

import re

from redis.asyncio import ConnectionPool, Redis, RedisCluster
from redis.exceptions import ConnectionError as _ConnectionError
from redis.exceptions import RedisError as StoreError
from redis.exceptions import TimeoutError as _TimeoutError

from .games import (
    COMMITS,
    DEADLINES,
    EVENTS_PER_READ,
    SCRIPT_COMMANDS,
    Commit,
    GameKeys,
    GameStore,
    Stored,
)
from .idempotency import IdempotencyStore
from .limits import LimitStore
from .tournaments import TournamentStore

__all__ = [
    "COMMITS",
    "DEADLINES",
    "EVENTS_PER_READ",
    "SCRIPT_COMMANDS",
    "STORE_UNAVAILABLE",
    "Commit",
    "GameKeys",
    "GameStore",
    "IdempotencyStore",
    "LimitStore",
    "Store",
    "StoreError",
    "Stored",
    "TournamentStore",
    "open_store",
    "shown_url",
]


#: what the store raises when Redis does not answer (in time): nothing was changed, or a
#: commit's outcome is unknown and taking it again is safe (the version check)
STORE_UNAVAILABLE = (_ConnectionError, _TimeoutError, TimeoutError)


class Store:
    """The referee's Redis: its games and tournaments, on clients made once per process."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        blocking: Redis | RedisCluster,
        cluster_seed: ConnectionPool | None = None,
    ) -> None:
        self._clients = (redis, blocking)
        self.games = GameStore(redis, blocking, cluster_seed=cluster_seed)
        self.tournaments = TournamentStore(redis)
        self.limits = LimitStore(redis, self.games.shared)
        self.idempotency = IdempotencyStore(redis)

    async def ping(self) -> None:
        await self.games.ping()

    async def aclose(self) -> None:
        await self.games.aclose()
        for client in self._clients:
            await client.aclose()


def shown_url(url: str) -> str:
    """``url`` as a log line may show it: any password replaced by ``***``."""
    url = re.sub(r"^([a-z+]+://[^:/@]*):[^@/]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", url)


def open_store(url: str, *, cluster: bool = False) -> Store:
    """The clients for the Redis at ``url`` (connecting lazily); with ``cluster``, for the
    Redis Cluster that ``url``'s node belongs to."""
    # no per-socket-call timeouts (redis-py runs each write as a task of its own for them):
    # the store puts one deadline on each of its operations instead
    redis: Redis | RedisCluster
    blocking: Redis | RedisCluster
    if cluster:
        # redis-py's cluster clients follow MOVED and ASK themselves; a game's reads and
        # commits share one connection per primary (``store.cluster``)
        redis = RedisCluster.from_url(url, max_connections=256, socket_timeout=None)
        blocking = RedisCluster.from_url(url, max_connections=4096, socket_timeout=None)
        store = Store(redis, blocking, ConnectionPool.from_url(url))
    else:
        redis = Redis.from_url(url, max_connections=256, socket_timeout=None)
        # long-polls and event streams wait in XREAD BLOCK on a pool of their own
        blocking = Redis.from_url(url, max_connections=4096, socket_timeout=None)
        store = Store(redis, blocking)
    store.games.where = shown_url(url)
    return store
