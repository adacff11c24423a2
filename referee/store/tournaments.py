"""A tournament's keys in Redis: its document, saved under a version check, and the short
lock that lets one request create a round's games.

- ``{tournament:<id>}:doc``         hash: ``v`` (version, a counter) and ``blob`` (msgpack);
                                    each save sets its time to live
- ``{tournament:<id>}:round:<n>``   string: the holder of round n's lock (30 s)
- ``{tournament:<id>}:games``       sorted set: the tournament's games by the time each was
                                    created, written with each game (``store.games``)
- ``tournaments``                   sorted set: every tournament's id by the time it was
                                    created, for listing; an id whose document has expired
                                    is dropped when a listing meets it (``listing``)
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis, RedisCluster

from .connection import Patience
from .listing import Listed, add_to_index, listed

__all__ = ["TournamentStore"]

# Set the document if its version is the one read (creation: the empty version).
_SAVE = """
local v = redis.call('HGET', KEYS[1], 'v') or ''
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'blob', ARGV[3])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return 1
"""


def _key(tournament_id: str) -> str:
    return f"{{tournament:{tournament_id}}}:doc"


_INDEX = "tournaments"


class TournamentStore:
    """Where tournaments are kept: a document per tournament and its round locks. It decides
    nothing; the tournament service reads, decides and saves under the version it read."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        *,
        timeout_s: float = 10,
        patience: Patience | None = None,
    ) -> None:
        self.redis = redis
        self.timeout_s = timeout_s
        # each operation's deadline (and failing at once just after a timeout), the store's
        self.patience = patience or Patience(timeout_s)
        self._save = redis.register_script(_SAVE)

    async def load(self, tournament_id: str) -> tuple[str, bytes] | None:
        """The version and document of a tournament, or None if there is none."""
        async with self.patience.bounded():
            # redis-py's types allow decoded replies too: this client's are bytes
            version, blob = cast(
                "list[bytes | None]", await self.redis.hmget(_key(tournament_id), ["v", "blob"])
            )
        if blob is None:
            return None
        assert version is not None  # saved together with the document (_SAVE)
        return version.decode(), blob

    async def save(self, tournament_id: str, version: str, blob: bytes, ttl: int) -> bool:
        """Write the document if its version is still ``version`` ("" to create it); it
        expires ``ttl`` seconds after this write unless written again."""
        async with self.patience.bounded():
            saved = await self._save(
                keys=[_key(tournament_id)], args=[version, str(int(version or 0) + 1), blob, ttl]
            )
        return bool(saved)

    async def lock_round(self, tournament_id: str, round_: int, holder: str) -> bool:
        """Take round ``round_``'s lock for ``holder``, or find it already the holder's."""
        key = f"{{tournament:{tournament_id}}}:round:{round_}"
        async with self.patience.bounded():
            if await self.redis.set(key, holder, nx=True, ex=30):
                return True
            return await self.redis.get(key) == holder.encode()

    async def index(self, tournament_id: str, created: float) -> None:
        """List a new tournament (``listed``)."""
        async with self.patience.bounded():
            await add_to_index(self.redis, _INDEX, tournament_id, created)

    async def listed(self, before: float | None, limit: int) -> tuple[list[Listed], str | None]:
        """A page of tournaments created before ``before`` (all when None), newest first,
        and the next page's cursor (``store.listing``)."""
        async with self.patience.bounded():
            return await listed(self.redis, _INDEX, _key, before, limit)
