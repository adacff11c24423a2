"""The SSRF guard's rules, with no I/O: a webhook URL taken apart (``target_of``), and which
addresses the referee may call (``Allowed``): globally routable ones (``ip.is_global`` after
unwrapping an IPv4-mapped IPv6 address, and not multicast), no IPv6 address that carries an
IPv4 one (NAT64, 6to4, IPv4-compatible), and what ``REFEREE_WEBHOOK_ALLOW`` allows besides.
``referee.outbound`` resolves, checks every address with these rules, and connects to a
checked one; it exports every name here.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

__all__ = [
    "IP",
    "UNRESOLVED",
    "Allowed",
    "Failed",
    "Refused",
    "Target",
    "check_literal",
    "literal",
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
    name: str  # the host as it is looked up and sent in ``Host``: ASCII (IDNA), or the literal

    @property
    def origin(self) -> str:
        return f"{self.host}:{self.port}"


@functools.lru_cache(maxsize=4096)
def target_of(url: str) -> Target:
    """``url`` taken apart, or ``Refused``: http or https, a host (an IPv4 address only in
    dotted decimal), no user or password, and port 80, 443 or one from 1024 up (so that a
    webhook is no way to reach mail, SSH or other well-known services, on any host)."""
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
    path = quote(path, safe="!#$%&'()*+,/:;=?@[]~")  # nothing but printable ASCII is sent
    default = 443 if parts.scheme == "https" else 80
    port = default if port is None else port
    if port < 1024 and port not in (80, 443):
        raise Refused(f"port {port} may not be called: 80, 443, or 1024 and above")
    host = looked_up = parts.hostname.lower()
    if literal(host) is None:
        found = _looked_up(host)  # as a resolver gets it: １２７。０。０。１ is 127.0.0.1
        if found is None or (found != host and literal(found) is not None):
            raise Refused(f"{host!r} is not a host name")
        if _NUMERIC_LABEL.fullmatch(found.rstrip(".").rsplit(".", 1)[-1]):
            raise Refused(f"{host} is not an IPv4 address written as four decimal numbers")
        looked_up = found
    return Target(parts.scheme, host, port, path, looked_up)


#: a label of a host name as it is looked up (after IDNA): letters, digits, hyphens (and
#: the underscore some names hold), 1 to 63 of them
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


def _looked_up(host: str) -> str | None:
    """The name a resolver looks ``host`` up as (IDNA: full-width digits and ideographic
    dots become ASCII ones), if it is one: each label as ``_LABEL`` says, 253 characters at
    most (a space, a control character, a percent sign or a right-to-left mark is none)."""
    try:
        name = host.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    bare = name[:-1] if name.endswith(".") else name
    if 0 < len(bare) <= 253 and all(_LABEL.fullmatch(label) for label in bare.split(".")):
        return name
    return None


#: a host whose last label is a number is an IPv4 address to a resolver (WHATWG's URL
#: standard: "ends in a number"), in whatever form it takes: ``2130706433``, ``0x7f.1``,
#: ``0177.0.0.1`` and ``127.1`` are all 127.0.0.1 to ``getaddrinfo``. Only the dotted
#: decimal form is taken, so the guard reads at creation the address the call would reach.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")


def literal(host: str) -> IP | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


#: what a caller is told of a host that resolves to nothing it may call, or to nothing at
#: all: the same words, and no address, so that the referee tells no one what its network's
#: names resolve to, or which of them exist (a bot's webhook info call answers with it)
UNRESOLVED = "{} resolves to no globally routable address"


def _unwrapped(address: IP) -> IP:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


#: IPv6 prefixes that carry an IPv4 address or route to one (NAT64's well-known and
#: local-use prefixes, IPv4-compatible and IPv4-translated addresses, 6to4) and the
#: deprecated site-local one: Python calls them global, yet through a NAT64 gateway
#: ``64:ff9b::a9fe:a9fe`` is 169.254.169.254. None is called unless the operator allows it.
_CARRYING_IPV4 = tuple(
    ipaddress.IPv6Network(prefix)
    for prefix in (
        *("64:ff9b::/96", "64:ff9b:1::/48", "::/96", "::ffff:0:0:0/96", "2002::/16"),
        "fec0::/10",
    )
)


def _routable(address: IP) -> bool:
    """Globally routable, and not a multicast group nor an IPv6 address that carries (or
    is routed to) an IPv4 one."""
    if not address.is_global or address.is_multicast:
        return False
    return not (
        isinstance(address, ipaddress.IPv6Address)
        and any(address in prefix for prefix in _CARRYING_IPV4)
    )


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
        if _routable(address):
            return True
        if host in self.hosts:
            return True
        return any(address in network for network in self.networks)


def check_literal(url: str, allowed: Allowed) -> Target:
    """``url`` taken apart; ``Refused`` already if its host is an address literal the guard
    refuses (a name is checked when it is called, as it resolves then)."""
    target = target_of(url)
    address = literal(target.host)
    if address is not None and not allowed.permits(target.host, address):
        raise Refused(f"{target.host} is not a globally routable address")
    return target
