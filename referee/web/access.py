"""Who is asking: the client's address (as trusted proxies tell it), and the organizer an
organizer key belongs to. The limits themselves are the service's (``service.limits``)."""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.refusals import Refusal
from .problems import bearer

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection

__all__ = ["Organizers", "address_of", "client_address", "organizer_of"]


def client_address(scope: Mapping[str, Any], trusted: tuple[str, ...]) -> str:
    """The client's address of an ASGI request (``address_of``)."""
    client = scope.get("client")
    return address_of(client[0] if client else "unknown", scope["headers"], trusted)


def address_of(host: str, headers: list[tuple[bytes, bytes]], trusted: tuple[str, ...]) -> str:
    """The client's address: the peer's (``host``), or, from a trusted proxy, the nearest
    address in ``X-Forwarded-For`` that is not itself a trusted proxy. An IPv6 client is its
    /64 (one host may hold a whole /64)."""
    if trusted and host in trusted:
        for name, value in headers:
            if name == b"x-forwarded-for":
                for hop in reversed(value.decode("latin-1").split(",")):
                    hop = hop.strip()
                    if hop and hop not in trusted:
                        host = hop
                        break
    return _grouped(host)


@functools.lru_cache(maxsize=4096)
def _grouped(host: str) -> str:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


class Organizers:
    """Who may create games and tournaments (``REFEREE_ORGANIZER_KEYS``, kept as SHA-256
    digests), and whose live games and tournaments a creation counts against."""

    def __init__(self, key_hashes: tuple[str, ...], trusted: tuple[str, ...]) -> None:
        self.key_hashes = tuple(bytes.fromhex(h) for h in key_hashes)
        self.trusted = trusted

    @property
    def open(self) -> bool:
        """No keys: anyone may create (for local use)."""
        return not self.key_hashes

    def owner(self, connection: ASGIConnection[Any, Any, Any, Any]) -> str:
        """The owner of a creation (``owner_of``)."""
        key = bearer(connection.headers.get("authorization", ""))
        return self.owner_of(client_address(connection.scope, self.trusted), key)

    def owner_of(self, address: str, key: str | None) -> str:
        """The owner of a creation from ``address`` (the client's, as ``address_of`` gives
        it) bearing ``key``: the organizer whose key it is; with no keys set, the client's
        address. 401 without a key, 403 with a wrong one."""
        if self.open:
            return "a" + address
        if key is None:
            raise Refusal(
                "organizer-key-required",
                "creating games and tournaments here needs an organizer key, sent as "
                "'Authorization: Bearer <key>'",
            )
        digest = hashlib.sha256(key.encode()).digest()
        found = None
        for stored in self.key_hashes:  # every key compared, in constant time
            if hmac.compare_digest(stored, digest):
                found = stored
        if found is None:
            raise Refusal("organizer-key-refused", "this is not an organizer key of this referee")
        return "k" + found.hex()[:20]  # "k": an organizer (``core.league.is_organizer``)


def organizer_of(request: ASGIConnection[Any, Any, Any, Any]) -> str:
    """The owner of a creation (``Organizers.owner``), which its handler asks before it reads
    the body. Not a Litestar guard: a guard is handed a copy of its route handler, which
    cost a game's creation a fifth of its time."""
    owner: str = request.app.state.organizers.owner(request)
    return owner
