"""Listings: a sorted set of ids by creation time beside the documents it names, read a page
at a time, newest first. The set is only an index: an id whose document has expired is dropped
when a page meets it, and the set keeps at most its newest ``INDEX_MAX`` ids."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster

__all__ = [
    "INDEX_MAX",
    "Listed",
    "add_to_index",
    "listed",
    "listing_commands",
    "tournament_games",
]

#: ids an index keeps at most (the oldest go first): a listing's memory stays bounded
INDEX_MAX = 10_000


def tournament_games(tournament_id: str) -> str:
    """The index of a tournament's games (its tables), in the tournament's slot."""
    return f"{{tournament:{tournament_id}}}:games"


def listing_commands(
    index: str, member: str, created: float, ttl: int = 0
) -> tuple[tuple[Any, ...], ...]:
    """The commands that list ``member`` in ``index`` at ``created`` (a member listed already
    keeps its place) and drop the oldest beyond ``INDEX_MAX``: sent alone (``add_to_index``),
    or in the write that creates what they list (a game's). ``ttl`` > 0: the index expires
    that long after (a tournament's, which outlives none of its games)."""
    commands: tuple[tuple[Any, ...], ...] = (
        ("ZADD", index, "NX", created, member),
        ("ZREMRANGEBYRANK", index, 0, -INDEX_MAX - 1),
    )
    return (*commands, ("EXPIRE", index, ttl)) if ttl > 0 else commands


async def add_to_index(
    redis: Redis | RedisCluster, index: str, member: str, created: float
) -> None:
    """List ``member`` in ``index`` (``listing_commands``)."""
    async with redis.pipeline(transaction=False) as pipe:
        for command in listing_commands(index, member, created):
            pipe.execute_command(*command)
        await pipe.execute()


#: a listing's entry: id, creation time, version and document
Listed = tuple[str, float, str, bytes]


async def listed(
    redis: Redis | RedisCluster,
    index: str | tuple[str, ...],
    doc_key: Callable[[str], str],
    before: float | None,
    limit: int,
) -> tuple[list[Listed], str | None]:
    """A page: up to ``limit`` ids of ``index`` (or of several, merged: one set split across
    slots) created before ``before`` (all when None), newest first, each with its creation
    time, and the version (``v``) and document (``blob``) of its hash at ``doc_key(id)``; and
    the cursor (``before``) of the next page, None when this one is the last."""
    indexes = (index,) if isinstance(index, str) else index
    found = await _found(redis, indexes, doc_key, before, limit + 1)
    following = repr(found[limit - 1][1]) if len(found) > limit else None
    return found[:limit], following


async def _found(
    redis: Redis | RedisCluster,
    indexes: tuple[str, ...],
    doc_key: Callable[[str], str],
    before: float | None,
    limit: int,
) -> list[Listed]:
    found: list[Listed] = []
    high: str = f"({before!r}" if before is not None else "+inf"
    while len(found) < limit:
        need = limit - len(found)
        # the newest ``need`` of each part, merged: the newest ``need`` of them all
        # (redis-py's types allow decoded replies too: this client's are bytes; RESP2:
        # member and score)
        async with redis.pipeline(transaction=False) as pipe:
            for index in indexes:
                pipe.zrevrangebyscore(index, high, "-inf", start=0, num=need, withscores=True)
            parts = cast("list[list[tuple[bytes, float]]]", await pipe.execute())
        ids = sorted(
            (
                (member, score, index)
                for index, part in zip(indexes, parts, strict=True)
                for member, score in part
            ),
            key=lambda entry: -entry[1],
        )[:need]
        if not ids:
            break
        async with redis.pipeline(transaction=False) as pipe:
            for member, _, _ in ids:
                pipe.hmget(doc_key(member.decode()), ["v", "blob"])
            docs = await pipe.execute()
        gone: dict[str, list[bytes]] = {}
        for (member, score, index), (version, blob) in zip(ids, docs, strict=True):
            if blob is None:
                gone.setdefault(index, []).append(member)
            else:
                found.append((member.decode(), score, version.decode(), blob))
        for index, members in gone.items():
            await redis.zrem(index, *members)
        high = f"({ids[-1][1]!r}"
    return found
