"""One Redis connection that many tasks' commands share: the hot path's reads and commits.

redis-py lends each command a pooled connection for its whole round trip: a checkout, a
write, a wake-up and a release per command, about 35 µs of the referee's CPU under load
(``benchmarks/results/README.md``). Here every command goes on one connection, and the
commands queued in one turn of the event loop go out in one write, at the start of the next
turn; the replies are read as they come, often several in one read. Redis answers a
connection's commands in order, so the n-th reply is the n-th command's. Each write wakes
Redis, which costs the writer more than the bytes do: under load one write carries the
commits of several games (measured: a tenth less CPU per decision, and no later answers, as
the turn that waits is the one whose requests the replies serve; an earlier measurement, of
code that wrote a commit at once and answered in a slower loop, found decisions waiting a
turn longer).

redis-py connects (AUTH, SELECT, TLS from the URL); then the connection's transport is taken
over (``TakenOver``): its replies are parsed by hiredis in the loop's own callback as bytes
arrive, and each waiting command's future is settled there. A reader task on redis-py's
stream took a turn of the loop more per reply, and its layers of coroutines cost more than
the parse. hiredis also packs the commands (redis-py's asyncio client packs them in Python,
6x slower for a commit). One watchdog per connection, not a timer per command (4 µs each
under uvloop), gives up on a Redis that does not answer.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import hashlib
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from typing import Any, NamedTuple

from hiredis import Reader, pack_command
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import AbstractConnection, BlockingConnectionPool, ConnectionPool
from redis.exceptions import (
    ConnectionError,
    InvalidResponse,
    MaxConnectionsError,
    NoScriptError,
    RedisError,
    ResponseError,
    TimeoutError,
)

from ._private import parse_error, transport_of, write_packed
from .availability import AVAILABILITY, StoreBusy

__all__ = [
    "Commands",
    "Patience",
    "Sent",
    "SharedConnection",
    "SharedScript",
    "TakenOver",
    "WaitingPool",
]


#: what ``Reader.gets()`` gives while a reply is incomplete (RESP3 has a ``False`` of its own)
_INCOMPLETE = object()


class TakenOver(asyncio.Protocol):
    """A protocol that receives what a connected redis-py connection reads from now on, and
    tells each reply, parsed as redis-py would (error replies become its exception classes,
    NOSCRIPT a ``NoScriptError``; values stay bytes), to ``reply``; ``broken`` hears the
    error that ends the connection.

    redis-py has done the handshake and waits for nothing, so nothing of a reply is left in
    its stream. Its stream writer (private: ``store._private``) keeps writing to the same
    transport; the end of the connection is passed on to its stream too, so that
    ``connection.disconnect()`` still closes it and its wait for the close returns.
    """

    _stream: asyncio.BaseProtocol | None = None

    def __init__(self) -> None:
        self.reader = self._reader()

    @staticmethod
    def _reader() -> Reader:
        return Reader(
            protocolError=InvalidResponse, replyError=parse_error, notEnoughData=_INCOMPLETE
        )

    def take_over(self, connection: AbstractConnection) -> None:
        self.reader = self._reader()  # nothing of another connection's bytes
        transport = transport_of(connection)
        self._stream = transport.get_protocol()
        transport.set_protocol(self)

    def reply(self, reply: Any) -> None:
        raise NotImplementedError

    def broken(self, error: BaseException) -> None:
        raise NotImplementedError

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        reader.feed(data)
        try:
            reply = reader.gets()
            while reply is not _INCOMPLETE:
                self.reply(reply)
                reply = reader.gets()
        except Exception as error:  # a broken stream (or its hearer): nothing after it holds
            self.broken(error)

    def connection_lost(self, exc: Exception | None) -> None:
        self.broken(exc or ConnectionError("Redis closed the connection"))
        if self._stream is not None:
            self._stream.connection_lost(exc)


class _Replies(TakenOver):
    """The replies of a shared connection, settled as they arrive."""

    def __init__(self, owner: SharedConnection, connection: AbstractConnection) -> None:
        super().__init__()
        self.owner = owner
        self.connection = connection
        self.paused = False  # the socket's buffer is full: writes wait for resume_writing

    def reply(self, reply: Any) -> None:
        self.owner._answer(self.connection, reply)

    def broken(self, error: BaseException) -> None:
        self.owner._lost(self.connection, error)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self.owner._flush()


class Sent(NamedTuple):
    """Commands queued on a connection: their replies will settle ``futures``, in order."""

    connection: AbstractConnection
    futures: list[asyncio.Future[Any]]


class Commands:
    """``execute`` over ``execute_many``: what both shared connections (one Redis, a
    cluster's primaries) answer alike."""

    async def execute(self, *args: Any) -> Any:
        """One command's reply; an error reply is raised (redis-py's exception classes)."""
        (reply,) = await self.execute_many(args)
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    async def execute_many(self, *commands: tuple[Any, ...]) -> list[Any]:
        raise NotImplementedError


class SharedScript:
    """A Lua script run by its SHA on a shared connection (``EVALSHA``, packed by hiredis,
    no pool), loaded through ``redis`` once where the server lacks it (a fresh or flushed
    server)."""

    __slots__ = ("patience", "redis", "script", "sha", "shared")

    def __init__(
        self, shared: Commands, redis: Redis | RedisCluster, script: str, patience: Patience
    ) -> None:
        self.shared, self.redis, self.script, self.patience = shared, redis, script, patience
        self.sha = hashlib.sha1(script.encode()).hexdigest()

    async def __call__(self, keys: list[str], args: Sequence[Any] = ()) -> Any:
        command = ("EVALSHA", self.sha, len(keys), *keys, *args)
        try:
            return await self.shared.execute(*command)
        except NoScriptError:
            async with self.patience.bounded():
                await self.redis.script_load(self.script)
            return await self.shared.execute(*command)


class WaitingPool(BlockingConnectionPool):
    """redis-py's pool that waits, up to its ``timeout``, for one of its ``max_connections``
    to come free, and then raises ``StoreBusy`` (redis-py's own pools raise a
    ``ConnectionError``, as if Redis were down)."""

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        try:
            # redis-py leaves this untyped (untyped_calls_exclude does not reach a super() call)
            connection: AbstractConnection = await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
            return connection
        except ConnectionError as error:
            if not isinstance(error.__cause__, builtins.TimeoutError):
                raise  # connecting failed: Redis does not answer
            raise StoreBusy(
                f"all {self.max_connections} connections of a pool in use for {self.timeout:g} s"
            ) from None


class Patience:
    """How long the store's operations wait for Redis (``timeout_s``; a blocking read, beyond
    its own wait), shared by every client of one store. Once Redis left an operation
    unanswered that long (a Redis that stalls: stopped, swapping), or the shared connection
    could not be made, the others fail at once for ``timeout_s / 4`` (at most 1 s) before
    anything waits on it again: a request's several operations then do not each wait
    ``timeout_s`` in turn."""

    __slots__ = ("_failed", "timeout_s")

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._failed: tuple[str, float] | None = None  # why, and until when

    def check(self) -> None:
        """Raise at once (``ConnectionError``) while Redis was just found not answering."""
        failed = self._failed
        if failed is not None and time.monotonic() < failed[1]:
            raise ConnectionError(failed[0])

    def failed(self, error: BaseException) -> None:
        why = f"Redis did not answer just now ({error}); trying again shortly"
        self._failed = (why, time.monotonic() + min(1.0, self.timeout_s / 4))

    def answered(self) -> None:
        self._failed = None

    @contextlib.asynccontextmanager
    async def bounded(self, wait_s: float = 0) -> AsyncIterator[None]:
        """Around one operation of a redis-py client: it fails at once while Redis was just
        found not answering, or with a ``TimeoutError`` after ``timeout_s`` (+ ``wait_s``, a
        blocking read's own wait)."""
        self.check()
        limit = self.timeout_s + wait_s
        try:
            async with asyncio.timeout(limit):
                yield
        except builtins.TimeoutError:  # asyncio.timeout's
            error = TimeoutError(f"Redis did not answer within {limit:g} s")
            self.failed(error)
            raise error from None
        except MaxConnectionsError as error:  # a pool that does not wait (a cluster node's)
            raise StoreBusy(f"all connections of a pool in use: {error}") from None


class SharedConnection(Commands):
    """Commands of any number of tasks on one connection, replies in order.

    A lost connection fails every command still waiting with a ``ConnectionError`` (whether
    Redis ran it is unknown, as with any lost reply); the next command connects again. A
    command unanswered for ``timeout_s`` ends the connection the same way, with a
    ``TimeoutError`` for every command still waiting.

    Connecting is one attempt that every command finding no connection waits for, given up
    after ``timeout_s``. After a timeout or a failed attempt, commands fail at once for a
    while (``patience``, which the store's other clients share) before the next attempt.
    """

    def __init__(
        self, pool: ConnectionPool, timeout_s: float = 10, patience: Patience | None = None
    ) -> None:
        self._pool = pool
        self._timeout_s = timeout_s
        self._patience = patience or Patience(timeout_s)
        self._watchdog: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # on connecting
        self._connection: AbstractConnection | None = None
        self._replies: _Replies | None = None
        self._connecting: asyncio.Future[AbstractConnection] | None = None  # the attempt
        self._waiting: deque[tuple[asyncio.Future[Any], float]] = deque()  # with its deadline
        self._outbox: list[bytes] = []
        self._flushing = False  # a write of what is queued is on its way (``_queue``)
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def pool(self) -> ConnectionPool:
        """Where its connections come from (their address and settings)."""
        return self._pool

    @property
    def connected(self) -> bool:
        """Whether ``send`` queues now (else it returns None)."""
        return self._connection is not None

    async def execute_many(self, *commands: tuple[Any, ...]) -> list[Any]:
        """Several commands sent together; their replies in order, error replies as
        exception values (the caller decides which of them matter)."""
        connection = self._connection or await self._connect()
        return await self.replies(self._queue(connection, commands))

    def send(self, *commands: tuple[Any, ...]) -> Sent | None:
        """Queue commands now, behind everything queued before them, and return at once;
        ``replies`` gives their replies. None while there is no connection (the caller
        sends them with ``execute_many``, which connects): nothing was queued then."""
        connection = self._connection
        return None if connection is None else self._queue(connection, commands)

    async def replies(self, sent: Sent) -> list[Any]:
        """The replies of commands sent, in order, error replies as exception values."""
        replies: list[Any] = []
        try:
            for future in sent.futures:
                try:
                    replies.append(await future)
                except ResponseError as error:
                    replies.append(error)
        except BaseException:
            for future in sent.futures:  # none is left with an error nobody looked at
                if future.done() and not future.cancelled():
                    future.exception()
                future.cancel()
            last = sent.futures[-1]
            if not last.done() or last.cancelled():
                # given up (a timeout, a shutdown) before Redis answered: its reply may never
                # come, so the connection is dropped, as redis-py drops a connection whose
                # reply a cancelled command left unread
                self._lost(sent.connection, ConnectionError("a command was given up unanswered"))
            raise
        return replies

    def _queue(self, connection: AbstractConnection, commands: tuple[tuple[Any, ...], ...]) -> Sent:
        """Queue the commands, to be written with every command queued in this turn of the
        loop, at the start of the next."""
        sent = Sent(connection, [self._enqueue(args) for args in commands])
        if not self._flushing:
            self._flushing = True
            self._loop.call_soon(self._flush_queued)
        return sent

    def _flush_queued(self) -> None:
        self._flushing = False
        self._flush()

    def _enqueue(self, args: tuple[Any, ...]) -> asyncio.Future[Any]:
        loop = self._loop  # the connection's: asyncio.get_running_loop() costs a getpid()
        future = loop.create_future()
        self._outbox.append(pack_command(args))
        self._waiting.append((future, loop.time() + self._timeout_s))
        return future

    def _flush(self) -> None:
        """Write the commands queued, in the order their replies are awaited; while the
        socket's buffer is full, they wait for ``resume_writing``."""
        connection, replies = self._connection, self._replies
        if connection is None or replies is None or replies.paused or not self._outbox:
            return  # lost meanwhile (its commands failed already), or resume_writing flushes
        outbox, self._outbox = self._outbox, []
        try:
            write_packed(connection, outbox)
        except Exception as error:  # the socket failed: so did the connection
            self._lost(connection, error)

    async def _connect(self) -> AbstractConnection:
        """The connection, made by one attempt that every command finding none waits for."""
        if self._connection is not None:
            return self._connection
        self._patience.check()
        attempt = self._connecting
        if attempt is None:
            attempt = self._connecting = asyncio.ensure_future(self._connect_once())
            attempt.add_done_callback(self._attempted)
        # shielded: a caller that gives up leaves the attempt to the others
        return await asyncio.shield(attempt)

    async def _connect_once(self) -> AbstractConnection:
        connection: AbstractConnection = self._pool.make_connection()
        try:
            async with asyncio.timeout(self._timeout_s):
                await connection.connect()
        except BaseException as error:
            await connection.disconnect(nowait=True)
            if not isinstance(error, Exception):
                raise
            if isinstance(error, builtins.TimeoutError):  # asyncio.timeout's
                error = TimeoutError(f"Redis did not answer within {self._timeout_s} s")
            self._patience.failed(error)
            raise error from None
        self._patience.answered()
        self._loop = asyncio.get_running_loop()
        self._replies = _Replies(self, connection)
        self._replies.take_over(connection)
        self._connection = connection
        self._watch(connection)
        AVAILABILITY.answers()
        return connection

    def _attempted(self, attempt: asyncio.Future[Any]) -> None:
        self._connecting = None
        if not attempt.cancelled():
            attempt.exception()  # told to every waiter; none is left unlooked at

    def _watch(self, connection: AbstractConnection) -> None:
        """Now and then: a command unanswered past its deadline ends the connection."""
        if connection is not self._connection:
            return
        loop = self._loop
        if self._waiting and self._waiting[0][1] < loop.time():
            late = TimeoutError(f"Redis did not answer within {self._timeout_s} s")
            self._patience.failed(late)
            self._lost(connection, late)
            return
        self._watchdog = loop.call_later(min(1.0, self._timeout_s / 4), self._watch, connection)

    def _answer(self, connection: AbstractConnection, reply: Any) -> None:
        """The next reply: the oldest waiting command's."""
        if connection is not self._connection:
            return
        if not self._waiting:
            self._lost(connection, ConnectionError("a reply that no command waits for"))
            return
        future, _ = self._waiting.popleft()
        if future.done():  # its caller gave up (a timeout): the reply is dropped
            return
        if isinstance(reply, ResponseError):
            future.set_exception(reply)
        else:
            future.set_result(reply)

    def _lost(self, connection: AbstractConnection, error: BaseException) -> None:
        if connection is not self._connection:
            return
        self._connection = None
        if self._watchdog is not None:
            self._watchdog.cancel()
        if not isinstance(error, RedisError):
            error = ConnectionError(f"the shared connection failed: {error!r}")
        waiting, self._waiting = self._waiting, deque()
        self._outbox = []
        for future, _ in waiting:
            if not future.done():
                future.set_exception(error)
        self._replies = None
        self._spawn(connection.disconnect(nowait=True))

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        """A task kept until it is done (the loop itself holds tasks only weakly)."""
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        """Fail what still waits, close the connection; a later command connects again."""
        connection = self._connection
        if connection is not None:
            self._lost(connection, ConnectionError("the shared connection was closed"))
        await asyncio.gather(*self._tasks, return_exceptions=True)
