"""Webhook seats' keys in Redis: who the referee calls for a game's seats, and the claims that
make each call one replica's.

- ``{game:<id>}:webhooks``         hash: seat -> its registration (URL, secret, the seat's
                                   token), as bytes the service encodes; it lives as long as
                                   the game may
- ``referee:webhooks:live``        set: the games that have webhook seats and are not over;
                                   every replica follows them
- ``{game:<id>}:webhook:<name>``   a claim (redis-py's ``Lock``: a random token, a time to
                                   live, extended by its holder only): one replica delivers a
                                   seat's turn, or sends a notification

Every key but the live set has a time to live; a game leaves the set when it is over, and an
entry whose game is gone is dropped by whoever finds it so.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.lock import Lock
from redis.exceptions import LockError

__all__ = ["LIVE", "LockError", "WebhookStore"]

LIVE = "referee:webhooks:live"


def _registrations(game_id: str) -> str:
    return f"{{game:{game_id}}}:webhooks"


class WebhookStore:
    """Registrations, the live set and claims; it keeps bytes and decides nothing."""

    def __init__(self, redis: Redis | RedisCluster, *, timeout_s: float = 10) -> None:
        self.redis = redis
        self.timeout_s = timeout_s

    async def register(self, game_id: str, seats: dict[int, bytes], ttl_s: int) -> None:
        """The game's webhook seats, written before the game is, and the game made live."""
        key = _registrations(game_id)
        async with asyncio.timeout(self.timeout_s):
            await self.redis.hset(key, mapping={str(s): v for s, v in seats.items()})
            await self.redis.expire(key, ttl_s)
            await self.redis.sadd(LIVE, game_id)

    async def registered(self, game_id: str) -> dict[int, bytes]:
        async with asyncio.timeout(self.timeout_s):
            found = cast(dict[bytes, bytes], await self.redis.hgetall(_registrations(game_id)))
        return {int(seat): value for seat, value in found.items()}

    async def unregister(self, game_id: str, seat: int) -> None:
        """The seat's webhook is gone (the bot answered 410): no replica calls it again."""
        async with asyncio.timeout(self.timeout_s):
            await self.redis.hdel(_registrations(game_id), str(seat))

    async def live(self) -> list[str]:
        async with asyncio.timeout(self.timeout_s):
            members = cast(set[bytes], await self.redis.smembers(LIVE))
        return sorted(m.decode() for m in members)

    async def over(self, game_id: str) -> None:
        """The game needs no more calls: out of the live set (its registrations expire)."""
        async with asyncio.timeout(self.timeout_s):
            await self.redis.srem(LIVE, game_id)

    def claim(self, game_id: str, name: str, lease_s: float) -> Lock:
        """A claim on one call of the game's (not yet taken: ``acquire(blocking=False)``)."""
        lock: Any = self.redis.lock(
            f"{{game:{game_id}}}:webhook:{name}", timeout=lease_s, blocking=False
        )
        return cast(Lock, lock)
