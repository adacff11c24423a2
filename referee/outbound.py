"""Requests the referee itself sends (webhook bots' turns), through a guard against SSRF.

A webhook's URL is given by whoever creates a game, so the referee must not become their way
into the network it runs in. Before any connection is made, the URL's host is resolved and
every address it resolves to must be globally routable (``ip.is_global`` after unwrapping an
IPv4-mapped IPv6 address, and not multicast): loopback, private, CGNAT (100.64/10), link-local
(the cloud metadata address among them), unique-local and multicast are refused, unless
``REFEREE_WEBHOOK_ALLOW`` (hosts or CIDRs) allows them. This happens where a connection is
made (httpcore's network backend), and the connection goes to the address that was checked,
so nothing is resolved a second time (the URL keeps its host: ``Host``, the TLS server name
and the pool's key are its). A request follows no redirect (a 3xx is a failure) and reads at
most ``max_body`` bytes of the answer. One pool of connections serves every request, and each
host gets at most ``per_host`` requests at a time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore

__all__ = [
    "Allowed",
    "Answer",
    "Failed",
    "Outbound",
    "Refused",
    "Target",
    "check_literal",
    "checked_address",
    "target_of",
]

IP = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(Exception):
    """The URL may not be called: a malformed URL, or an address the guard refuses."""


class Failed(Exception):
    """The call was made (or tried) and failed: no connection, a timeout, a redirect, an
    error status, an answer too long."""


@dataclass(frozen=True)
class Target:
    """A URL taken apart: what is connected to, and what the request names."""

    scheme: str
    host: str  # as the URL names it: a name, or an address literal without brackets
    port: int
    path: str  # with its query

    @property
    def origin(self) -> str:
        return f"{self.host}:{self.port}"


def target_of(url: str) -> Target:
    """``url`` taken apart, or ``Refused``: http or https, a host, no user or password."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Refused(f"not a URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise Refused("the URL's scheme must be http or https")
    if not parts.hostname:
        raise Refused("the URL names no host")
    if parts.username is not None or parts.password is not None:
        raise Refused("the URL may not hold a user or password")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    default = 443 if parts.scheme == "https" else 80
    return Target(parts.scheme, parts.hostname.lower(), port or default, path)


def _literal(host: str) -> IP | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _unwrapped(address: IP) -> IP:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class Allowed:
    """``REFEREE_WEBHOOK_ALLOW``: hosts (as URLs name them) and networks (CIDRs, or single
    addresses) the guard lets through although they are not globally routable."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.hosts: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in entries:
            entry = entry.strip().lower()
            if not entry:
                continue
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.hosts.add(entry.strip("[]"))

    @classmethod
    def parse(cls, value: str) -> Allowed:
        return cls(value.split(","))

    def permits(self, host: str, address: IP) -> bool:
        """Whether ``host``, resolved to ``address``, may be called."""
        address = _unwrapped(address)
        if address.is_global and not address.is_multicast:
            return True
        if host in self.hosts:
            return True
        return any(address in network for network in self.networks)


def check_literal(url: str, allowed: Allowed) -> Target:
    """``url`` taken apart; ``Refused`` already if its host is an address literal the guard
    refuses (a name is checked when it is called, as it resolves then)."""
    target = target_of(url)
    address = _literal(target.host)
    if address is not None and not allowed.permits(target.host, address):
        raise Refused(f"{target.host} is not a globally routable address")
    return target


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    seconds: float  # from the first connection attempt to the end of the answer


class _Guarded(httpcore.AsyncNetworkBackend):
    """httpcore's network backend behind the guard: a new connection's host is resolved, every
    address it resolves to checked, and the checked address connected to (the URL keeps its
    host, so ``Host``, the TLS server name and the pool's key are the URL's)."""

    def __init__(self, allowed: Allowed) -> None:
        self.allowed = allowed
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        address = await checked_address(host, port, self.allowed)
        return await self.inner.connect_tcp(
            str(address), port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise Refused("no Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


async def checked_address(host: str, port: int, allowed: Allowed) -> IP:
    """The address to connect to, once every address ``host`` resolves to passed the guard
    (``Refused`` else: a name that also resolves to a refused address is refused)."""
    host = host.strip("[]").lower()
    literal = _literal(host)
    if literal is not None:
        found = [literal]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except socket.gaierror as exc:
            raise Failed(f"{host} does not resolve: {exc.strerror}") from None
        found = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    for address in found:
        if not allowed.permits(host, address):
            raise Refused(f"{host} resolves to {address}, not globally routable")
    return _unwrapped(found[0])


class Outbound:
    """One pool of connections for every request the referee sends, behind the guard."""

    def __init__(
        self,
        allowed: Allowed,
        *,
        per_host: int = 8,
        max_body: int = 64 * 1024,
        connect_s: float = 2.0,
    ) -> None:
        self.allowed = allowed
        self.per_host = per_host
        self.max_body = max_body
        self.connect_s = connect_s
        self._hosts: dict[str, asyncio.Semaphore] = {}
        # httpcore follows no redirect, reads no proxy from the environment, sends nothing
        # but what it is given
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl.create_default_context(),
            max_connections=512,
            max_keepalive_connections=128,
            keepalive_expiry=30,
            network_backend=_Guarded(allowed),
        )

    async def post(self, url: str, body: bytes, headers: dict[str, str], deadline: float) -> Answer:
        """POST ``body`` to ``url`` and read the answer by ``deadline`` (seconds since the
        epoch); ``Refused`` before any packet is sent to it, ``Failed`` after."""
        target = target_of(url)
        remaining = deadline - time.time()
        if remaining <= 0:
            raise Failed("no time left before the deadline")
        timeouts = {
            "connect": min(self.connect_s, remaining),
            "read": remaining,
            "write": remaining,
            "pool": remaining,
        }
        shown = f"[{target.host}]" if ":" in target.host else target.host
        default = 443 if target.scheme == "https" else 80
        sent = {
            **headers,
            "host": shown if target.port == default else f"{shown}:{target.port}",
            "content-length": str(len(body)),
            "content-type": "application/json",
            "accept-encoding": "identity",
            "user-agent": "referee-webhooks",
        }
        gate = self._hosts.setdefault(target.origin, asyncio.Semaphore(self.per_host))
        started = time.monotonic()
        try:
            async with (
                asyncio.timeout(remaining),
                gate,
                self._pool.stream(
                    "POST",
                    url,
                    headers=list(sent.items()),
                    content=body,
                    extensions={"timeout": timeouts},
                ) as reply,
            ):
                if 300 <= reply.status < 400:
                    raise Failed(f"answered {reply.status}: redirects are not followed")
                content = bytearray()
                async for chunk in reply.aiter_stream():
                    content += chunk
                    if len(content) > self.max_body:
                        raise Failed(f"answered more than {self.max_body} bytes")
        except TimeoutError:
            raise Failed("no answer before the deadline") from None
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise Failed(f"{type(exc).__name__}: {exc}") from None
        except httpcore.UnsupportedProtocol as exc:
            raise Refused(str(exc)) from None
        return Answer(reply.status, bytes(content), time.monotonic() - started)

    async def aclose(self) -> None:
        await self._pool.aclose()
