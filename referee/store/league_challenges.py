"""The league's challenges in Redis (``store.league`` lists their keys): each challenge, a
bot's inbox of those made to it, and a challenger's one open challenge to each opponent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, cast

from redis.asyncio import Redis, RedisCluster

if TYPE_CHECKING:
    from .connection import Patience, SharedScript

__all__ = ["ChallengeStore", "P"]

#: the league's hash tag: every key of the league is in one cluster slot
P = "{league}"


def _challenge(challenge_id: str) -> str:
    return f"{P}:challenge:{challenge_id}"


def _challenging(challenger: str, opponent: str) -> str:
    return f"{P}:challenging:{challenger}:{opponent}"


def _from_owner(opponent: str, owner: str) -> str:
    return f"{P}:challengers:{opponent}:{owner}"


class ChallengeStore:
    """``LeagueStore``'s challenges: its client, patience, versioned save and load."""

    redis: Redis | RedisCluster
    patience: Patience
    _save: SharedScript
    _hold: SharedScript
    _load: Callable[[str], Awaitable[tuple[str, bytes] | None]]

    async def load_challenge(self, challenge_id: str) -> tuple[str, bytes] | None:
        return await self._load(_challenge(challenge_id))

    async def save_challenge(
        self, challenge_id: str, version: str, blob: bytes, ttl: int, inbox: str, expires: float
    ) -> bool:
        args: list[str | bytes | int] = [version, str(int(version or 0) + 1), blob, "", "0", "0"]
        args.append(ttl)
        key = _challenge(challenge_id)
        async with self.patience.bounded():
            saved = bool(await self._save(keys=[key, key, key], args=args))
            if saved:
                await self.redis.zadd(f"{P}:inbox:{inbox}", {challenge_id: expires})
        return saved

    async def challenging(
        self, challenger: str, opponent: str, challenge_id: str, seconds: float
    ) -> str | None:
        """Take the challenger's one open challenge to the opponent for ``seconds`` (until
        it expires, or ``answered``): None if taken, else the open one's id."""
        pair = _challenging(challenger, opponent)
        ms = max(1, int(seconds * 1000))
        async with self.patience.bounded():  # set, or the one held read, in one step
            found = await self.redis.set(pair, challenge_id, nx=True, px=ms, get=True)
        return None if found is None else cast("bytes", found).decode()

    async def answered(self, challenger: str, opponent: str, challenge_id: str) -> None:
        """The challenge is answered: the challenger may challenge the opponent again."""
        pair = _challenging(challenger, opponent)
        async with self.patience.bounded():
            if await self.redis.get(pair) == challenge_id.encode():
                await self.redis.delete(pair)

    async def hold_challenge(
        self, opponent: str, owner: str, challenge_id: str, expires: float, now: float, most: int
    ) -> bool:
        """Count the challenge among the open ones of ``owner``'s bots to ``opponent``
        (until it expires, or ``release_challenge``): False, and not counted, where they hold
        ``most`` already."""
        args = [now, most, challenge_id, expires]
        async with self.patience.bounded():
            return bool(await self._hold(keys=[_from_owner(opponent, owner)], args=args))

    async def release_challenge(self, opponent: str, owner: str, challenge_id: str) -> None:
        """The challenge is answered or withdrawn: no longer one of ``owner``'s open ones."""
        async with self.patience.bounded():
            await self.redis.zrem(_from_owner(opponent, owner), challenge_id)

    async def inbox(self, key: str, now: float) -> list[str]:
        """The open challenges' ids to a bot (an expired one leaves the inbox)."""
        inbox = f"{P}:inbox:{key}"
        async with self.patience.bounded():
            await self.redis.zremrangebyscore(inbox, "-inf", now)
            found = await self.redis.zrange(inbox, 0, 49)
        return [c.decode() for c in cast("list[bytes]", found)]

    async def out_of_inbox(self, key: str, challenge_id: str) -> None:
        async with self.patience.bounded():
            await self.redis.zrem(f"{P}:inbox:{key}", challenge_id)
