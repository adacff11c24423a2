"""Requests the referee itself sends (webhook bots' turns), through a guard against SSRF.

A webhook's URL is given by whoever creates a game, so the referee must not become their way
into the network it runs in. Before any connection is made, the URL's host is resolved and
every address it resolves to must pass the guard's rules (``outbound_guard``: globally
routable, so loopback, private, CGNAT (100.64/10), link-local (the cloud metadata address
among them), unique-local, multicast and an IPv6 address that carries an IPv4 one are
refused, unless ``REFEREE_WEBHOOK_ALLOW`` (hosts or CIDRs) allows them). The connection is
made to an address so checked and to no other, so nothing is resolved a second time (the URL
keeps its host: ``Host``, the TLS server name and the pool's key are its; addresses are kept
ten seconds). A request follows no redirect (a 3xx is a failure), reads at most ``max_body``
bytes of the answer, and ends by its deadline; nothing is taken from the environment (no
proxy).

One pool of keep-alive connections serves every request; each caller (a signing secret) gets at
most ``per_host`` requests at a time to a host, and a host ``HOST_SHARES`` times that. The
client is lean on purpose: a request's bytes are built at once and written in one write, and
httptools (the parser the referee serves with) reads the answer, as the bench's own bots do
(``tools/load.py``). aiohttp's client, used first, spent about twice this one's CPU per call
beside the write itself (its request building and a task per request body; py-spy,
benchmarks/results/README.md), and httpcore's pool, tried before it, three times aiohttp's (it
polls every pooled connection's socket on each request).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import socket
import ssl
import time
from dataclasses import dataclass

import httptools

from .outbound_guard import (
    UNRESOLVED,
    Allowed,
    Failed,
    Refused,
    Target,
    check_literal,
    literal,
    target_of,
)

__all__ = [
    "HOST_SHARES",
    "Allowed",
    "Answer",
    "Failed",
    "Outbound",
    "Refused",
    "Target",
    "check_literal",
    "target_of",
]

log = logging.getLogger("referee.outbound")


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    seconds: float  # from the first connection attempt to the end of the answer


class _Reply(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection to a bot, one request at a time: the request's bytes
    are written at once, and httptools (the parser the referee serves with) reads the answer,
    at most ``max_body`` bytes of it."""

    def __init__(self, max_body: int) -> None:
        self.max_body = max_body
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.answer: asyncio.Future[tuple[int, bytes]] | None = None
        self.body: list[bytes] = []
        self.size = 0
        self.heard = False  # a byte of the answer arrived
        self.received = 0  # bytes of the answer, head and framing included
        self.headed = False  # the answer's head is in
        self.until_close = True  # no length and not chunked: the body ends with the connection
        self.reusable = False
        self.idle: asyncio.TimerHandle | None = None  # closes it if unused for a while

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a TCP connection's transport is an asyncio.Transport (asyncio.Protocol says Base...)
        self.transport = transport  # type: ignore[assignment]

    def send(self, request: bytes) -> asyncio.Future[tuple[int, bytes]]:
        assert self.transport is not None  # connected
        self.answer = asyncio.get_running_loop().create_future()
        self.body, self.size, self.received = [], 0, 0
        self.heard, self.headed, self.until_close = False, False, True
        self.transport.write(request)
        return self.answer

    @property
    def closed(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    def data_received(self, data: bytes) -> None:
        self.heard = True
        self.received += len(data)
        if self.received > 2 * self.max_body + 16384:  # a head or framing without end
            self._fail(Failed(f"answered more than {self.max_body} bytes"))
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(Failed("answered with an upgrade"))
        except httptools.HttpParserError:
            self._fail(Failed("an answer that is not HTTP"))

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-length" or (name == b"transfer-encoding" and b"chunked" in value):
            self.until_close = False

    def on_headers_complete(self) -> None:
        self.headed = True

    def on_body(self, body: bytes) -> None:
        self.size += len(body)
        if self.size > self.max_body:
            self._fail(Failed(f"answered more than {self.max_body} bytes"))
        else:
            self.body.append(body)

    def on_message_complete(self) -> None:
        status = self.parser.get_status_code()
        if status < 200:  # an interim answer (100 Continue): the real one follows
            return
        self.reusable = self.parser.should_keep_alive()
        if self.answer is not None and not self.answer.done():
            self.answer.set_result((status, b"".join(self.body)))
        if not self.reusable:
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self.until_close and self.headed and self.answer is not None and not self.answer.done():
            self.answer.set_result((self.parser.get_status_code(), b"".join(self.body)))
            return
        self._fail(Failed(f"the connection was lost: {exc!r}", again=True))

    def _fail(self, error: Failed) -> None:
        self.reusable = False
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(error)
        self.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


#: how many callers' worth of calls a host takes at a time: ``per_host`` for each caller
#: (``share``), and this many times it for the host in all
HOST_SHARES = 4


class _Share:
    """A caller's bound on its calls to one host at a time, kept while it has calls there."""

    __slots__ = ("calls", "slots")

    def __init__(self, per_host: int) -> None:
        self.slots = asyncio.Semaphore(per_host)
        self.calls = 0  # under way or waiting


class _Host:
    """A host's pool: its idle connections, its bounds on calls at a time (each caller's,
    and the host's in all), its checked addresses (kept ``ttl_s``)."""

    def __init__(self, per_host: int) -> None:
        self.per_host = per_host
        self.calls = asyncio.Semaphore(per_host * HOST_SHARES)
        self.shares: dict[str, _Share] = {}  # each caller's, while it calls
        self.active = 0  # calls under way or waiting
        self.idle: list[_Reply] = []
        self.addresses: list[str] = []
        self.resolved_at = -1e9


class Outbound:
    """One pool of keep-alive connections for every request the referee sends, behind the
    guard; a request's bytes are built at once and written in one write."""

    def __init__(
        self,
        allowed: Allowed,
        *,
        per_host: int = 8,
        max_body: int = 64 * 1024,
        connect_s: float = 2.0,
        ttl_dns_s: float = 10.0,
        idle_s: float = 15.0,
        limit: int = 1024,
    ) -> None:
        self.allowed = allowed
        self.per_host = per_host
        self.max_body = max_body
        self.connect_s = connect_s
        self.ttl_dns_s = ttl_dns_s  # addresses checked when resolved, kept ten seconds
        self.idle_s = idle_s
        self._hosts: dict[tuple[str, str, int], _Host] = {}
        self._all = asyncio.Semaphore(limit)  # calls at a time, every host's
        self._tls: ssl.SSLContext | None = None

    async def _addresses(self, target: Target, host: _Host) -> list[str]:
        """The addresses ``target``'s host resolves to, every one checked (``Refused`` if
        any fails); the connection is made to one of these, and to no other."""
        given = literal(target.host)
        if given is not None:
            if not self.allowed.permits(target.host, given):
                raise Refused(f"{target.host} is not a globally routable address")
            return [target.host]
        now = time.monotonic()
        if now - host.resolved_at < self.ttl_dns_s:
            return host.addresses
        loop = asyncio.get_running_loop()
        try:
            found = await loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        except OSError:
            raise Failed(UNRESOLVED.format(target.host)) from None
        addresses: list[str] = []
        for *_, sockaddr in found:
            text = str(sockaddr[0])
            address = ipaddress.ip_address(text.split("%", 1)[0])
            if not self.allowed.permits(target.host, address):
                raise Refused(UNRESOLVED.format(target.host))
            if text not in addresses:
                addresses.append(text)
        host.addresses, host.resolved_at = addresses, now
        return addresses

    async def _connect(self, target: Target, host: _Host, remaining: float) -> _Reply:
        addresses = await self._addresses(target, host)
        loop = asyncio.get_running_loop()
        tls: ssl.SSLContext | None = None
        if target.scheme == "https":
            tls = self._tls = self._tls or ssl.create_default_context()
        error: Exception | None = None
        try:
            async with asyncio.timeout(min(self.connect_s, remaining)):
                for address in addresses:
                    try:
                        _, reply = await loop.create_connection(
                            lambda: _Reply(self.max_body),
                            address,
                            target.port,
                            ssl=tls,
                            server_hostname=target.host if tls is not None else None,
                        )
                        return reply
                    except OSError as exc:
                        error = exc
        except TimeoutError:
            raise Failed("no connection in time", again=True) from None
        log.debug("no connection to %s:%s: %r", target.host, target.port, error)
        raise Failed("no connection", again=True)

    async def post(
        self, url: str, body: bytes, headers: dict[str, str], deadline: float, share: str = ""
    ) -> Answer:
        """POST ``body`` to ``url`` and read the answer by ``deadline`` (seconds since the
        epoch); ``Refused`` before any packet is sent to it, ``Failed`` after.

        ``share``: whose call it is (``Delivery``: the signing secret's digest). Each caller
        gets ``per_host`` calls at a time to a host, and the host ``HOST_SHARES`` times that
        in all, so that one caller's slow calls cannot hold every slot a host has (a shared
        bound let anyone's slow webhook on a bot's host delay that bot's turn calls)."""
        target = target_of(url)
        request = _request(target, body, headers)
        remaining = deadline - time.time()
        if remaining <= 0:
            raise Failed("no time left before the deadline")
        key = (target.scheme, target.host, target.port)
        host = self._hosts.get(key)
        if host is None:
            host = self._hosts[key] = _Host(self.per_host)
        caller = host.shares.get(share)
        if caller is None:
            caller = host.shares[share] = _Share(host.per_host)
        caller.calls += 1
        started = time.monotonic()
        reply: _Reply | None = None
        host.active += 1
        try:
            async with asyncio.timeout(remaining), self._all, caller.slots, host.calls:
                while True:
                    fresh = not host.idle
                    if fresh:
                        reply = await self._connect(target, host, deadline - time.time())
                    else:
                        reply = host.idle.pop()
                        if reply.idle is not None:
                            reply.idle.cancel()
                        if reply.closed:
                            continue
                    try:
                        status, content = await reply.send(request)
                        break
                    except Failed:
                        if fresh or reply.heard:
                            raise
                        # a pooled connection the bot had closed: once more on a new one
        except TimeoutError:
            if reply is not None:
                reply.close()
            raise Failed("no answer before the deadline") from None
        finally:
            host.active -= 1
            caller.calls -= 1
            if not caller.calls:  # its last call: forgotten (a host never idle kept one
                del host.shares[share]  # for every caller it ever had)
            if reply is not None and reply.reusable and not reply.closed:
                reply.reusable = False  # until its next answer
                reply.idle = asyncio.get_running_loop().call_later(
                    self.idle_s, self._expire, key, host, reply
                )
                host.idle.append(reply)
            elif not host.active and not host.idle:
                self._hosts.pop(key, None)
        if 300 <= status < 400:
            raise Failed(f"answered {status}: redirects are not followed")
        return Answer(status, content, time.monotonic() - started)

    def _expire(self, key: tuple[str, str, int], host: _Host, reply: _Reply) -> None:
        """An idle connection unused for ``idle_s``: closed, and its host forgotten once it
        has no other."""
        reply.close()
        with contextlib.suppress(ValueError):
            host.idle.remove(reply)
        if not host.active and not host.idle and self._hosts.get(key) is host:
            del self._hosts[key]

    async def aclose(self) -> None:
        for host in self._hosts.values():
            for reply in host.idle:
                reply.close()
            host.idle.clear()


def _request(target: Target, body: bytes, headers: dict[str, str]) -> bytes:
    """A POST's bytes, head and body: the URL's host in ``Host`` (its port if not the
    scheme's), a JSON body, no credentials but what ``headers`` holds."""
    name = target.name  # ASCII, as ``target_of`` found it (IDNA encoded once, there)
    if ":" in name:
        name = f"[{name}]"
    if target.port != (443 if target.scheme == "https" else 80):
        name = f"{name}:{target.port}"
    lines = [
        f"POST {target.path} HTTP/1.1",
        f"Host: {name}",
        "User-Agent: referee-webhooks",
        "Accept-Encoding: identity",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
    ]
    for header, value in headers.items():
        if not _TOKEN.fullmatch(header) or not (value.isascii() and value.isprintable()):
            raise Refused(f"a header that cannot be sent: {header!r}")
        lines.append(f"{header}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
