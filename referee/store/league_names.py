"""The looks of the league's bots' names in Redis (``store.league`` lists their keys), and
the bots' own keys, which a bot's making writes with its looks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from .league_challenges import ChallengeStore, P

if TYPE_CHECKING:
    from .connection import Commands, SharedScript

__all__ = ["NameStore"]


def _bot(key: str) -> str:
    return f"{P}:bot:{key}"


def _token(digest: bytes) -> str:
    return f"{P}:token:{digest.hex()}"


class NameStore(ChallengeStore):
    """``LeagueStore``'s bots made under their looks, and the looks read."""

    LOOKS = f"{P}:looks"
    LOOKS_INDEXED = f"{P}:looks-indexed"
    shared: Commands
    _create: SharedScript

    async def create_bot(self, key: str, blob: bytes, token: bytes, looks: list[str]) -> bool:
        """A new bot under ``key``, named by its token's digest, holding ``looks``; False
        where a bot has the key, or another bot one of the looks."""
        keys = [_bot(key), _token(token), self.LOOKS]
        async with self.patience.bounded():
            return bool(await self._create(keys=keys, args=[blob, key, *looks]))

    async def looks_held(self, looks: list[str]) -> list[str | None]:
        """The key of the bot whose name looks like each of ``looks`` (None: no bot's)."""
        async with self.patience.bounded():
            found = await self.shared.execute("HMGET", self.LOOKS, *looks)
        return [None if k is None else k.decode() for k in cast("list[bytes | None]", found)]

    async def index_looks(self, looks_of: Callable[[bytes], list[str]]) -> int:
        """Hold the looks of the bots made before they were kept (once for all replicas:
        then ``LOOKS_INDEXED`` is set): ``looks_of`` a bot's blob. How many bots it found."""
        found = 0
        async with self.patience.bounded():
            if await self.redis.exists(self.LOOKS_INDEXED):
                return found
        found_keys = self.redis.scan_iter(match=_bot("*"), count=1000)
        names = [cast(bytes, n).decode() async for n in found_keys]
        for start in range(0, len(names), 500):  # a round trip to read 500, one to write them
            batch = names[start : start + 500]
            async with self.patience.bounded(), self.redis.pipeline(transaction=False) as pipe:
                for name in batch:
                    pipe.hget(name, "blob")
                blobs = await pipe.execute()
            async with self.patience.bounded(), self.redis.pipeline(transaction=False) as pipe:
                for name, blob in zip(batch, blobs, strict=True):
                    if blob is None:
                        continue  # a key of another kind under the prefix (none is)
                    found += 1
                    for look in looks_of(cast(bytes, blob)):
                        pipe.hsetnx(self.LOOKS, look, name.removeprefix(_bot("")))
                await pipe.execute()
        async with self.patience.bounded():
            await self.redis.set(self.LOOKS_INDEXED, "1")
        return found
