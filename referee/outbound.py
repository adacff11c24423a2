"""Requests the referee itself sends (webhook bots' turns), through a guard against SSRF.

A webhook's URL is given by whoever creates a game, so the referee must not become their way
into the network it runs in. Before any connection is made, the URL's host is resolved and
every address it resolves to must be globally routable (``ip.is_global`` after unwrapping an
IPv4-mapped IPv6 address, and not multicast): loopback, private, CGNAT (100.64/10), link-local
(the cloud metadata address among them), unique-local and multicast are refused, unless
``REFEREE_WEBHOOK_ALLOW`` (hosts or CIDRs) allows them. This happens in the resolver of
aiohttp's connector, which connects to the addresses its resolver returned and to no other,
so nothing is resolved a second time (the URL keeps its host: ``Host``, the TLS server name
and the pool's key are its); an address literal is checked before the request. A request
follows no redirect (a 3xx is a failure) and reads at most ``max_body`` bytes of the answer.
One pool of connections serves every request, and each host gets at most ``per_host``
requests at a time. (httpcore's pool, tried first, cost three times the CPU per call: it polls
every pooled connection's socket on each request.)
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

__all__ = [
    "Allowed",
    "Answer",
    "Failed",
    "Outbound",
    "Refused",
    "Target",
    "check_literal",
    "target_of",
]

IP = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(Exception):
    """The URL may not be called: a malformed URL, or an address the guard refuses."""


class Failed(Exception):
    """The call was made (or tried) and failed: no connection, a timeout, a redirect, an
    error status, an answer too long. ``again``: trying it again may succeed (the host could
    not be reached, or dropped the connection)."""

    def __init__(self, reason: str, *, again: bool = False) -> None:
        super().__init__(reason)
        self.again = again


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


class _GuardedResolver(AbstractResolver):
    """aiohttp's resolver behind the guard: a host's addresses, each checked (``Refused`` if
    any fails); aiohttp connects to these addresses, and to no other."""

    def __init__(self, allowed: Allowed) -> None:
        self.allowed = allowed
        self.inner = ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            found = await self.inner.resolve(host, port, family)
        except OSError as exc:
            raise Failed(f"{host} does not resolve: {exc}") from None
        for each in found:
            address = ipaddress.ip_address(each["host"].split("%", 1)[0])
            if not self.allowed.permits(host.lower(), address):
                raise Refused(f"{host} resolves to {address}, not globally routable")
        return found

    async def close(self) -> None:
        await self.inner.close()


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
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        """The one session, made in the running loop on first use."""
        if self._session is None:
            connector = aiohttp.TCPConnector(
                resolver=_GuardedResolver(self.allowed),
                limit=1024,
                limit_per_host=self.per_host,  # calls at a time to one host
                ttl_dns_cache=10,  # addresses checked when resolved, kept ten seconds
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                trust_env=False,  # no proxy from the environment: the checked address
                auto_decompress=False,
                skip_auto_headers=("Accept-Encoding",),
                headers={"user-agent": "referee-webhooks", "accept-encoding": "identity"},
            )
        return self._session

    async def post(self, url: str, body: bytes, headers: dict[str, str], deadline: float) -> Answer:
        """POST ``body`` to ``url`` and read the answer by ``deadline`` (seconds since the
        epoch); ``Refused`` before any packet is sent to it, ``Failed`` after."""
        target = target_of(url)
        literal = _literal(target.host)  # aiohttp asks no resolver for an address literal
        if literal is not None and not self.allowed.permits(target.host, literal):
            raise Refused(f"{target.host} is not a globally routable address")
        remaining = deadline - time.time()
        if remaining <= 0:
            raise Failed("no time left before the deadline")
        timeout = aiohttp.ClientTimeout(
            total=remaining, sock_connect=min(self.connect_s, remaining)
        )
        started = time.monotonic()
        try:
            async with self._client().post(
                url,
                data=body,
                headers={**headers, "content-type": "application/json"},
                allow_redirects=False,
                timeout=timeout,
            ) as reply:
                if 300 <= reply.status < 400:
                    raise Failed(f"answered {reply.status}: redirects are not followed")
                content = await reply.content.read(self.max_body + 1)
                while content and len(content) <= self.max_body:
                    more = await reply.content.read(self.max_body + 1 - len(content))
                    if not more:
                        break
                    content += more
                if len(content) > self.max_body:
                    raise Failed(f"answered more than {self.max_body} bytes")
        except aiohttp.ConnectionTimeoutError:
            raise Failed("no connection in time", again=True) from None
        except TimeoutError:
            raise Failed("no answer before the deadline") from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise Failed(f"{type(exc).__name__}: {exc}", again=True) from None
        except aiohttp.ClientError as exc:
            raise Failed(f"{type(exc).__name__}: {exc}") from None
        return Answer(reply.status, bytes(content), time.monotonic() - started)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
