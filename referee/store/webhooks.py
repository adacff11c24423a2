"""Webhook seats' keys in Redis: who the referee calls for a game's seats, and the claims that
make each call one replica's.

- ``{game:<id>}:webhooks``         hash: seat -> its registration (URL, secret, the seat's
                                   token), as bytes the service encodes; it lives as long as
                                   the game may
- ``referee:webhooks:live``        set: the games that have webhook seats and are not over;
                                   every replica follows them
- ``{game:<id>}:webhook:<name>``   a claim (``Claim``: a random token set if the key is
                                   free, with a time to live its holder alone may extend): one
                                   replica delivers a seat's turn, or sends a notification

Every key but the live set has a time to live; a game leaves the set when it is over, and an
entry whose game is gone is dropped by whoever finds it so.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from typing import cast

from redis.asyncio import Redis, RedisCluster

from .connection import Commands

__all__ = ["LIVE", "Claim", "WebhookStore"]

LIVE = "referee:webhooks:live"


def _registrations(game_id: str) -> str:
    return f"{{game:{game_id}}}:webhooks"


# Lengthen a claim's life, if it is still this holder's (ARGV[1]): 1, else 0.
_EXTEND = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""


class Claim:
    """One replica's claim on one call: taken on the connection the process's reads and
    commits share (a turn's claim is on a decision's path), extended by its holder alone."""

    def __init__(self, store: WebhookStore, key: str, lease_s: float) -> None:
        self.store = store
        self.key = key
        self.lease_ms = max(1, int(lease_s * 1000))
        self.token = store.next_token()

    async def acquire(self) -> bool:
        """Whether this claim took the call (nobody held it)."""
        taken = await self.store.shared.execute(
            "SET", self.key, self.token, "NX", "PX", self.lease_ms
        )
        return taken is not None

    async def extend(self, seconds: float) -> bool:
        """Hold the call ``seconds`` more from now; False if the claim was lost meanwhile."""
        async with asyncio.timeout(self.store.timeout_s):
            kept = await self.store._extend(
                keys=[self.key], args=[self.token, max(1, int(seconds * 1000))]
            )
        return bool(kept)


class WebhookStore:
    """Registrations, the live set and claims; it keeps bytes and decides nothing."""

    def __init__(
        self, redis: Redis | RedisCluster, shared: Commands, *, timeout_s: float = 10
    ) -> None:
        self.redis = redis
        self.shared = shared  # the process's shared connection (``store.connection``)
        self.timeout_s = timeout_s
        self._extend = redis.register_script(_EXTEND)
        self._prefix = secrets.token_hex(8)  # this process's, random
        self._count = itertools.count()

    def next_token(self) -> str:
        """A claim's holder token: this process's random prefix and a count, unique without
        a random draw (a system call) per claim."""
        return f"{self._prefix}.{next(self._count)}"

    async def register(self, game_id: str, seats: dict[int, bytes], ttl_s: int) -> None:
        """The game's webhook seats, written before the game is, and the game made live."""
        key = _registrations(game_id)
        async with asyncio.timeout(self.timeout_s), self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping={str(s): v for s, v in seats.items()})
            pipe.expire(key, ttl_s)
            pipe.sadd(LIVE, game_id)
            await pipe.execute()  # one round trip

    async def registered(self, game_id: str) -> dict[int, bytes]:
        """A game's registrations, read on the shared connection (once per game a process
        follows: a pooled connection cost several times its CPU)."""
        async with asyncio.timeout(self.timeout_s):
            found = await self.shared.execute("HGETALL", _registrations(game_id))
        if isinstance(found, dict):  # RESP3
            return {int(seat): value for seat, value in found.items()}
        return {int(found[i]): found[i + 1] for i in range(0, len(found), 2)}

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
            await self.shared.execute("SREM", LIVE, game_id)

    def claim(self, game_id: str, name: str, lease_s: float) -> Claim:
        """A claim on one call of the game's, not yet taken (``acquire``)."""
        return Claim(self, f"{{game:{game_id}}}:webhook:{name}", lease_s)
