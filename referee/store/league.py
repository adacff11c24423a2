"""The league's keys in Redis: bot accounts, lifetime ratings, the arena's pool, the league's
games and challenges. Every key carries the one hash tag ``{league}``, so that each script
below touches one cluster slot: a game's rating update writes every seat's rating, the
leaderboard and the log of settled games in one step, under a check that the game was not
settled before and that no rating moved since it was read (exactly once, whoever races).

- ``{league}:bot:<key>``             hash: ``v`` (version) and ``blob`` (a ``BotDoc``); from
                                     its settled games, ``opponents`` (its last game's, JSON),
                                     ``first`` (whether it sat first) and ``streak`` (league
                                     games in a row a deadline decided in)
- ``{league}:token:<sha256 hex>``    string: the key of the bot the token belongs to
- ``{league}:looks``                 hash: what each bot's name looks like (its
                                     ``core.league.name_looks``) -> the bot's key
- ``{league}:looks-indexed``         string: set once the bots made before the looks were
                                     kept are in them (``index_looks``)
- ``{league}:ratings:<ruleset>``     hash: bot key -> its ``Rating``
- ``{league}:board:<ruleset>``       sorted set: bot key by mu - 3 sigma
- ``{league}:history:<ruleset>:<key>`` list: the bot's rating after each rated game
- ``{league}:recent:<key>``          list: the bot's latest settled games, newest first
- ``{league}:settled``               hash: game id -> its place in the log, once settled
- ``{league}:log``                   list: every settled game (``LogEntry``), in order
- ``{league}:games``                 hash: game id -> ``LeagueGame``, until it is settled
- ``{league}:playing:<key>``         set: the bot's league games in play
- ``{league}:pool``                  hash: bot key -> its ``Seek`` in the arena
- ``{league}:seen``                  hash: bot key -> when it last asked (``/v1/me/next``)
- ``{league}:free``                  hash: bot key -> since when it has had no game
- ``{league}:day:<key>:<yyyymmdd>``  string: the bot's arena games that day (2 days to live)
- ``{league}:pairing``               string: the matchmaker's lock (its holder)
- ``{league}:challenge:<id>``        hash: ``v`` and ``blob`` (a ``ChallengeDoc``)
- ``{league}:inbox:<key>``           sorted set: challenges to the bot by expiry
- ``{league}:challenging:<key>:<opponent>`` string: the bot's one open challenge to the
                                     opponent (``league_challenges``)
- ``{league}:challengers:<key>:<owner>`` sorted set: the open challenges of one organizer's
                                     bots to the bot, by expiry
- ``{league}:entered:<key>``         set: the tournaments the bot entered and plays on
- ``{league}:entrant:<key>``         hash: tournament id -> the bot's entrant token there, kept
                                     only for a bot with a webhook (the referee plays its seats)
- ``{league}:hookcalls:<key>``       list: the bot's latest webhook calls, newest first
- ``{league}:hookstats:<key>``       hash: its webhook's ``calls``, ``failures`` and ``streak``
                                     (failures in a row)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from redis.asyncio import Redis, RedisCluster

from . import league_scripts as scripts
from .connection import Commands, Patience, SharedScript
from .league_challenges import P
from .league_names import NameStore, _bot, _token
from .league_records import Seeker, SettledSeat

__all__ = ["LeagueStore", "Seeker", "SettledSeat"]

HISTORY_KEPT = 500  # as scripts.SETTLE trims
RECENT_KEPT = 20  # as scripts.SETTLE trims
CALLS_KEPT = 20  # a bot's latest webhook calls


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """A hash as HGETALL gives it inside a script: field, value, field, value..."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


class LeagueStore(NameStore):
    """Where the league is kept. It decides nothing: the league service reads, decides (with
    ``core.league``) and writes under the checks above."""

    SETTLED = f"{P}:settled"
    LOG = f"{P}:log"
    GAMES = f"{P}:games"
    POOL = f"{P}:pool"
    SEEN = f"{P}:seen"
    FREE = f"{P}:free"
    LOCK = f"{P}:pairing"

    def __init__(
        self,
        redis: Redis | RedisCluster,
        shared: Commands,
        *,
        timeout_s: float = 10,
        patience: Patience | None = None,
    ) -> None:
        self.redis = redis
        self.patience = patience or Patience(timeout_s)
        # the league's commands on a bot's path (its games, their settling, the matchmaker's
        # reads) go on the connection the games' reads and commits share: a command packed
        # by hiredis, no pool (redis-py's pool cost a third of each)
        self.shared = shared

        def script(text: str) -> SharedScript:
            return SharedScript(shared, redis, text, self.patience)

        self._save = script(scripts.SAVE)
        self._create = script(scripts.CREATE)
        self._hold = script(scripts.HOLD)
        self._leave_at = script(scripts.LEAVE_AT)
        self._settle = script(scripts.SETTLE)
        self._take = script(scripts.TAKE)
        self._lookout = script(scripts.LOOKOUT)
        self._pool = script(scripts.POOL)
        self._seekers = script(scripts.SEEKERS)
        self._seen = script(scripts.SEEN)
        self._lock = script(scripts.LOCK)
        self._swap = script(scripts.SWAP)

    # -- bots ----------------------------------------------------------------------------------

    async def load_bot(self, key: str) -> tuple[str, bytes] | None:
        return await self._load(_bot(key))

    async def save_bot(
        self,
        key: str,
        version: str,
        blob: bytes,
        *,
        old_token: bytes = b"",
        new_token: bytes = b"",
    ) -> bool:
        """Write a bot under its version (""), dropping ``old_token``'s key and naming the
        bot by ``new_token``'s in the same step."""
        keys = [_bot(key), _token(old_token) if old_token else _bot(key)]
        keys.append(_token(new_token) if new_token else _bot(key))
        args: list[str | bytes | int] = [version, str(int(version or 0) + 1), blob, key]
        args += ["1" if old_token else "0", "1" if new_token else "0", 0]
        async with self.patience.bounded():
            return bool(await self._save(keys=keys, args=args))

    async def bot_of_token(self, digest: bytes) -> str | None:
        async with self.patience.bounded():
            found = await self.shared.execute("GET", _token(digest))
        return None if found is None else cast(bytes, found).decode()

    # -- ratings -------------------------------------------------------------------------------

    async def ratings(self, ruleset: str, keys: list[str]) -> list[bytes | None]:
        if not keys:
            return []
        async with self.patience.bounded():
            found = await self.shared.execute("HMGET", f"{P}:ratings:{ruleset}", *keys)
        return cast("list[bytes | None]", found)

    async def every_rating(self, ruleset: str) -> dict[str, bytes]:
        async with self.patience.bounded():
            found = await self.redis.hgetall(f"{P}:ratings:{ruleset}")
        return {k.decode(): v for k, v in cast("dict[bytes, bytes]", found).items()}

    async def board(self, ruleset: str, start: int, count: int) -> tuple[list[str], int]:
        """A page of the leaderboard (bot keys, best first) and how many it holds."""
        key = f"{P}:board:{ruleset}"
        async with self.patience.bounded():
            page = await self.redis.zrevrange(key, start, start + count - 1)
            total = await self.redis.zcard(key)
        return [k.decode() for k in cast("list[bytes]", page)], int(total)

    async def history(self, ruleset: str, key: str) -> list[bytes]:
        async with self.patience.bounded():
            return cast(
                "list[bytes]", await self.redis.lrange(f"{P}:history:{ruleset}:{key}", 0, -1)
            )

    async def recent(self, key: str) -> list[str]:
        async with self.patience.bounded():
            found = await self.redis.lrange(f"{P}:recent:{key}", 0, RECENT_KEPT - 1)
        return [g.decode() for g in cast("list[bytes]", found)]

    async def settle(
        self,
        game_id: str,
        ruleset: str,
        entry: bytes,
        now: float,
        seats: Sequence[SettledSeat],
    ) -> list[int] | None:
        """Settle a game once (``scripts.SETTLE``). None: it was settled before; [] a rating
        moved since it was read (read again and retry); else per seat the bot's league games
        in a row that a deadline decided in."""
        keys = [self.SETTLED, self.LOG, self.GAMES, self.FREE]
        keys += [f"{P}:ratings:{ruleset}", f"{P}:board:{ruleset}"]
        args: list[bytes | str | float | int] = [game_id, len(seats), entry, now]
        for seat in seats:
            key = seat.key
            keys += [f"{P}:history:{ruleset}:{key}", f"{P}:recent:{key}", f"{P}:playing:{key}"]
            keys.append(_bot(key))
            args += [key, seat.read, seat.new, seat.score, seat.point, seat.opponents]
            args += [int(seat.first), int(seat.timed_out)]
        async with self.patience.bounded():
            found = await self._settle(keys=keys, args=args)
        if not isinstance(found, list):
            return None if int(found) == 0 else []
        return [int(streak) for streak in found[1:]]

    async def is_settled(self, game_id: str) -> bool:
        async with self.patience.bounded():
            return bool(await self.redis.hexists(self.SETTLED, game_id))

    async def log(self) -> list[bytes]:
        async with self.patience.bounded():
            return cast("list[bytes]", await self.redis.lrange(self.LOG, 0, -1))

    async def rewrite_ratings(
        self,
        rulesets: dict[str, dict[str, bytes]],
        scores: dict[str, dict[str, float]],
        histories: dict[tuple[str, str], list[bytes]],
    ) -> None:
        """Replace the ratings, boards and histories of ``rulesets`` (a rebuild's)."""
        async with self.patience.bounded():
            for ruleset, blobs in rulesets.items():
                await self.redis.delete(f"{P}:ratings:{ruleset}", f"{P}:board:{ruleset}")
                if blobs:
                    await self.redis.hset(f"{P}:ratings:{ruleset}", mapping=dict(blobs))  # type: ignore[arg-type]
                    await self.redis.zadd(f"{P}:board:{ruleset}", dict(scores[ruleset]))
            for (ruleset, key), points in histories.items():
                await self.redis.delete(f"{P}:history:{ruleset}:{key}")
                if points:
                    await self.redis.rpush(f"{P}:history:{ruleset}:{key}", *points[-HISTORY_KEPT:])

    # -- the league's games and the arena ------------------------------------------------------

    async def league_games(self) -> dict[str, bytes]:
        async with self.patience.bounded():
            found = await self.redis.hgetall(self.GAMES)
        return {k.decode(): v for k, v in cast("dict[bytes, bytes]", found).items()}

    async def league_game(self, game_id: str) -> bytes | None:
        async with self.patience.bounded():
            return cast("bytes | None", await self.shared.execute("HGET", self.GAMES, game_id))

    async def swap_league_game(self, game_id: str, was: bytes, blob: bytes) -> bool:
        """The game's record is ``blob`` now, if it was still ``was`` (and not settled)."""
        async with self.patience.bounded():
            return bool(await self._swap(keys=[self.GAMES], args=[game_id, was, blob]))

    async def add_game(self, game_id: str, blob: bytes, keys: list[str]) -> None:
        """A challenge's game: listed for settling and among its bots' games in play."""
        async with self.patience.bounded():
            await self.redis.hset(self.GAMES, game_id, blob)
            for key in keys:
                await self.redis.sadd(f"{P}:playing:{key}", game_id)

    async def add_games(self, games: dict[str, bytes]) -> None:
        """A rated tournament's round: listed for settling."""
        async with self.patience.bounded():
            await self.redis.hset(self.GAMES, mapping=games)  # type: ignore[arg-type]

    async def enter(self, key: str, tournament_id: str) -> None:
        async with self.patience.bounded():
            await self.redis.sadd(f"{P}:entered:{key}", tournament_id)

    async def entered(self, key: str) -> list[str]:
        async with self.patience.bounded():
            found = await self.redis.smembers(f"{P}:entered:{key}")
        return sorted(t.decode() for t in cast("set[bytes]", found))

    async def done_with(self, key: str, tournament_id: str) -> None:
        async with self.patience.bounded():
            await self.redis.srem(f"{P}:entered:{key}", tournament_id)
            await self.redis.hdel(f"{P}:entrant:{key}", tournament_id)

    async def drop_game(self, game_id: str, bots: Sequence[str] = ()) -> None:
        """Forget a league game (settled, or never made): no longer listed, nor counted
        among its bots' games in play."""
        async with self.patience.bounded():
            await self.redis.hdel(self.GAMES, game_id)
            for key in bots:
                await self.redis.srem(f"{P}:playing:{key}", game_id)

    async def playing(self, key: str) -> list[str]:
        async with self.patience.bounded():
            found = await self.redis.smembers(f"{P}:playing:{key}")
        return sorted(g.decode() for g in cast("set[bytes]", found))

    async def lookout(self, key: str, now: float) -> tuple[list[str], list[str], list[str]]:
        """What a bot's next decision looks at, in one script (one command for the client to
        send and parse): its games in play, the tournaments it entered and its open
        challenges' ids (``playing``, ``entered`` and ``inbox`` together)."""
        keys = [f"{P}:playing:{key}", f"{P}:entered:{key}", f"{P}:inbox:{key}"]
        async with self.patience.bounded():
            found = await self._lookout(keys=keys, args=[now])
        playing, entered, challenges = cast("list[list[bytes]]", found)
        return (
            sorted(g.decode() for g in playing),
            sorted(t.decode() for t in entered),
            [c.decode() for c in challenges],
        )

    async def seek(self, key: str, blob: bytes, now: float) -> None:
        """Put a bot in the pool: seen and free first, so that the matchmaker never finds it
        in the pool unseen (and drops it as gone)."""
        async with self.patience.bounded():
            await self.redis.hset(self.SEEN, key, now)
            await self.redis.hsetnx(self.FREE, key, now)
            await self.redis.hset(self.POOL, key, blob)

    async def leave(self, key: str) -> bool:
        async with self.patience.bounded():
            left = await self.redis.hdel(self.POOL, key)
            await self.redis.hdel(self.SEEN, key)
        return bool(left)

    async def leave_at(self, key: str, version: int) -> bool:
        """``leave``, if the bot's account is at ``version`` still (in the same step)."""
        keys = [self.POOL, self.SEEN, _bot(key)]
        async with self.patience.bounded():
            return bool(await self._leave_at(keys=keys, args=[key, str(version)]))

    async def seen(self, marks: dict[str, float]) -> None:
        """Mark bots seen, each at its time, in one script (a bot not in the pool: not)."""
        if marks:
            args = [part for key, at in marks.items() for part in (key, at)]
            async with self.patience.bounded():
                await self._seen(keys=[self.POOL, self.SEEN], args=args)

    async def pool(self) -> tuple[dict[str, bytes], dict[str, float], dict[str, float]]:
        """The arena's seeks, when each bot last asked, and since when each has been free
        (one script)."""
        async with self.patience.bounded():
            found = await self._pool(keys=[self.POOL, self.SEEN, self.FREE])
        seeks, seen, free = (_pairs(flat) for flat in cast("list[list[bytes]]", found))
        return (
            {k.decode(): v for k, v in seeks.items()},
            {k.decode(): float(v) for k, v in seen.items()},
            {k.decode(): float(v) for k, v in free.items()},
        )

    async def seekers(self, keys: list[str], limits: list[int], day: str) -> list[Seeker]:
        """Per bot (in order), what the matchmaker reads of it, in one script: how many games
        it plays and has played on ``day``, and, where it plays fewer than its limit (in
        ``limits``), its account (None: gone) with its last opponents and whether it sat
        first (a bot at its limit is not read: it is not paired)."""
        if not keys:
            return []
        names = [n for k in keys for n in (_bot(k), f"{P}:playing:{k}", f"{P}:day:{k}:{day}")]
        async with self.patience.bounded():
            found = cast("list[bytes | int | None]", await self._seekers(keys=names, args=limits))
        seekers = []
        for i in range(0, len(found), 5):
            account, opponents, first, playing, today = found[i : i + 5]
            seekers.append(
                Seeker(
                    cast("bytes | None", account),
                    cast(bytes, opponents) or b"[]",
                    first == b"1",
                    int(cast(int, playing)),
                    int(cast(bytes, today)) if today else 0,
                )
            )
        return seekers

    async def games_today(self, key: str, day: str) -> int:
        async with self.patience.bounded():
            found = await self.redis.get(f"{P}:day:{key}:{day}")
        return int(cast(bytes, found)) if found else 0

    async def take(self, game_id: str, blob: bytes, day: str, seats: list[tuple[str, int]]) -> bool:
        """Seat a table (``scripts.TAKE``): ``seats`` are its bots' keys and how many games each
        may play at once."""
        keys = [self.POOL, self.GAMES, self.FREE]
        args: list[str | bytes | int] = [game_id, blob, 2 * 24 * 3600]
        for key, concurrent in seats:
            keys += [f"{P}:playing:{key}", f"{P}:day:{key}:{day}"]
            args += [key, concurrent]
        async with self.patience.bounded():
            return bool(await self._take(keys=keys, args=args))

    async def lock(self, holder: str, ttl_ms: int) -> bool:
        """The matchmaker's lock: taken, or already this holder's (then renewed)."""
        async with self.patience.bounded():
            return bool(await self._lock(keys=[self.LOCK], args=[holder, ttl_ms]))

    # -- bots' webhooks --------------------------------------------------------------------

    async def record_call(self, key: str, call: bytes, ok: bool) -> int:
        """One webhook call of the bot, kept among its latest and counted: the failures in a
        row that it ends (0 after a success)."""
        calls, stats = f"{P}:hookcalls:{key}", f"{P}:hookstats:{key}"
        async with self.patience.bounded(), self.redis.pipeline(transaction=False) as pipe:
            pipe.lpush(calls, call)
            pipe.ltrim(calls, 0, CALLS_KEPT - 1)
            pipe.hincrby(stats, "calls", 1)
            if ok:
                pipe.hset(stats, "streak", 0)
            else:
                pipe.hincrby(stats, "failures", 1)
                pipe.hincrby(stats, "streak", 1)
            done = await pipe.execute()
        return 0 if ok else int(done[-1])

    async def calls(self, key: str) -> tuple[list[bytes], dict[str, int]]:
        """The bot's latest webhook calls, newest first, and its counts."""
        async with self.patience.bounded():
            latest = await self.redis.lrange(f"{P}:hookcalls:{key}", 0, CALLS_KEPT - 1)
            stats = await self.redis.hgetall(f"{P}:hookstats:{key}")
        counts = {k.decode(): int(v) for k, v in cast("dict[bytes, bytes]", stats).items()}
        return list(cast("list[bytes]", latest)), counts

    async def forgive_timeouts(self, key: str) -> None:
        """The bot's league games in a row a deadline decided in start again from none."""
        async with self.patience.bounded():
            if await self.redis.hexists(_bot(key), "streak"):
                await self.redis.hset(_bot(key), "streak", 0)

    async def reset_streak(self, key: str) -> None:
        async with self.patience.bounded():
            await self.redis.hset(f"{P}:hookstats:{key}", "streak", 0)

    async def keep_entrant_token(self, key: str, tournament_id: str, token: str) -> None:
        async with self.patience.bounded():
            await self.redis.hset(f"{P}:entrant:{key}", tournament_id, token)

    async def drop_entrant_tokens(self, key: str) -> None:
        async with self.patience.bounded():
            await self.redis.delete(f"{P}:entrant:{key}")

    async def entrant_tokens(self, key: str) -> dict[str, str]:
        async with self.patience.bounded():
            found = await self.redis.hgetall(f"{P}:entrant:{key}")
        return {k.decode(): v.decode() for k, v in cast("dict[bytes, bytes]", found).items()}

    async def _load(self, key: str) -> tuple[str, bytes] | None:
        async with self.patience.bounded():
            found = await self.shared.execute("HMGET", key, "v", "blob")
            version, blob = cast("list[bytes | None]", found)
        if blob is None:
            return None
        return (version or b"").decode(), blob
