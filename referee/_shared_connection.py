"""One Redis connection that many tasks' commands share: the hot path's reads and commits.

redis-py lends each command a pooled connection for its whole round trip: a checkout, a
write, a wake-up and a release per command, about 35 µs of the referee's CPU under load
(``benchmarks/results/README.md``). Here every command goes on one connection: the commands
given in one turn of the event loop leave in one write, and one task reads the replies as
they come, often several in one read. Redis answers a connection's commands in order, so the
n-th reply is the n-th command's.

redis-py still connects (AUTH, SELECT, TLS from the URL) and parses the replies; hiredis packs
the commands (redis-py's asyncio client packs them in Python, 6x slower for a commit). One
watchdog per connection, not a timer per command (4 µs each under uvloop), gives up on a
Redis that does not answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from typing import Any

from hiredis import pack_command
from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.exceptions import ConnectionError, RedisError, ResponseError, TimeoutError

__all__ = ["SharedConnection"]

# past this many bytes waiting in the socket's buffer, writes wait for it to drain
_WRITE_BUFFER = 1 << 20


class SharedConnection:
    """Commands of any number of tasks on one connection, replies in order.

    A lost connection fails every command still waiting with a ``ConnectionError`` (whether
    Redis ran it is unknown, as with any lost reply); the next command connects again. A
    command unanswered for ``timeout_s`` ends the connection the same way, with a
    ``TimeoutError`` for every command still waiting.
    """

    def __init__(self, pool: ConnectionPool, timeout_s: float = 10) -> None:
        self._pool = pool
        self._timeout_s = timeout_s
        self._watchdog: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # on connecting
        self._connection: AbstractConnection | None = None
        self._reader: asyncio.Task | None = None
        self._connecting = asyncio.Lock()
        self._waiting: deque[tuple[asyncio.Future, float]] = deque()  # with its deadline
        self._outbox: list[bytes] = []
        self._tasks: set[asyncio.Task] = set()

    async def execute(self, *args: Any) -> Any:
        """One command's reply; an error reply is raised (redis-py's exception classes)."""
        (reply,) = await self.execute_many(args)
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    async def execute_many(self, *commands: tuple[Any, ...]) -> list[Any]:
        """Several commands sent together; their replies in order, error replies as
        exception values (the caller decides which of them matter)."""
        connection = self._connection or await self._connect()
        futures = [self._enqueue(args) for args in commands]
        replies: list[Any] = []
        try:
            for future in futures:
                try:
                    replies.append(await future)
                except ResponseError as error:
                    replies.append(error)
        except BaseException:
            for future in futures:  # none is left with an error nobody looked at
                if future.done() and not future.cancelled():
                    future.exception()
                future.cancel()
            if not futures[-1].done() or futures[-1].cancelled():
                # given up (a timeout, a shutdown) before Redis answered: its reply may never
                # come, so the connection is dropped, as redis-py drops a connection whose
                # reply a cancelled command left unread
                self._lost(connection, ConnectionError("a command was given up unanswered"))
            raise
        return replies

    def _enqueue(self, args: tuple[Any, ...]) -> asyncio.Future:
        loop = self._loop  # the connection's: asyncio.get_running_loop() costs a getpid()
        future = loop.create_future()
        if not self._outbox:
            loop.call_soon(self._flush)
        self._outbox.append(pack_command(args))
        self._waiting.append((future, loop.time() + self._timeout_s))
        return future

    def _flush(self) -> None:
        """Write what this turn of the loop gave, in the order the replies are awaited."""
        outbox, self._outbox, connection = self._outbox, [], self._connection
        if connection is None or not outbox:
            return  # the connection was lost meanwhile: its commands have failed already
        writer = getattr(connection, "_writer", None)  # redis-py's asyncio StreamWriter
        if writer is None or writer.transport.get_write_buffer_size() > _WRITE_BUFFER:
            # through redis-py, which waits for the socket to drain: a task, and its write a
            # turn of the loop later
            task = self._spawn(connection.send_packed_command(outbox, check_health=False))
            task.add_done_callback(lambda done: self._sent(connection, done))
            return
        try:  # written now: every turn of the loop a commit waits for adds to a decision's time
            writer.writelines(outbox)
        except Exception as error:  # the socket failed: so did the connection
            self._lost(connection, error)

    def _sent(self, connection: AbstractConnection, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is None:
            return
        error = task.exception() if not task.cancelled() else None
        self._lost(connection, error or ConnectionError("the write was cancelled"))

    async def _connect(self) -> AbstractConnection:
        async with self._connecting:  # the commands that find no connection wait for one
            if self._connection is None:
                connection = self._pool.make_connection()
                await connection.connect()
                self._loop = asyncio.get_running_loop()
                self._connection = connection
                self._reader = asyncio.create_task(self._read(connection))
                self._watch(connection)
            return self._connection

    def _watch(self, connection: AbstractConnection) -> None:
        """Now and then: a command unanswered past its deadline ends the connection."""
        if connection is not self._connection:
            return
        loop = self._loop
        if self._waiting and self._waiting[0][1] < loop.time():
            late = TimeoutError(f"Redis did not answer within {self._timeout_s} s")
            self._lost(connection, late)
            return
        self._watchdog = loop.call_later(min(1.0, self._timeout_s / 4), self._watch, connection)

    async def _read(self, connection: AbstractConnection) -> None:
        waiting = self._waiting
        try:
            while True:
                try:
                    reply = await connection.read_response(timeout=math.inf)
                except ResponseError as error:
                    reply = error
                if not waiting:
                    raise ConnectionError("a reply that no command waits for")
                future, _ = waiting.popleft()
                if future.done():  # its caller gave up (a timeout): the reply is dropped
                    continue
                if isinstance(reply, ResponseError):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        except asyncio.CancelledError:
            self._lost(connection, ConnectionError("the shared connection was closed"))
            raise
        except Exception as error:  # every failure of the socket ends the connection alike
            self._lost(connection, error)

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
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()
        self._reader = None
        self._spawn(connection.disconnect(nowait=True))

    def _spawn(self, work: Any) -> asyncio.Task:
        """A task kept until it is done (the loop itself holds tasks only weakly)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        """Fail what still waits, close the connection; a later command connects again."""
        reader, connection = self._reader, self._connection
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        if connection is not None:
            self._lost(connection, ConnectionError("the shared connection was closed"))
        await asyncio.gather(*self._tasks, return_exceptions=True)
