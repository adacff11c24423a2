"""Hearing commits of the games a process serves, on shard channels (``SSUBSCRIBE``).

The commit script publishes ``<game id> <newest event id>`` with ``SPUBLISH`` on the game's
own channel, ``{game:<id>}:commits``, which lives in the game's slot. A process subscribes to
a game's channel only while it serves someone waiting on that game (and a little after), so
what it hears follows the games it serves, not the platform's commit rate; on a cluster, a
shard message stays on the primary of its slot (a classic ``PUBLISH`` goes to every node).

One connection per primary (one on a single server) carries every channel of that primary's
games, in RESP2, parsed in the loop's own callback as it arrives (``TakenOver``). Waiters never
hold a connection: the service wakes them from what is heard here.

A channel stops being heard, and ``lost(game id)`` says so, when its connection ends (Redis
stalls or goes away: a PING unanswered for ``timeout_s`` ends it too), when its slot moves to
another primary (the server then ends the subscription itself: an ``sunsubscribe`` nobody
asked for), or when the process lets it go. Subscribing again goes where the slot table says,
and follows a ``MOVED`` to the slot's new primary.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.exceptions import AskError, ConnectionError, ResponseError, TimeoutError

from ._private import write
from .availability import AVAILABILITY
from .cluster import ClusterConnection
from .connection import SharedConnection, TakenOver

__all__ = ["Hearing", "channel_of"]

log = logging.getLogger("referee")


def channel_of(game_id: str) -> str:
    """A game's commits channel, in the game's own slot (its keys' hash tag)."""
    return f"{{game:{game_id}}}:commits"


def _game_of(channel: bytes) -> str:
    return channel.decode()[6:].partition("}")[0]  # "{game:" <id> "}:commits"


class _Subscriber(TakenOver):
    """One connection to one primary, subscribed to the channels of the games heard there.

    ``asked`` holds the commands whose replies are still to come, in order (a reply settles
    the oldest); messages, and an ``sunsubscribe`` the server sends of itself when a slot
    moves away, are told as they come.
    """

    def __init__(self, hearing: Hearing, pool: ConnectionPool) -> None:
        super().__init__()
        self.hearing = hearing
        self.pool = pool
        self.connection: AbstractConnection | None = None
        self.connecting: asyncio.Future[None] | None = None
        self.asked: deque[tuple[bytes, bytes, asyncio.Future[None] | None]] = deque()
        self.channels: set[bytes] = set()  # confirmed
        self.pinged: float | None = None
        self.watchdog: asyncio.TimerHandle | None = None

    async def connected(self) -> None:
        """The connection, made by one attempt that every subscription finding none waits
        for (a caller giving up leaves the attempt to the others)."""
        if self.connection is not None:
            return
        if self.connecting is None:
            self.connecting = asyncio.ensure_future(self._connect())
            self.connecting.add_done_callback(self._attempted)
        await asyncio.shield(self.connecting)

    def _attempted(self, attempt: asyncio.Future[None]) -> None:
        self.connecting = None
        if not attempt.cancelled():
            attempt.exception()  # told to every waiter

    async def _connect(self) -> None:
        timeout_s = self.hearing.timeout_s
        # RESP2 whatever the URL asks: messages come as plain replies
        connection = self.pool.connection_class(**{**self.pool.connection_kwargs, "protocol": 2})
        try:
            async with asyncio.timeout(timeout_s):
                await connection.connect()
        except BaseException as error:
            await connection.disconnect(nowait=True)
            if isinstance(error, builtins.TimeoutError):  # asyncio.timeout's
                raise TimeoutError(f"Redis did not answer within {timeout_s:g} s") from None
            raise
        self.take_over(connection)
        self.connection = connection
        self.pinged = None
        self._watch(connection)
        AVAILABILITY.answers()

    def send(self, kind: bytes, channel: bytes, future: asyncio.Future[None] | None) -> None:
        connection = self.connection
        if connection is None:
            if future is not None and not future.done():
                future.set_exception(ConnectionError("the hearing connection was lost"))
            return
        self.asked.append((kind, channel, future))
        write(connection, (kind, channel) if channel else (kind,))

    async def subscribe(self, channel: bytes) -> None:
        """Returns once Redis confirmed the subscription; raises its refusal (``MOVED``),
        a lost connection, or ``TimeoutError`` after the store's timeout."""
        await self.connected()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.send(b"SSUBSCRIBE", channel, future)
        try:
            async with asyncio.timeout(self.hearing.timeout_s):
                await future
        except builtins.TimeoutError:  # asyncio.timeout's
            error = TimeoutError(f"Redis did not confirm SSUBSCRIBE in {self.hearing.timeout_s} s")
            self.broken(error)
            raise error from None

    def unsubscribe(self, channel: bytes) -> None:
        if channel in self.channels:
            self.channels.discard(channel)
            self.send(b"SUNSUBSCRIBE", channel, None)

    def reply(self, reply: Any) -> None:
        if isinstance(reply, list):
            kind = reply[0]
            if kind == b"smessage":
                self.hearing.told(reply[2])
                return
            if kind == b"sunsubscribe" and not (
                self.asked and self.asked[0][0] == b"SUNSUBSCRIBE" and self.asked[0][1] == reply[1]
            ):
                # not asked for: the slot moved away (or the server dropped it)
                if reply[1] in self.channels:
                    self.channels.discard(reply[1])
                    self.hearing.dropped(reply[1])
                return
        if not self.asked:
            self.broken(ConnectionError(f"a reply that nothing asked for: {reply!r}"))
            return
        asked, channel, future = self.asked.popleft()
        if asked == b"PING":
            self.pinged = None
            AVAILABILITY.answers()
        elif asked == b"SSUBSCRIBE" and not isinstance(reply, ResponseError):
            self.channels.add(channel)
        if future is not None and not future.done():
            if isinstance(reply, ResponseError):
                future.set_exception(reply)
            else:
                future.set_result(None)

    def broken(self, error: BaseException) -> None:
        connection = self.connection
        if connection is None:
            return
        self.connection = None
        if self.watchdog is not None:
            self.watchdog.cancel()
        if not isinstance(error, ConnectionError | TimeoutError):
            error = ConnectionError(f"the hearing connection failed: {error!r}")
        asked, self.asked = self.asked, deque()
        for _, _, future in asked:
            if future is not None and not future.done():
                future.set_exception(error)
        channels, self.channels = self.channels, set()
        self.hearing.lost_connection(channels, error)
        self.hearing.spawn(connection.disconnect(nowait=True))

    def _watch(self, connection: AbstractConnection) -> None:
        """Every ``timeout_s / 2``: a PING; one unanswered for ``timeout_s`` ends the
        connection (a Redis that stalls sends no messages either)."""
        if connection is not self.connection:
            return
        loop = asyncio.get_running_loop()
        timeout_s = self.hearing.timeout_s
        if self.pinged is None:
            self.pinged = loop.time()
            self.send(b"PING", b"", None)
        elif loop.time() - self.pinged >= timeout_s:
            self.broken(TimeoutError(f"Redis did not answer a PING within {timeout_s:g} s"))
            return
        self.watchdog = loop.call_later(timeout_s / 2, self._watch, connection)

    def close(self) -> None:
        self.broken(ConnectionError("the hearing connection was closed"))


class Hearing:
    """The shard channels a process hears: ``subscribe(game id)`` (returns once confirmed),
    ``unsubscribe``; every message goes to ``heard(game id, event id)``, every channel no
    longer heard to ``lost(game id)`` (both set by the service)."""

    def __init__(self, shared: SharedConnection | ClusterConnection, timeout_s: float) -> None:
        self.shared = shared
        self.timeout_s = timeout_s
        self.heard: Callable[[str, str], None] = lambda game_id, event_id: None
        self.lost: Callable[[str], None] = lambda game_id: None
        self._subscribers: dict[str, _Subscriber] = {}  # primary's address -> its connection
        self._where: dict[str, _Subscriber] = {}  # game id -> the connection that hears it
        self._tasks: set[asyncio.Task[Any]] = set()
        self._deaf = False  # a connection with channels was lost: logged once until heard again

    def subscribed(self, game_id: str) -> bool:
        return game_id in self._where

    @property
    def games(self) -> int:
        """How many games' channels are subscribed now."""
        return len(self._where)

    async def subscribe(self, game_id: str) -> None:
        """Hear the game's commits from now on; returns once Redis confirmed it. Raises if
        Redis does not answer (``ConnectionError``, ``TimeoutError``)."""
        channel = channel_of(game_id).encode()
        for _ in range(5):
            subscriber = await self._subscriber_for(channel)
            try:
                await subscriber.subscribe(channel)
            except AskError as moved:  # MOVED (a MovedError is an AskError): the slot moved
                assert isinstance(self.shared, ClusterConnection)
                self.shared.moved(moved)
                continue
            except (ConnectionError, TimeoutError):
                if isinstance(self.shared, ClusterConnection):
                    self.shared.forget_slots()  # the primary may have failed over
                raise
            except ResponseError as refused:  # an ACL, a proxy: waiters look now and then
                raise ConnectionError(f"Redis refused SSUBSCRIBE: {refused}") from None
            if channel not in subscriber.channels:  # lost again before this task resumed
                continue
            self._where[game_id] = subscriber
            if self._deaf:
                self._deaf = False
                log.warning("hearing commits again")
            return
        raise ConnectionError(f"the cluster kept redirecting the channel of game {game_id}")

    def unsubscribe(self, game_id: str) -> None:
        subscriber = self._where.pop(game_id, None)
        if subscriber is not None:
            subscriber.unsubscribe(channel_of(game_id).encode())

    async def _subscriber_for(self, channel: bytes) -> _Subscriber:
        shared = self.shared
        if isinstance(shared, ClusterConnection):
            address, pool = await shared.primary_of(channel)
        else:
            address, pool = "", shared.pool
        subscriber = self._subscribers.get(address)
        if subscriber is None:
            subscriber = self._subscribers[address] = _Subscriber(self, pool)
        return subscriber

    # -- told by the connections ------------------------------------------------------------

    def told(self, payload: bytes) -> None:
        game_id, _, event_id = payload.decode().partition(" ")
        self.heard(game_id, event_id)

    def dropped(self, channel: bytes) -> None:
        """A channel the server unsubscribed (its slot moved away)."""
        game_id = _game_of(channel)
        if self._where.pop(game_id, None) is not None:
            self.lost(game_id)

    def lost_connection(self, channels: set[bytes], error: BaseException) -> None:
        games = [g for g in map(_game_of, channels) if self._where.pop(g, None) is not None]
        if games and not self._deaf and not str(error).endswith("was closed"):
            self._deaf = True
            log.warning(
                "not hearing commits of %d games (%s): their waiters look at them again",
                len(games),
                error,
            )
        for game_id in games:
            self.lost(game_id)

    def spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        for subscriber in list(self._subscribers.values()):
            subscriber.close()
        self._subscribers.clear()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=self.timeout_s)
