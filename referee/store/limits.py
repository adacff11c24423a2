"""Quotas and rate limits, counted in Redis so that every replica shares them.

Each count is one key (its own hash tag, so each script touches one cluster slot) with a time
to live; the scripts check and count in one step, so two replicas cannot both take the last
unit.

- ``referee:rate:{<who>}:<second>``   string: requests leased in that second (leased up to
                                     ``LEASE_AHEAD`` seconds before it; it lives until a
                                     second after it)
- ``referee:open:{<who>}``           hash: per process, the open streams and long-polls it
                                     holds; ``referee:open:{<who>}:until`` says until when
                                     each process's holding is good (it renews it while it
                                     lives, so a killed process's count lapses)
- ``referee:live:{<owner>}:<kind>``  sorted set: an owner's live games (or tournaments) by
                                     the time they stop counting

``<who>`` and ``<owner>`` are digests (a token or an organizer key is never a key name).
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis, RedisCluster

from .connection import Commands, Patience, SharedScript

__all__ = ["LimitStore", "live_key"]


def live_key(owner: str, kind: str) -> str:
    """The sorted set of an owner's live games (or tournaments)."""
    return f"referee:live:{{{owner}}}:{kind}"


# Lease up to ARGV[1] requests of the budget ARGV[3] of the second KEYS[1], and up to ARGV[2]
# of each later second's KEYS[2..]: how many were granted of each, in order.
_RATE = """
local limit = tonumber(ARGV[3])
local grants = {}
for i, key in ipairs(KEYS) do
  local lease = tonumber(i == 1 and ARGV[1] or ARGV[2])
  local used = redis.call('INCRBY', key, lease)
  if used == lease then redis.call('EXPIRE', key, #KEYS + 1) end
  local before = used - lease
  grants[i] = before >= limit and 0 or math.min(lease, limit - before)
end
return grants
"""

# A process (ARGV[1]) takes (ARGV[2] > 0) or gives back (< 0) units of a shared cap (ARGV[3]),
# its holding good until ARGV[5]; holdings that lapsed before ARGV[4] are dropped first.
_HOLD = """
local now = tonumber(ARGV[4])
local untils = redis.call('HGETALL', KEYS[2])
for i = 1, #untils, 2 do
  if tonumber(untils[i + 1]) < now then
    redis.call('HDEL', KEYS[1], untils[i])
    redis.call('HDEL', KEYS[2], untils[i])
  end
end
local want = tonumber(ARGV[2])
local grant = want
if want > 0 then
  local total = 0
  for _, held in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(held) end
  grant = math.min(want, tonumber(ARGV[3]) - total)
  if grant <= 0 then return 0 end
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], grant) <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[5])
end
redis.call('EXPIRE', KEYS[1], 600)
redis.call('EXPIRE', KEYS[2], 600)
return grant
"""

# Count a live thing of an owner (ARGV[3]) until ARGV[4], unless it has ARGV[2] already.
_ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[4]) - tonumber(ARGV[1])) + 1)
return 1
"""


SCRIPTS = (_RATE, _HOLD, _ADMIT)


class LimitStore:
    """The shared counts behind quotas and rate limits. It decides nothing: the limits
    service says what to count and what the caps are."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        shared: Commands,
        *,
        timeout_s: float = 10,
        patience: Patience | None = None,
    ) -> None:
        self.redis = redis
        self.timeout_s = timeout_s
        self.patience = patience or Patience(timeout_s)
        # on a request's path: the connection a process's reads and commits share (a
        # command packed by hiredis, no pool), which keeps each command's deadline itself
        self.shared = shared
        self._scripts = {s: SharedScript(shared, redis, s, self.patience) for s in SCRIPTS}

    async def _run(self, script: str, keys: list[str], args: list[Any]) -> Any:
        return await self._scripts[script](keys, args)

    async def lease_rate(
        self, who: str, seconds: list[int], lease: int, ahead: int, limit: int
    ) -> list[int]:
        """Requests granted of ``who``'s budget of ``limit`` for each of ``seconds``: up to
        ``lease`` of the first (this one), up to ``ahead`` of each later one."""
        keys = [f"referee:rate:{{{who}}}:{second}" for second in seconds]
        return [int(g) for g in await self._run(_RATE, keys, [lease, ahead, limit])]

    async def hold(
        self, who: str, process: str, units: int, cap: int, now: float, until: float
    ) -> int:
        """Take (``units`` > 0) up to ``units`` of ``who``'s ``cap``, for this process, or give
        back (< 0); the units taken (0: none left)."""
        keys = [f"referee:open:{{{who}}}", f"referee:open:{{{who}}}:until"]
        return int(await self._run(_HOLD, keys, [process, units, cap, now, until]))

    async def admit(
        self, owner: str, kind: str, member: str, cap: int, now: float, until: float
    ) -> bool:
        """Count ``member`` among ``owner``'s live ``kind`` until ``until`` (or until
        ``release``), unless ``cap`` are counted already."""
        return bool(await self._run(_ADMIT, [live_key(owner, kind)], [now, cap, member, until]))

    async def release(self, owner: str, kind: str, member: str) -> None:
        """``member`` is no longer live (finished, or never created)."""
        await self.shared.execute("ZREM", live_key(owner, kind), member)
