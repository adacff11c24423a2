"""Launching a referee in a process of its own, as the bench, the local tournament and the
tests do (``referee serve`` on a free port, waited for until it answers ``/readyz``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import Any

import httpx

__all__ = ["LOAD_LIMITS", "answers", "free_port", "start_referee"]

#: Limits for a referee that one machine's bots load on purpose (the bench, a local
#: tournament, the tests): its bots share one address and never think, and the limits a
#: public referee sets for real bots would refuse them. These are as high as such loads, so
#: every request still passes the limits and pays what they cost.
LOAD_LIMITS = {
    "REFEREE_RATE_PER_TOKEN": "100000",
    "REFEREE_RATE_PER_ADDRESS": "10000000",
    "REFEREE_MAX_WAITING_PER_ADDRESS": "100000",
    "REFEREE_LIVE_GAMES_PER_ORGANIZER": "1000000",
    "REFEREE_LIVE_TOURNAMENTS_PER_ORGANIZER": "100000",
    "REFEREE_MAX_CONNECTIONS_PER_ADDRESS": "100000",
    "REFEREE_BOT_MIN_DEADLINE_S": "0",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_referee(
    redis_url: str | None,
    workers: int = 1,
    *,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    stdout: Any = None,
    stderr: Any = None,
    ready: str = "/readyz",
    port: int | None = None,
) -> tuple[subprocess.Popen[Any], str]:
    """A referee in a process of its own on a free port, once it answers ``/readyz``; with no
    ``redis_url``, on its own embedded Valkey (``args``: more flags of ``referee serve``;
    ``stdout``, ``stderr``: where its output goes, as text; ``ready``: the path that must
    answer 200 first; ``port``: a port of its own, else a free one)."""
    port = port or free_port()
    environment = {**os.environ, **(env or {})}
    if redis_url is None:
        environment.pop("REDIS_URL", None)
    else:
        environment["REDIS_URL"] = redis_url
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--no-access-log",
            *args,
        ],
        env=environment,
        stdout=stdout,
        stderr=stderr,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    if answers(process, url + ready):
        return process, url
    process.kill()
    raise RuntimeError("the referee did not start")


def answers(
    process: subprocess.Popen[Any], url: str, within: float = 30, patience: float = 1
) -> bool:
    """Whether ``url`` answers 200 within ``within`` seconds while ``process`` (the server)
    runs; each try waits ``patience`` seconds at most (more under valgrind)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url, timeout=patience).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    return False
