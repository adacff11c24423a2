"""A game's keys in Redis, and the one atomic write (the commit script) every change goes
through.

All keys of a game share the hash tag ``{game:<id>}`` so the game lives in one cluster slot:

- ``{game:<id>}:doc``        hash: ``v`` (version), ``blob`` (the game document, msgpack) and
                             ``e`` (the id of the newest event)
- ``{game:<id>}:decisions``  list: the record's decisions, JSON, in order
- ``{game:<id>}:events``     stream: public events, field ``e`` (JSON)

Every commit sets the three keys' time to live, so every game expires: a running one once
nobody has changed it for the idle time, a finished one after the retention.

A request loads the game, and the event id a long-poll waits after, with one HMGET. A commit
whose version moved gets the game as it now is in the same reply, so a lost race costs no
extra read. Every commit adds at least one event, so the newest event id also names the
version it was written with. A retried decision is answered from the record.

The sorted sets ``referee:games:{…}`` (game id by its creation time) list the games
(``listing``, a page merged from them all). The sorted sets ``referee:deadlines:{…}`` (game
id by its earliest deadline) only tell the sweepers where to look; a hint, never the truth.
Each is one set split in 16 parts, one per range of slots (``cluster.spread``), a game's
entries in the part whose range holds its slot, so that no primary holds all of either, and a
commit's deadline hint most often goes to the game's own primary. (``referee:games`` and
``referee:deadlines``, the sets of older versions, are still read until they empty.)

Every commit also publishes ``<game id> <newest event id>`` with ``SPUBLISH`` on the game's own
shard channel ``{game:<id>}:commits``, from inside the script, so no commit goes untold: a
process subscribes to the channels of the games it serves waiters on (``store.hearing``) and
wakes them from what it hears, instead of holding a blocked XREAD (and a connection) per
waiting seat.

Loads and commits, every decision's path, go on one connection that all of a process's
requests share (``referee.store.connection``); everything else uses redis-py's pools.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

from redis.asyncio import ConnectionPool, Redis, RedisCluster
from redis.exceptions import ConnectionError, NoScriptError, ResponseError

from .cluster import ClusterConnection, ClusterSent, part_for, spread
from .connection import Patience, Sent, SharedConnection
from .hearing import Hearing
from .limits import live_key
from .listing import Listed, listed, listing_commands, tournament_games

__all__ = [
    "DEADLINES",
    "EVENTS_PER_READ",
    "GAMES",
    "OLD_DEADLINES",
    "OLD_GAMES",
    "SCRIPT_COMMANDS",
    "Commit",
    "GameKeys",
    "GameStore",
    "Stored",
]

DEADLINES_PREFIX, SWEEPING_PREFIX = "referee:deadlines:", "referee:sweeping:"
DEADLINES = spread(DEADLINES_PREFIX.rstrip(":"))
GAMES = spread("referee:games")
#: the single sets of older versions: read (listed, swept) until their entries are gone
OLD_DEADLINES, OLD_GAMES = "referee:deadlines", "referee:games"
EVENTS_PER_READ = 500

# Check the version, then write document, decisions and events together; if the version moved,
# answer with the game as it is. The newest event id is published on the game's shard channel
# (in its slot) for the processes that hear it.
# A commit's events begin a millisecond of their own, after the newest id (Redis numbers the
# events of one millisecond 0, 1, ...), unless none of them is told to anyone (ARGV[9] "1", a
# hidden step): those follow the newest id in its millisecond. So the ids a stream tells never
# count, nor move with, the events it does not tell.
_COMMIT = """
local v = redis.call('HGET', KEYS[1], 'v') or ''
if v ~= ARGV[1] then
  return {0, v, redis.call('HGET', KEYS[1], 'blob'), redis.call('HGET', KEYS[1], 'e')}
end
local last = redis.call('HGET', KEYS[1], 'e')
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'blob', ARGV[3])
local i = 10
for _ = 1, tonumber(ARGV[6]) do redis.call('RPUSH', KEYS[2], ARGV[i]); i = i + 1 end
local at = '*'
if last then
  local ms = tonumber(string.match(last, '^%d+'))
  if ARGV[9] ~= '1' then
    local now = redis.call('TIME')
    ms = math.max(ms + 1, tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
  end
  at = string.format('%.0f', ms) .. '-*'
end
local ids = {1}
for _ = 1, tonumber(ARGV[7]) do
  ids[#ids + 1] = redis.call('XADD', KEYS[3], at, 'e', ARGV[i]); i = i + 1
end
if #ids > 1 then
  redis.call('HSET', KEYS[1], 'e', ids[#ids])
  redis.call('SPUBLISH', '{game:' .. ARGV[8] .. '}:commits', ARGV[8] .. ' ' .. ids[#ids])
end
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
  redis.call('EXPIRE', KEYS[3], math.min(ttl, tonumber(ARGV[5])))
end
return ids
"""
# One part of the deadlines' set, swept by one process per interval: the first to take the
# part's lease for the interval (``ARGV[2]`` ms; 0: no lease) reads its due games, the others
# find none until it expires. The lease shares the part's hash tag (its slot).
_SWEEP = """
if ARGV[2] ~= '0' and not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[2]) then
  return {}
end
return redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
"""
# Drop a game's deadline hint (ARGV[1]) from its part (KEYS[1]) if it was due by ARGV[2].
_FORGET = """
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if at and tonumber(at) <= tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""
#: The commands the commit script calls inside Redis; the referee never sends them itself on
#: a game's path, so command statistics without them count the commands it sent.
SCRIPT_COMMANDS = (
    *("hget", "hset", "rpush", "time", "xadd", "expire", "spublish"),
    # the limits' scripts (``store.limits``); ZADD and ZREM are also sent on their own
    *("incrby", "hgetall", "hvals", "hincrby", "hdel", "zremrangebyscore", "zcard"),
)


class Commit(NamedTuple):
    """A commit on its way (``GameStore.send_commit``)."""

    keys: GameKeys
    commands: tuple[tuple[Any, ...], ...]
    sent: Sent | ClusterSent | None  # None: not queued yet (no connection when it was made)

    @property
    def queued(self) -> bool:
        return self.sent is not None


class Stored(NamedTuple):
    """A game as one read found it: written together, so the three agree."""

    version: str  # "" for no game
    blob: bytes | None  # the game document; None for no game
    last_event_id: str  # "0" if none


class GameKeys:
    """The three keys of one game, under its hash tag."""

    __slots__ = ("decisions", "doc", "events")

    def __init__(self, game_id: str) -> None:
        tag = f"{{game:{game_id}}}"
        self.doc = f"{tag}:doc"
        self.decisions = f"{tag}:decisions"
        self.events = f"{tag}:events"

    def all(self) -> list[str]:
        return [self.doc, self.decisions, self.events]


class GameStore:
    """Where games are kept: loads, commits, records, event streams, the deadline hints, and
    the commits channel. It decides nothing (the service decides what to write); it owns how
    a game's commands travel: reads and commits on one shared connection, the games' commits
    channels on one connection per primary (``hearing``), the rest on redis-py's pool."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        *,
        timeout_s: float = 10,
        cluster_seed: ConnectionPool | None = None,
    ) -> None:
        # a deadline per store operation (per command on the shared connection), rather than
        # redis-py's per-socket-call timeouts (a task per write), which the service switches off
        self.timeout_s = timeout_s
        #: the deadline of each operation, and the short while after a timeout in which the
        #: others fail at once, shared by every client of the store
        self.patience = Patience(timeout_s)
        self.redis = redis
        # a game's reads and commits, the path every decision takes, share one connection,
        # which keeps the deadline of each command itself
        # (on a cluster, one per primary, reached with ``cluster_seed``'s settings:
        # ``store.cluster``)
        self.shared: SharedConnection | ClusterConnection
        if cluster_seed is not None:
            self.shared = ClusterConnection(cluster_seed, timeout_s, self.patience)
        else:
            assert isinstance(redis, Redis)  # a cluster client comes with its cluster_seed
            self.shared = SharedConnection(redis.connection_pool, timeout_s, self.patience)
        #: the commits channels of the games this process serves waiters on
        self.hearing = Hearing(self.shared, timeout_s)
        self._commit_sha = hashlib.sha1(_COMMIT.encode()).hexdigest()
        #: the server, as log lines name it (``store.shown_url``: no password)
        self.where = "Redis"

    async def load(self, game_id: str) -> Stored:
        """One HMGET: the version, the document, and the id of the newest event.

        The three are written together by the commit, so no event slips between them.
        """
        keys = GameKeys(game_id)
        read = ("HMGET", keys.doc, "v", "blob", "e")
        try:
            found = await self.shared.execute(*read)
        except ConnectionError:  # the shared connection was lost: once more on a new one
            found = await self.shared.execute(*read)
        return await self._stored(keys, *found)

    async def _stored(
        self, keys: GameKeys, version: bytes | None, blob: bytes | None, last: bytes | None
    ) -> Stored:
        if last is None and blob is not None:  # a game stored before ``e`` was kept
            async with self.patience.bounded():
                # redis-py's types allow decoded replies too: this client's are bytes
                newest = cast(
                    "list[tuple[bytes, dict[bytes, bytes]]]",
                    await self.redis.xrevrange(keys.events, count=1),
                )
            last = newest[0][0] if newest else None
        return Stored(version.decode() if version else "", blob, last.decode() if last else "0")

    def send_commit(
        self,
        game_id: str,
        expected: str,
        version: str,
        blob: bytes,
        *,
        decisions: Sequence[bytes] = (),
        events: Sequence[bytes] = (),
        untold: bool = False,
        ttl: int = 0,
        events_ttl: int = 0,
        deadline: float | bool | None = None,
        finished_for: str = "",
        listed_at: float | None = None,
        tournament: tuple[str, int] | None = None,
    ) -> Commit:
        """The atomic write and the deadline hint (a time, None to drop it, False to leave it
        as it is), queued on the shared connection now, behind every command queued before it
        (a later command on it sees what this one wrote), in one round trip; ``committed``
        gives its outcome. Queued later if the connection is being made (``Commit.queued`` is
        False). ``untold``: no event of the commit is told to anyone (their ids then follow
        the newest one, so that the ids told never count them).

        ``ttl`` > 0 makes the game's keys expire that long after this write (an idle game, a
        finished one); its event stream goes after ``events_ttl`` (at most ``ttl``; a finished
        game: the record keeps everything the stream told). ``finished_for``: the owner whose
        live games no longer count this one (in the same write). ``listed_at``: a new game,
        listed (``listed``) at that time of creation in the same write; a game of that id
        listed already keeps its place. ``tournament``: (id, time to live) of the tournament
        whose table a new game is, listed among its games too.
        """
        if not events:
            # readers take the newest event id as the version's name (see the module's doc)
            raise ValueError("every change of a game is told by at least one event")
        keys = GameKeys(game_id)
        events_ttl = events_ttl if events_ttl > 0 else ttl
        args: list[Any] = [expected, version, blob, ttl, events_ttl]
        args += [len(decisions), len(events), game_id, "1" if untold else "0"]
        args += decisions
        args += events
        commands = self._commit_commands(keys, args, game_id, deadline)
        if finished_for:
            commands += (("ZREM", live_key(finished_for, "games"), game_id),)
        if listed_at is not None:
            commands += listing_commands(part_for(GAMES, keys.doc), game_id, listed_at)
            if tournament is not None:
                index = tournament_games(tournament[0])
                commands += listing_commands(index, game_id, listed_at, ttl=tournament[1])
        return Commit(keys, commands, self.shared.send(*commands))

    async def committed(self, commit: Commit) -> list[str] | Stored:
        """The outcome of a commit sent: the new events' ids, or, if the version had moved,
        the game as it now is (nothing written)."""
        sent, reloaded, reconnected = commit.sent, False, False
        while True:
            try:
                if sent is not None:  # the first time: as sent; after a failure, anew
                    first, sent = sent, None
                    # sent on this same shared connection (send_commit): of its kind
                    replies = await self.shared.replies(first)  # type: ignore[arg-type]
                else:
                    replies = await self.shared.execute_many(*commit.commands)
                for each in replies:
                    if isinstance(each, ResponseError):
                        raise each
                reply = replies[0]
                if reply[0] == 0:
                    return await self._stored(commit.keys, *(reply[1:] + [None] * 3)[:3])
                return [i.decode() for i in reply[1:]]
            except NoScriptError:  # a fresh or flushed server: load once, then go on
                if reloaded:
                    raise
                reloaded = True
                async with self.patience.bounded():
                    await self.redis.script_load(_COMMIT)
            except ConnectionError:
                # the shared connection was lost with the commit on it; whether Redis ran it is
                # unknown, and sending it again on a new one is safe: the commit checks the
                # version it builds on, so run already, it answers with the game as it now is
                if reconnected:
                    raise
                reconnected = True

    def _commit_commands(
        self, keys: GameKeys, args: list[Any], game_id: str, deadline: float | bool | None
    ) -> tuple[tuple[Any, ...], ...]:
        # EVALSHA directly: a pipelined Script object would add a SCRIPT EXISTS trip
        commit = ("EVALSHA", self._commit_sha, 3, *keys.all(), *args)
        if deadline is False:  # the deadline hint did not change: one command
            return (commit,)
        deadlines = part_for(DEADLINES, keys.doc)
        if deadline is None:
            return commit, ("ZREM", deadlines, game_id)
        return commit, ("ZADD", deadlines, deadline, game_id)

    async def aclose(self) -> None:
        await self.hearing.aclose()
        await self.shared.aclose()

    async def listed(
        self, before: float | None, limit: int, tournament: str = ""
    ) -> tuple[list[Listed], str | None]:
        """A page of games created before ``before`` (all when None), newest first, and the
        next page's cursor (``store.listing``); ``tournament``: only that tournament's."""
        index = tournament_games(tournament) if tournament else (*GAMES, OLD_GAMES)
        async with self.patience.bounded():
            return await listed(self.redis, index, lambda g: GameKeys(g).doc, before, limit)

    async def decisions(self, game_id: str) -> list[bytes]:
        async with self.patience.bounded():
            # redis-py's types allow decoded replies too: this client's are bytes
            return cast("list[bytes]", await self.redis.lrange(GameKeys(game_id).decisions, 0, -1))

    async def events_after(self, game_id: str, last_id: str) -> list[tuple[str, str]]:
        """Events after ``last_id`` ("0" for all), as (event id, event JSON), at most
        ``EVENTS_PER_READ``; never waits (a waiter hears the game's commits instead)."""
        async with self.patience.bounded():
            # redis-py's types allow RESP3's dict too: this client speaks RESP2
            # ([[stream, [(id, fields)]]])
            reply = cast(
                "list[list[Any]]",
                await self.redis.xread({GameKeys(game_id).events: last_id}, count=EVENTS_PER_READ),
            )
        return [(i.decode(), fields[b"e"].decode()) for i, fields in reply[0][1]] if reply else []

    async def due(self, now: float, limit: int = 100, lease_s: float = 0) -> list[str]:
        """Games whose earliest deadline hint has passed (a hint: the game itself decides),
        from every part of the deadlines' set: one round trip (per primary, on a cluster).
        With ``lease_s``, the processes take the parts in turn: a part whose lease another
        process took less than ``lease_s`` ago gives nothing (it sweeps them). A hint found
        in the single set of older versions moves to its part."""
        lease_ms = max(1, round(lease_s * 1000)) if lease_s > 0 else 0
        reads: list[tuple[Any, ...]] = []
        for key in DEADLINES:
            lease = key.replace(DEADLINES_PREFIX, SWEEPING_PREFIX)
            reads.append(("EVAL", _SWEEP, 2, lease, key, now, lease_ms, limit))
        old_read = ("ZRANGEBYSCORE", OLD_DEADLINES, "-inf", now, "WITHSCORES", "LIMIT", 0, limit)
        reads.append(old_read)
        *parts, old = await self.shared.execute_many(*reads)
        due: dict[str, None] = {}
        for reply in (*parts, old):
            if isinstance(reply, ResponseError):
                raise reply
        for reply in parts:
            due.update((i.decode(), None) for i in reply)
        moves: list[tuple[Any, ...]] = []
        # RESP2 gives member, score, member, …; RESP3 (as a URL may ask) pairs
        pairs = old if old and isinstance(old[0], list) else zip(old[::2], old[1::2], strict=True)
        for member, score in pairs:
            game_id = member.decode()
            due[game_id] = None
            part = part_for(DEADLINES, GameKeys(game_id).doc)
            moves += [("ZADD", part, score, game_id), ("ZREM", OLD_DEADLINES, game_id)]
        if moves:
            await self.shared.execute_many(*moves)
        return list(due)

    async def forget_deadline(self, game_id: str, due: float) -> None:
        """Drop a game's deadline hint (it has none left, or is gone) if it is still one that
        was due at ``due``: a commit meanwhile may have hinted a deadline the game has now."""
        part = part_for(DEADLINES, GameKeys(game_id).doc)
        await self.shared.execute("EVAL", _FORGET, 1, part, game_id, due)

    async def hint_deadline(self, game_id: str, at: float) -> None:
        """Hint the game's deadline as ``at``: no later than its first deadline (which never
        moves earlier), so never after a commit's own hint either."""
        await self.shared.execute("ZADD", part_for(DEADLINES, GameKeys(game_id).doc), at, game_id)

    async def ping(self) -> None:
        """On the shared connection (its watchdog keeps the deadline): Redis answers or not,
        whatever the pools' connections are doing."""
        await self.shared.execute("PING")
