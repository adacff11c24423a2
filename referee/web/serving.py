"""How uvicorn serves the referee to the public: a connection must send a request's headers
within ``REFEREE_HEADER_TIMEOUT_S`` (uvicorn waits for them forever: a client trickling
bytes, or sending none, held a connection and a file descriptor for as long as it liked),
and one address holds at most ``REFEREE_MAX_CONNECTIONS_PER_ADDRESS`` connections to a
process (a connection is one process's, so this count is too; the streams and long-polls
an address holds are counted across replicas, in ``service.limits``)."""

from __future__ import annotations

import asyncio
import resource
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..settings import Settings

__all__ = ["PublicHttp", "raise_file_limit"]

# uvicorn makes the protocol from its class alone: the class reads the process's settings
_SETTINGS = Settings.from_env()


class PublicHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline for headers and a cap per address.

    One timer per connection, not per request: every ``header_timeout_s`` it looks at the
    request in progress, and closes a connection that began no request since the last look
    while none was being answered (idle connections close sooner, at the keep-alive
    timeout). A request's headers thus get between one and two periods.
    """

    header_timeout_s = _SETTINGS.header_timeout_s
    max_per_address = _SETTINGS.max_connections_per_address
    #: proxies (REFEREE_TRUSTED_PROXIES) carry many clients' connections: no cap for them
    trusted = frozenset(_SETTINGS.trusted_proxies)
    _open: dict[str, int] = {}  # noqa: RUF012  (this process's connections per address)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._address = self.client[0] if self.client else ""
        count = self._open.get(self._address, 0) + 1
        self._open[self._address] = count
        if 0 < self.max_per_address < count and self._address not in self.trusted:
            transport.abort()  # refused: no answer is owed to a connection past the cap
            return
        self._seen: Any = None
        self._look = self.loop.call_later(self.header_timeout_s, self._look_again)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
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
        if self.transport.is_closing():
            return
        if cycle is self._seen and (cycle is None or cycle.response_complete):
            self.transport.close()  # no request begun in a whole period: headers too slow
            return
        self._seen = cycle
        self._look = self.loop.call_later(self.header_timeout_s, self._look_again)


def raise_file_limit() -> None:
    """Let the process open as many files as the system allows it (connections are files)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
