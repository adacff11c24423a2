"""Idempotency keys' records in Redis: a creation's claim on its key, then its answer, sealed.

- ``referee:idem:<hex>``    string: a claim while the first request runs (it expires after
                            seconds, should its process die), then the answer, kept
                            REFEREE_IDEMPOTENCY_TTL_S (a day); ``<hex>`` is derived from
                            the key and its scope
                            (``service.idempotency``), never the key itself
- ``referee:idem:secret``   string: the secret the names and seals derive from, made by the
                            first process that needs it, where no secret is configured

Every key has a time to live. The store keeps bytes and decides nothing: what a record holds,
and who may open it, is the service's.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import cast

from redis.asyncio import Redis, RedisCluster

__all__ = ["IdempotencyStore", "record_key"]

SECRET_KEY = "referee:idem:secret"

# Claim the key if nobody has: nil, or what is there (a claim or an answer).
_CLAIM = """
local found = redis.call('GET', KEYS[1])
if found then return found end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
return false
"""
# Replace this request's own claim (ARGV[1]) by its answer (ARGV[2]), or drop it (no ARGV[2]).
_SETTLE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then return redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
return 1
"""


def record_key(name: str) -> str:
    return f"referee:idem:{name}"


class IdempotencyStore:
    """Claims and answers under idempotency keys' derived names."""

    def __init__(self, redis: Redis | RedisCluster, *, timeout_s: float = 10) -> None:
        self.redis = redis
        self.timeout_s = timeout_s
        self._claim = redis.register_script(_CLAIM)
        self._settle = redis.register_script(_SETTLE)

    async def shared_secret(self, ttl_s: int) -> bytes:
        """The secret every replica shares where none is configured: made once (SET NX), and
        kept while it is used (each process that reads it lengthens its life)."""
        async with asyncio.timeout(self.timeout_s):
            await self.redis.set(SECRET_KEY, secrets.token_bytes(32), nx=True, ex=ttl_s)
            await self.redis.expire(SECRET_KEY, ttl_s, gt=True)
            # redis-py's types allow decoded replies too: this client's are bytes
            found = cast("bytes | None", await self.redis.get(SECRET_KEY))
        if found is None:  # expired between the two: make it again
            return await self.shared_secret(ttl_s)
        return found

    async def claim(self, name: str, claim: bytes, in_flight_s: int) -> bytes | None:
        """Claim ``name`` for ``in_flight_s`` seconds: None if this request has it, else what
        holds it (another request's claim, or an answer)."""
        async with asyncio.timeout(self.timeout_s):
            found = await self._claim(keys=[record_key(name)], args=[claim, in_flight_s])
        return found or None

    async def answer(self, name: str, claim: bytes, record: bytes, ttl_s: int) -> bool:
        """Replace this request's claim by its answer, kept ``ttl_s`` seconds."""
        async with asyncio.timeout(self.timeout_s):
            return bool(await self._settle(keys=[record_key(name)], args=[claim, record, ttl_s]))

    async def release(self, name: str, claim: bytes) -> None:
        """Drop this request's claim (nothing was made: the key may be used again)."""
        async with asyncio.timeout(self.timeout_s):
            await self._settle(keys=[record_key(name)], args=[claim, "", 0])
