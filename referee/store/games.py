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

The global sorted set ``referee:games`` (game id by its creation time) lists the games
(``listing``). The global sorted set ``referee:deadlines`` (game id by its earliest
deadline) only tells the sweepers where to look; it is a hint outside the game's slot,
never the truth.

Every commit also publishes ``<game id> <newest event id>`` on the channel
``referee:commits``, from inside the script, so no commit goes untold: each process listens on
one connection and wakes its own waiting seats, instead of holding a blocked XREAD (and a
connection) per waiting seat.

Loads and commits, every decision's path, go on one connection that all of a process's
requests share (``referee.store.connection``); everything else uses redis-py's pools.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

from redis.asyncio import ConnectionPool, Redis, RedisCluster
from redis.exceptions import ConnectionError, NoScriptError, RedisClusterException, ResponseError
from redis.typing import KeyT, StreamIdT

from .cluster import ClusterConnection, ClusterSent
from .connection import Patience, Sent, SharedConnection, subscribe
from .limits import live_key
from .listing import Listed, listed, listing_commands, tournament_games

__all__ = [
    "COMMITS",
    "DEADLINES",
    "EVENTS_PER_READ",
    "GAMES",
    "SCRIPT_COMMANDS",
    "Commit",
    "GameKeys",
    "GameStore",
    "Stored",
]

DEADLINES = "referee:deadlines"
GAMES = "referee:games"
COMMITS = "referee:commits"
EVENTS_PER_READ = 500

# Check the version, then write document, decisions and events together; if the version moved,
# answer with the game as it is. The newest event id is published for the listening processes.
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
  redis.call('PUBLISH', '@COMMITS@', ARGV[8] .. ' ' .. ids[#ids])
end
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
  redis.call('EXPIRE', KEYS[3], math.min(ttl, tonumber(ARGV[5])))
end
return ids
""".replace("@COMMITS@", COMMITS)
#: The commands the commit script calls inside Redis; the referee never sends them itself on
#: a game's path, so command statistics without them count the commands it sent.
SCRIPT_COMMANDS = (
    *("hget", "hset", "rpush", "time", "xadd", "expire", "publish"),
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
    a game's commands travel: reads and commits on one shared connection, long waits on a
    pool of their own, the commits channel on a connection of its own."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        blocking: Redis | RedisCluster | None = None,
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
        # long-polls and event streams wait in XREAD BLOCK on a pool of their own, so
        # waiting clients never take the connections that decisions need
        self.blocking = blocking or redis
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
            commands += listing_commands(GAMES, game_id, listed_at)
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
        if deadline is None:
            return commit, ("ZREM", DEADLINES, game_id)
        return commit, ("ZADD", DEADLINES, deadline, game_id)

    async def aclose(self) -> None:
        await self.shared.aclose()

    async def listed(
        self, before: float | None, limit: int, tournament: str = ""
    ) -> tuple[list[Listed], str | None]:
        """A page of games created before ``before`` (all when None), newest first, and the
        next page's cursor (``store.listing``); ``tournament``: only that tournament's."""
        index = tournament_games(tournament) if tournament else GAMES
        async with self.patience.bounded():
            return await listed(self.redis, index, lambda g: GameKeys(g).doc, before, limit)

    async def decisions(self, game_id: str) -> list[bytes]:
        async with self.patience.bounded():
            # redis-py's types allow decoded replies too: this client's are bytes
            return cast("list[bytes]", await self.redis.lrange(GameKeys(game_id).decisions, 0, -1))

    async def events_after(
        self, game_id: str, last_id: str, block_ms: int | None
    ) -> list[tuple[str, str]]:
        """Events after ``last_id`` ("0" for all), as (event id, event JSON), at most
        ``EVENTS_PER_READ``; waiting up to ``block_ms`` if there are none."""
        async with self.patience.bounded((block_ms or 0) / 1000):
            # redis-py's types allow RESP3's dict too: this client speaks RESP2
            # ([[stream, [(id, fields)]]])
            reply = cast(
                "list[list[Any]]",
                await self.blocking.xread(
                    {GameKeys(game_id).events: last_id}, count=EVENTS_PER_READ, block=block_ms
                ),
            )
        return [(i.decode(), fields[b"e"].decode()) for i, fields in reply[0][1]] if reply else []

    async def listen(
        self, heard: Callable[[str, str], None], subscribed: Callable[[], None]
    ) -> None:
        """Every commit of any replica, told to ``heard(game id, newest event id)`` as it
        arrives, once ``subscribed()`` was called, on a connection of its own
        (``connection.subscribe``); returns never, raises when the connection ends."""

        def message(payload: bytes) -> None:
            game_id, _, event_id = payload.decode().partition(" ")
            heard(game_id, event_id)

        if isinstance(self.shared, ClusterConnection):
            # PUBLISH on a cluster reaches every node: any primary will do (another each
            # time the caller subscribes anew)
            pool = self.shared.subscription_pool()
        else:
            assert isinstance(self.blocking, Redis)  # no cluster: no cluster client
            pool = self.blocking.connection_pool
        await subscribe(pool, COMMITS, message, subscribed, self.timeout_s)

    async def wait_any(self, positions: dict[str, str], block_ms: int) -> None:
        """Wait until any of several games has an event after its position (game id -> event
        id), at most ``block_ms``. One XREAD over their streams; on a Redis Cluster, whose
        games live in different slots, a short sleep stands in for it."""
        streams: dict[KeyT, StreamIdT] = {
            GameKeys(game_id).events: last for game_id, last in positions.items()
        }
        try:
            async with self.patience.bounded(block_ms / 1000):
                await self.blocking.xread(streams, count=1, block=block_ms)
        except (ResponseError, RedisClusterException) as exc:
            # a cluster client refuses keys of several slots itself, a single Redis server
            # in cluster mode answers CROSSSLOT
            if isinstance(exc, ResponseError) and "CROSSSLOT" not in str(exc):
                raise
            await asyncio.sleep(min(block_ms / 1000, 0.05))

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """Games whose earliest deadline hint has passed (a hint: the game itself decides)."""
        async with self.patience.bounded():
            # redis-py's types allow decoded replies too: this client's are bytes
            ids = cast(
                "list[bytes]",
                await self.redis.zrangebyscore(DEADLINES, "-inf", now, start=0, num=limit),
            )
        return [i.decode() for i in ids]

    async def forget_deadline(self, game_id: str) -> None:
        """Drop a game's deadline hint (it has none left, or is gone)."""
        async with self.patience.bounded():
            await self.redis.zrem(DEADLINES, game_id)

    async def ping(self) -> None:
        """On the shared connection (its watchdog keeps the deadline): Redis answers or not,
        whatever the pools' connections are doing."""
        await self.shared.execute("PING")
