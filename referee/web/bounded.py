"""What a request may send to the referee as it arrives, and how one that sends more is
refused: the protocol under ``web.serving``'s.

A request's head and body are bounded as they arrive, before anything is kept of them: a
request line over ``REFEREE_MAX_HEADER_LINE_BYTES`` is 414, a header field line over it, more
than ``REFEREE_MAX_HEADER_FIELDS`` fields or more than ``REFEREE_MAX_HEADER_BYTES`` of them
431; a body whose Content-Length, or whose bytes received, pass ``REFEREE_MAX_BODY_BYTES`` is
413, and one that has not arrived whole ``REFEREE_BODY_TIMEOUT_S`` after its headers 408. Each
is a problem, and the connection is closed after it (httptools keeps a header whole in memory
until it ends: 100 MB of headers cost some 167 MB). So is a request the parser refuses
(Content-Length with Transfer-Encoding, two Content-Lengths, obs-fold, a bad chunk, bytes no
request line holds, a target it cannot parse): 400 ``invalid-request``, its ``field`` the
part the parser names; and CONNECT, 501 (the bytes after its head would be a tunnel's). A
request refused behind earlier ones on its connection (pipelined, or sent while a long-poll
waits) is answered after their answers, each once and in order, and nothing more is read;
one whose own answer has begun closes the connection.

A request that offers an upgrade the referee does not speak (``Upgrade: h2c``, which curl
--http2 and Java's HttpClient send, or ``websocket``: uvicorn runs with ``ws="none"``) is
served as HTTP/1.1, its body included: httptools skips the body of any request that offers
one, so such a request is parsed again without its offer (in a loop: hundreds pipelined
in one write are each answered).
"""

from __future__ import annotations

import array
import asyncio
import fcntl
import math
import termios
from collections import deque
from typing import Any

import httptools

from ..core.refusals import Refusal
from ..settings import Settings
from .edge_refusals import (
    MAX_PIPELINED,
    NO_HOST,
    NOT_A_PROXY,
    PIPELINE_TOO_DEEP,
    TRAILER,
    body_refusal,
    field_line_refusal,
    fields_refusal,
    has_host,
    head_bytes_refusal,
    limit,
    malformed,
    media_refusal,
    target_refusal,
    url_refusal,
)
from .problems import PROBLEM, problem_body, status_of
from .uvicorn_private import STATUS_LINE, HttpToolsProtocol  # checked (see that module)

__all__ = ["BoundedHttp", "Lingering"]

# uvicorn makes the protocol from its class alone: the class reads the process's settings
_SETTINGS = Settings.from_env()
_PROBLEM = PROBLEM.encode()
#: the parts of an upgrade offer that a request served as HTTP/1.1 is parsed again without
_OFFER = (b"upgrade", b"http2-settings")


class _Refused(Exception):
    """Raised in a parser callback to stop parsing: ``PublicHttp._refusal`` says why."""


class Lingering(asyncio.Protocol):
    """A refused connection's last moments: its answer sent and its side closed, what the
    client still sends is read and dropped for ``LINGER_S`` at most (closed at once, a client
    still sending its body would get a reset, and lose the answer with it), then it closes."""

    LINGER_S = 2.0

    def __init__(self, protocol: BoundedHttp) -> None:
        self.protocol = protocol
        transport = protocol.transport
        self.timer = protocol.loop.call_later(self.LINGER_S, transport.close)

    @classmethod
    def take_over(cls, protocol: BoundedHttp) -> None:
        transport = protocol.transport
        if not transport.can_write_eof():
            transport.close()
            return
        transport.set_protocol(cls(protocol))
        transport.write_eof()
        transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        pass

    def eof_received(self) -> bool:
        return False  # the client is done too: close

    def connection_lost(self, exc: Exception | None) -> None:
        self.timer.cancel()
        self.protocol.connection_lost(exc)


class BoundedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with a request's head and body bounded as they arrive,
    each refusal a problem (``_refuse``), and an upgrade it does not speak declined."""

    body_timeout_s = limit(_SETTINGS.body_timeout_s)
    max_line = limit(_SETTINGS.max_header_line_bytes)
    max_head = limit(_SETTINGS.max_header_bytes)
    max_fields = limit(_SETTINGS.max_header_fields)
    #: a head within a chunk of at most this many bytes holds no line too long and is not too
    #: long itself: only its fields are counted
    _whole_below = min(max_line, max_head)

    # the request being read, with no work per header field: its head (``_heading``: 0 none
    # arriving, 1 begun in the chunk being fed, 2 begun in an earlier one; the bytes of the
    # chunks fed since the one it began in), the length of the chunk being fed, its body
    # (``_body_due``: 0 none awaited, 1 awaited since its head, 2 its length and timer seen
    # to), the body's bytes, and its timer
    _heading = 0
    _head_fed = 0
    _chunk = 0
    _body_bytes = 0
    _body_due = 0
    _body_timer: asyncio.TimerHandle | None = None
    _body_since = 0.0  # when the body still awaited was first found missing (the loop's time)
    #: since when the connection is idle (None: a request is on its way), for the keep-alive
    #: timeout (``web.serving``): a request's first bytes end it, here
    _idle_since: float | None = None
    _declined = False  # it offered an upgrade the referee does not speak
    _refusal: Refusal | None = None
    _refused_cycle: Any = None
    _refused_after: bytes | None = None  # a refusal's answer, once the earlier ones are sent
    _spared: Any = None  # the idle, header or body period whose timeout found bytes unread
    _max_body: float = math.inf

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _spared_once(self, period: Any) -> bool:
        """Whether a timeout that ran out at the end of ``period`` finds bytes come unread
        (``_bytes_waiting``), the first time for that period: they are read in this turn, and
        the timer looks again a period later. Bytes still unread then are a client's that
        does not read its answers: the timeout takes its course."""
        if self._spared == period or not self._bytes_waiting():
            return False
        self._spared = period
        return True

    def _bytes_waiting(self) -> bool:
        """Whether bytes have come that the event loop has not read yet. A timer runs
        before the loop's turn reads its sockets: a busy loop may find a connection's timeout
        run out with the next request already there. Closed under unread bytes, the
        connection would be reset, and its client could not tell whether its request (a
        move) was taken; it is read instead."""
        sock = self.transport.get_extra_info("socket")
        waiting = array.array("i", [0])
        try:
            fcntl.ioctl(sock.fileno(), termios.FIONREAD, waiting)
        except (AttributeError, OSError, ValueError):  # no socket (a test's), or closed
            return False
        return waiting[0] > 0

    # -- what a request may send, as it arrives -------------------------------------------

    def data_received(self, data: bytes) -> None:
        """uvicorn's, with the refusals of this protocol, an upgrade it does not speak served
        as HTTP/1.1, the bytes of an unfinished head counted (those of a chunk wholly within
        one: a count that never exceeds the head, checked once per chunk), and a body that
        did not come with its head checked once (``_body_awaited``). Once a request is
        refused behind an answer still to come, what follows is dropped (``_refuse``)."""
        if self._refused_after is not None:
            return
        rest: bytes | None = data
        while rest is not None:  # each declined offer parsed again: a loop, not a recursion
            rest = self._fed(rest)

    def _fed(self, data: bytes) -> bytes | None:
        """``data`` through the parser; what it must parse again, if a request offered an
        upgrade the referee declines (``_without_upgrade``)."""
        self._idle_since = None  # uvicorn's _unset_keepalive_if_required, inlined
        self._chunk = len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            if self._declined:
                return self._without_upgrade(data[upgrade.args[0] :])
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return None
        except httptools.HttpParserError as exc:
            if self._refusal is None:  # the parser's own refusal: a problem, as every other
                # in a body, the request's own cycle is the current one (its head made it)
                self._refusal = malformed(exc)
                self._refused_cycle = self.cycle if self._body_due else None
            self._refuse()
            return None
        heading = self._heading
        if heading:  # the chunk ended inside a head
            if heading == 1:  # it began in this chunk: counted from the next one
                self._heading = 2
            else:
                self._head_fed += len(data)
                if self._head_fed > self.max_head + self.max_line:
                    self._refusal = self._head_refusal()
                    self._refuse()
                    return None
        if self._body_due == 1:
            self._body_awaited()
        return None

    def on_header(self, name: bytes, value: bytes) -> None:
        """uvicorn's, with the fields counted as they come (a head of 17,000 empty fields
        was within the bytes allowed, and kept whole until its end) and no trailer taken: a
        field after the head (a chunked body's trailer) was added to the request's headers,
        unbounded (a stream of them grew the process by gigabytes) and read as if the head
        had held it (an ``Authorization`` sent as a trailer played a move)."""
        headers = self.headers
        if self._body_due:
            self._stop(TRAILER, self.cycle)
        if len(headers) >= self.max_fields:
            self._stop(fields_refusal(self.max_fields))
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        headers.append((name, value))

    def on_url(self, url: bytes) -> None:
        """uvicorn's, noting that a head began (the target is a request's first field); its
        length is checked with the rest of the head (``_check_head``)."""
        if not self._heading:
            self._heading = 1
        self.url += url

    def _head_refusal(self) -> Refusal:
        """Why a head that grew past what its limits allow, and is not whole yet, is
        refused: its request line if that is all it has yet, else its headers."""
        if not self.headers and len(self.url) > self.max_line:
            return url_refusal(self.max_line)
        return head_bytes_refusal(self.max_head)

    def _check_head(self) -> None:
        """The head's limits: its target's length (414), each field line's length, the
        fields' count and their bytes (431 past any). Called where a chunk could hold a
        head that breaks one (one that spans chunks, or a chunk larger than a line may be)."""
        self._head_fed = 0
        if len(self.url) > self.max_line:
            self._stop(url_refusal(self.max_line))
        headers = self.headers
        size = 0
        for name, value in headers:
            line = len(name) + len(value) + 2
            if line > self.max_line:
                self._stop(field_line_refusal(name, self.max_line))
            size += line + 2
        if len(headers) > self.max_fields:
            self._stop(fields_refusal(self.max_fields))
        if size > self.max_head:
            self._stop(head_bytes_refusal(self.max_head))

    def _head_checked(self) -> bool:
        """A whole head's limits (where its chunks could break one: ``_check_head``), CONNECT
        refused; whether it offers an upgrade (one the referee does not speak is served once
        the parser stops at the offer: ``_declined``)."""
        heading, self._heading = self._heading, 0
        if heading != 1 or self._chunk > self._whole_below:
            self._check_head()
        if len(self.pipeline) >= MAX_PIPELINED:
            self._stop(PIPELINE_TOO_DEEP)
        if self.parser.get_http_version() == "1.1" and not has_host(self.headers):
            self._stop(NO_HOST)
        url = self.url
        if b"%" in url or b"&" in url:
            refusal = target_refusal(url)
            if refusal is not None:
                self._stop(refusal)
        upgrade: bool = self.parser.should_upgrade()
        if upgrade and self.parser.get_method() == b"CONNECT":  # llhttp: always an upgrade
            self._stop(NOT_A_PROXY)
        refusal = media_refusal(self.headers)
        if refusal is not None:
            self._stop(refusal)
        if upgrade and not self._should_upgrade():
            self._declined = True
        return upgrade

    def _body_awaited(self) -> None:
        """A body still to come after the chunk that ended its head: 413 at once if its
        Content-Length is over the limit (a body that came whole is counted by ``on_body``),
        and its timer (408) started."""
        self._body_due = 2
        for name, value in self.headers:
            if name == b"content-length":
                if int(value) > self._max_body:
                    self._refusal = body_refusal(self._max_body)
                    self._refused_cycle = self.cycle
                    self._refuse()
                    return
                break
        self._body_since = self.loop.time()
        if self._body_timer is None and self.body_timeout_s < math.inf:
            # left running once the body came: the connection's next bodies share it
            self._body_timer = self.loop.call_later(self.body_timeout_s, self._body_late)

    def _stop(self, refusal: Refusal, cycle: Any = None) -> None:
        """Stop parsing: ``refusal`` answers the request (whose cycle is ``cycle``, if it has
        one yet)."""
        self._refusal, self._refused_cycle = refusal, cycle
        raise _Refused(refusal.code)

    def _body_late(self) -> None:
        """The connection's body timer: a body awaited for ``REFEREE_BODY_TIMEOUT_S`` since
        its headers is 408, unless the referee itself stopped reading (a queued request, a
        body the app has not asked for yet: its time starts again). One timer a connection,
        not one a body: it runs on while bodies come, and looks again when the body then
        awaited is due."""
        self._body_timer = None
        if not self._body_due or self.transport.is_closing():
            return  # no body awaited: the next one starts the timer again
        loop = self.loop
        if self.flow.read_paused:
            self._body_since = loop.time()
        since = self._body_since
        left = since + self.body_timeout_s - loop.time()
        if left <= 0 and self._spared_once(("body", since)):  # its bytes came as time ran out
            left = self.body_timeout_s
        if left > 0:
            self._body_timer = loop.call_later(left, self._body_late)
            return
        self._refusal = Refusal(
            "body-timeout",
            f"the body did not arrive within {self.body_timeout_s:g} s of the headers "
            "(REFEREE_BODY_TIMEOUT_S)",
            field="body",
        )
        self._refused_cycle = self.cycle
        self._refuse()

    def _refuse(self) -> None:
        """Answer the refused request with its problem, unless an answer has begun on the
        connection (the request's own, or an earlier one's), then close the connection."""
        refusal, cycle = self._refusal, self._refused_cycle
        self._refusal = self._refused_cycle = None
        self._body_due = 0
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        if refusal is None or self.transport.is_closing():
            return
        if cycle is None:  # refused before its cycle: an earlier one may still answer
            current = self.cycle
            earlier = current is not None and not current.response_complete
        else:
            if getattr(cycle, "response_started", False) or cycle.response_complete:
                self.transport.close()  # its own answer has begun: none can follow it
                return
            # queued behind an earlier request (pipelined): it never runs
            earlier = any(queued is cycle for queued, _ in self.pipeline)
            if earlier:
                self.pipeline = deque(q for q in self.pipeline if q[0] is not cycle)
            cycle.disconnected = True  # the app's receive ends, and its answer is dropped
            cycle.message_event.set()
        answer = self._refusal_answer(refusal)
        if earlier or self.pipeline:
            # the earlier requests' answers first, each once and in order, then this one
            # (``on_response_complete``); nothing more is read meanwhile (``data_received``)
            self._refused_after = answer
            return
        self.transport.write(answer)
        Lingering.take_over(self)

    def _refusal_answer(self, refusal: Refusal) -> bytes:
        """A refusal's problem, with the connection's end announced."""
        status = status_of(refusal.code)
        path = self._instance()
        body = problem_body(status, refusal.code, refusal.detail, refusal.field, path)
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            content += (name, b": ", value, b"\r\n")
        content += (
            b"content-type: ",
            _PROBLEM,
            b"\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body),
            body,
        )
        return b"".join(content)

    def _instance(self) -> str | None:
        """The path of the request being read, for a problem's ``instance``, if known."""
        scope: Any = self.scope  # uvicorn's type says always set; not before a request's head
        path: str | None = scope.get("path") if scope is not None else None
        if path is None and self.url and len(self.url) <= self.max_line:
            try:
                raw = httptools.parse_url(self.url).path  # None: an absolute URL without one
            except httptools.HttpParserInvalidURLError:
                raw = None
            path = raw.decode("latin-1") if raw else None
        return path

    def _without_upgrade(self, rest: bytes) -> bytes:
        """A request that offered an upgrade the referee does not speak (h2c), to be parsed
        again without the offer (``Upgrade``, ``HTTP2-Settings`` and their ``Connection``
        tokens), with the rest of what came: its body, and any request behind it."""
        self._declined = False
        parser = self.parser
        head = [parser.get_method(), b" ", self.url, b" HTTP/"]
        head += (parser.get_http_version().encode("ascii"), b"\r\n")
        for name, value in self.headers:
            if name in _OFFER:
                continue
            if name == b"connection":
                tokens = [t.strip() for t in value.split(b",")]
                value = b", ".join(t for t in tokens if t and t.lower() not in _OFFER)
                if not value:
                    continue
            head += (name, b": ", value, b"\r\n")
        head.append(b"\r\n")
        self.parser = httptools.HttpRequestParser(self)
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)
        return b"".join(head) + rest
