"""Configuration from the environment (every variable is documented in README.md)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

__all__ = ["Settings"]


class Settings(msgspec.Struct, frozen=True):
    """How a referee process runs: where its Redis is, how long games are kept, limits."""

    redis_url: str | None = None
    data_dir: Path = Path("data")
    retention_s: int = 7 * 24 * 3600
    idle_ttl_s: int = 7 * 24 * 3600
    events_retention_s: int = 600
    max_body_bytes: int = 64 * 1024
    sweep_interval_s: float = 0.5
    recent_games: int = 4096
    fast_routes: bool = True
    appendfsync: str = "everysec"

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        return cls(
            redis_url=env.get("REDIS_URL") or None,
            data_dir=Path(env.get("REFEREE_DATA_DIR", "data")),
            retention_s=int(env.get("REFEREE_RETENTION_S", 7 * 24 * 3600)),
            idle_ttl_s=int(env.get("REFEREE_IDLE_TTL_S", 7 * 24 * 3600)),
            events_retention_s=int(env.get("REFEREE_EVENTS_RETENTION_S", 600)),
            max_body_bytes=int(env.get("REFEREE_MAX_BODY_BYTES", 64 * 1024)),
            sweep_interval_s=float(env.get("REFEREE_SWEEP_INTERVAL_S", 0.5)),
            recent_games=int(env.get("REFEREE_RECENT_GAMES", 4096)),
            fast_routes=env.get("REFEREE_FAST_ROUTES", "1") != "0",
            appendfsync=env.get("REFEREE_APPENDFSYNC", "everysec"),
        )
