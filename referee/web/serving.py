"""How uvicorn serves the referee to the public: a connection must send a request's headers
within ``REFEREE_HEADER_TIMEOUT_S`` (uvicorn waits for them forever: a client trickling
bytes, or sending none, held a connection and a file descriptor for as long as it liked),
and one address holds at most ``REFEREE_MAX_CONNECTIONS_PER_ADDRESS`` connections to a
process (a connection is one process's, so this count is too; the streams and long-polls
an address holds are counted across replicas, in ``service.limits``). No timeout (these two,
the keep-alive's, a body's) closes a connection whose bytes have come unread
(``_bytes_waiting``). What a request may send, and how one that sends more is refused, is
``web.bounded``'s.

When uvicorn stops (SIGTERM), every wait of the process ends (``Memory.stop_waiting``): a
long-poll is answered as it is, an event stream ends with a ``retry:`` hint, and each
connection closes after its answer.

The hot routes (``web.hot``) are answered here, at the protocol: no ASGI scope, messages or
cycle, and each answer in one write (uvicorn writes a response's head and body apart: two
trips through the kernel's TCP stack, each waking the bot). Everything else, and a hot
request this does not answer, goes through uvicorn's ASGI cycle to the app.
"""

from __future__ import annotations

import asyncio
import fcntl
import resource
import sys
import termios
from typing import Any

import httptools

from ..service import wakes
from ..settings import Settings
from . import hot
from .access import address_of
from .bounded import BoundedHttp, Lingering
from .edge_refusals import body_refusal, limit
from .uvicorn_private import (  # uvicorn's private names, each checked (see that module)
    STATUS_LINE,
    RequestResponseCycle,
    get_client_addr,
    get_path_with_query_string,
)

__all__ = ["PublicHttp", "raise_file_limit"]

# uvicorn makes the protocol from its class alone: the class reads the process's settings
_SETTINGS = Settings.from_env()

#: what a client whose answers wait reads between two looks, at least, to be served on (16
#: KB in ``REFEREE_HEADER_TIMEOUT_S``), and for how many looks in a row, at most, its answers
#: may wait (a minute by default): one that reads a trickle holds its answers' memory, the
#: kernel's buffers and a connection no longer than that
MIN_READ_BYTES = 16 * 1024
MAX_STALLED_LOOKS = 6


def _unsent(transport: asyncio.BaseTransport) -> int:
    """The bytes the kernel holds of a connection's answers, unsent or unacknowledged
    (Linux's SIOCOUTQ; 0 where it cannot say): a client reading slowly frees the kernel's
    buffers long before the process may write to them again."""
    sock = transport.get_extra_info("socket")
    try:
        queued = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
    except (AttributeError, OSError, ValueError):
        return 0
    return int.from_bytes(queued, sys.byteorder)


class _NoEvent:
    """What a hot request has for uvicorn's ``message_event``: nothing waits on it."""

    __slots__ = ()

    def set(self) -> None:
        pass


class _HotCycle:
    """A hot request in flight, with what uvicorn's protocol looks at on its current cycle
    (``response_complete``, ``disconnected``, ``keep_alive``, ``message_event``)."""

    __slots__ = (
        "body",
        "disconnected",
        "keep_alive",
        "response_complete",
        "route",
        "scope",
        "token",
    )
    message_event = _NoEvent()

    def __init__(self, route: Any, token: str | None, keep_alive: bool, scope: Any) -> None:
        self.route = route
        self.token = token
        self.keep_alive = keep_alive
        self.scope = scope  # its path and headers, as uvicorn would have filled it
        self.body = bytearray()
        self.disconnected = False
        self.response_complete = False


class PublicHttp(BoundedHttp):
    """uvicorn's httptools protocol, bounded (``BoundedHttp``), with a deadline for headers,
    a cap per address, and the hot routes answered in place.

    One timer per connection, not per request: every ``header_timeout_s`` it looks at the
    request in progress, and closes a connection that began no request since the last look
    while none was being answered (idle connections close sooner, at the keep-alive
    timeout). A request's headers thus get between one and two periods. The same look is
    the write deadline: a connection whose answers wait for its client to read them (writing
    paused, or closed with bytes unsent) at two looks in a row, with nothing taken between,
    is aborted.
    """

    header_timeout_s = _SETTINGS.header_timeout_s
    max_per_address = _SETTINGS.max_connections_per_address
    #: proxies (REFEREE_TRUSTED_PROXIES) carry many clients' connections: no cap for them
    trusted = frozenset(_SETTINGS.trusted_proxies)
    _open: dict[str, int] = {}  # noqa: RUF012  (this process's connections per address)
    #: uvicorn's cycle, or a hot request's in its place (uvicorn reads no more of it than
    #: _HotCycle has)
    cycle: RequestResponseCycle | _HotCycle  # type: ignore[assignment]
    #: the connection's one timer for the keep-alive timeout (``_idle_since``)
    _idle_timer: asyncio.TimerHandle | None = None
    #: the looks in a row that found answers waiting for the client to read them, and the
    #: bytes the last of them found (``_look_again``)
    _stalled_looks = 0
    _stalled_at = 0

    # a TCP connection's transport is an asyncio.Transport, as uvicorn's own protocol says
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._address = self.client[0] if self.client else ""
        self._routes: hot.HotRoutes | None = getattr(self.app, "hot", None)
        body = self._routes.limit if self._routes is not None else _SETTINGS.max_body_bytes
        self._max_body = limit(body or 0)
        count = self._open.get(self._address, 0) + 1
        self._open[self._address] = count
        if 0 < self.max_per_address < count and self._address not in self.trusted:
            transport.abort()  # refused: no answer is owed to a connection past the cap
            return
        self._seen: Any = None
        self._look = self.loop.call_later(self.header_timeout_s, self._look_again)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        left = self._open.get(self._address, 1) - 1
        if left > 0:
            self._open[self._address] = left
        else:
            self._open.pop(self._address, None)
        look = getattr(self, "_look", None)
        if look is not None:
            look.cancel()

    def _look_again(self) -> None:
        cycle = self.cycle
        transport = self.transport
        waiting = transport.get_write_buffer_size()
        if self.flow.write_paused or (transport.is_closing() and waiting):
            waiting += _unsent(transport)  # what the client reads, it takes from the kernel
            self._stalled_looks += 1
            if self._stalled_looks > 1 and (
                self._stalled_at < waiting + MIN_READ_BYTES
                or self._stalled_looks > MAX_STALLED_LOOKS
            ):
                # at the last look too, and less than MIN_READ_BYTES read since (or waiting
                # too long in all): the write deadline, its answers are no one's now
                transport.abort()
                return
            # a client that reads is served: an answer that took longer than two looks to
            # read was cut off halfway, however fast it was read
            self._stalled_at = waiting
            self._look = self.loop.call_later(self.header_timeout_s, self._look_again)
            return
        self._stalled_looks = 0
        if transport.is_closing():
            return
        if (
            cycle is self._seen
            and (cycle is None or cycle.response_complete)
            and not self._spared_once(("look", cycle))  # else a request has come: read now
        ):
            self.transport.close()  # no request begun in a whole period: headers too slow
            return
        self._seen = cycle
        self._look = self.loop.call_later(self.header_timeout_s, self._look_again)

    def resume_writing(self) -> None:
        """The client took enough of its answers for writing to go on: not stalled."""
        self._stalled_looks = 0
        super().resume_writing()

    # uvicorn says None (the transport closes); asyncio lets a protocol say True
    def eof_received(self) -> bool | None:  # type: ignore[override]
        """The client half-closed (HTTP/1.1 lets it go on reading): the requests it sent
        whole are answered, and the connection closes after the last. asyncio's default
        closed it at once: a move was played and its answer lost. A request cut short by the
        close is nobody's: the connection closes now."""
        cycle = self.cycle
        if (
            cycle is None
            or self._body_due
            or self._heading
            or (cycle.response_complete and not self.pipeline)
            or self.transport.is_closing()
        ):
            return None  # nothing whole left to answer: closed
        if self._refused_after is None:  # else its refusal is written last, then closed
            cycle.keep_alive = False  # the last request parsed (queued ones come before it)
        return True

    # -- the keep-alive timeout: one timer a connection ------------------------------------

    def on_response_complete(self) -> None:
        """uvicorn's, but for its keep-alive timeout: uvicorn makes a timer after every
        answer and cancels it at the next request's first bytes (4.2k instructions a request,
        by callgrind); here one timer runs on while requests come, and looks again when the
        connection has been idle for ``timeout_keep_alive``."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        if self.pipeline:
            # reading stays paused until the queue is drained (uvicorn resumed it after
            # every answer: a stream of pipelined requests queued without end)
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
            return
        self.flow.resume_reading()
        if self._refused_after is not None:  # a later request refused: its answer now
            self.transport.write(self._refused_after)
            Lingering.take_over(self)
            return
        loop = self.loop
        self._idle_since = loop.time()
        if self._idle_timer is None:
            self._idle_timer = loop.call_later(self.timeout_keep_alive, self._idle_late)

    def _unset_keepalive_if_required(self) -> None:
        """uvicorn's, which it calls when a connection is lost or upgraded: not idle."""
        self._idle_since = None

    def _idle_late(self) -> None:
        self._idle_timer = None
        since = self._idle_since
        if since is None or self.transport.is_closing():
            return  # a request is on its way: the timer starts again after its answer
        left = since + self.timeout_keep_alive - self.loop.time()
        if left <= 0 and self._spared_once(since):  # a request came as the time ran out
            left = self.timeout_keep_alive
        if left > 0:
            self._idle_timer = self.loop.call_later(left, self._idle_late)
            return
        self.timeout_keep_alive_handler()

    def shutdown(self) -> None:
        """uvicorn stops: every wait of the process ends now (its long-polls are answered as
        they are, its event streams end with a ``retry:`` hint), and this connection closes
        once its answer is sent."""
        state = getattr(self.app, "state", None)
        services = getattr(state, "services", None) if state is not None else None
        if services is not None:
            services.games.memory.stop_waiting()
        super().shutdown()

    # -- the hot routes ------------------------------------------------------------------

    def on_headers_complete(self) -> None:
        upgrade = self._head_checked()
        if self._declined:  # served once the parser stops at the offer
            return
        route = None
        routes = self._routes
        if (
            routes is not None
            and self.url.startswith((b"/v1/games", b"/v1/me/"))  # else not hot: no parse
            and routes.seats is not None
            and not self.expect_100_continue
            and not self.root_path
            and self.limit_concurrency is None
            and (self.cycle is None or self.cycle.response_complete)  # else pipelined
            and not upgrade
        ):
            parsed = httptools.parse_url(self.url)
            raw_path = parsed.path
            if b"%" not in raw_path and raw_path.isascii():
                path = raw_path.decode("ascii")
                query = parsed.query or b""
                token = hot.token_of(self.headers)
                method = self.parser.get_method()
                route = hot.taken(routes, method, path, query, token)
        if route is None:
            super().on_headers_complete()  # may refuse its target: no cycle of its own yet
            self._body_due = 1  # its cycle made: until the message completes
            return
        version = self.parser.get_http_version()
        scope = self.scope  # kept whole for a hand-over, as uvicorn would have filled it
        scope["method"] = method.decode("ascii")
        if version != "1.1":
            scope["http_version"] = version
        scope["path"] = path
        scope["raw_path"] = raw_path
        scope["query_string"] = query
        keep_alive = version != "1.0" and self.parser.should_keep_alive()
        self.cycle = _HotCycle(route, token, keep_alive, scope)
        self._body_due = 1  # until the message completes

    def on_body(self, body: bytes) -> None:
        cycle = self.cycle
        self._body_bytes += len(body)
        if self._body_bytes > self._max_body:
            self._stop(body_refusal(self._max_body), cycle)
        if self._declined:  # parsed again without the offer (``_without_upgrade``): the
            return  # current cycle is still the last request's
        if type(cycle) is not _HotCycle:
            super().on_body(body)
            return
        cycle.body += body

    def on_message_complete(self) -> None:
        self._body_due = self._body_bytes = 0  # the body timer, if any, runs on (_body_late)
        if self._declined:  # as in ``on_body``: the last request's cycle, answered already
            return
        cycle = self.cycle
        if type(cycle) is not _HotCycle:
            super().on_message_complete()
            return
        self._run(self._answer(cycle))

    async def _answer(self, cycle: _HotCycle) -> None:
        """What the app would answer, past the shared limits, in one write; or the request
        handed to Litestar's handlers, which own whatever is not plainly well-formed."""
        if cycle.disconnected or self.transport.is_closing():
            return  # its client is gone: no decision or game for an answer no one reads
        # a hot cycle is made only where the app has hot routes (``on_headers_complete``)
        routes: hot.HotRoutes
        routes, scope = self._routes, cycle.scope  # type: ignore[assignment]
        path, headers = scope["path"], scope["headers"]
        answer: hot.Answer | None
        try:
            address = address_of(self._address, headers, routes.trusted)
            if not await hot.admitted(routes, address, cycle.token):
                answer = hot.rate_limited(path)
            else:
                answer = await hot.answered(
                    routes, cycle.route, cycle.token, address, path, bytes(cycle.body), headers
                )
                if answer is None:
                    self._hand_over(cycle, self.app.routed, more_body=False)
                    return
        except Exception as exc:  # as the app's handlers would: a problem, logged
            answer = hot.problem(exc, path)
        if self.flow.write_paused and not cycle.disconnected:
            await self.flow.drain()
        cycle.response_complete = True
        if cycle.disconnected or self.transport.is_closing():
            return
        status, media, body, extra = answer
        if self.access_log:  # uvicorn's own line
            self.access_logger.info(
                '%s - "%s %s HTTP/%s" %d',
                get_client_addr(scope),
                scope["method"],
                get_path_with_query_string(scope),
                scope["http_version"],
                status,
            )
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            content += (name, b": ", value, b"\r\n")
        content += (b"content-type: ", media, b"\r\ncontent-length: %d\r\n" % len(body))
        for name, value in extra:
            content += (name, b": ", value, b"\r\n")
        if not cycle.keep_alive:
            content.append(b"connection: close\r\n")
        content += (b"\r\n", body)
        self.transport.write(b"".join(content))
        if wakes.ENABLED:  # a measure, off unless REFEREE_WAKE_TIMES is set
            wakes.answered()
        if not cycle.keep_alive:
            self.transport.close()
        self.on_response_complete()

    def _hand_over(self, cycle: _HotCycle, app: Any, more_body: bool) -> None:
        """The request to ``app`` through uvicorn's own cycle, with the body read so far."""
        handed = RequestResponseCycle(
            scope=cycle.scope,
            transport=self.transport,
            flow=self.flow,
            logger=self.logger,
            access_logger=self.access_logger,
            access_log=self.access_log,
            default_headers=self.server_state.default_headers,
            message_event=asyncio.Event(),
            expect_100_continue=False,
            keep_alive=cycle.keep_alive,
            on_response=self.on_response_complete,
        )
        handed.body = cycle.body
        handed.more_body = more_body
        handed.disconnected = cycle.disconnected
        handed.message_event.set()
        if self.cycle is cycle:
            self.cycle = handed
        self._run(handed.run_asgi(app))

    def _run(self, answering: Any) -> None:
        """A request's answer as a task uvicorn waits for when it shuts down."""
        task = self.loop.create_task(answering)
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)


def raise_file_limit() -> None:
    """Let the process open as many files as the system allows it (connections are files)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
