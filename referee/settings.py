"""Configuration from the environment (every variable is documented in README.md)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

__all__ = ["Settings", "key_hashes"]


def key_hashes(value: str) -> tuple[str, ...]:
    """``REFEREE_ORGANIZER_KEYS``: comma-separated keys, each in clear or as ``sha256:<hex>``,
    kept as SHA-256 hex digests only (the clear form is never stored or logged)."""
    hashes = []
    for key in value.split(","):
        key = key.strip()
        if key.startswith("sha256:"):
            hashes.append(key.removeprefix("sha256:").lower())
        elif key:
            hashes.append(hashlib.sha256(key.encode()).hexdigest())
    return tuple(hashes)


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    return int(env.get(name, default))


class Settings(msgspec.Struct, frozen=True):
    """How a referee process runs: where its Redis is, how long games are kept, who may
    create them, and the limits that keep one client from using the referee up."""

    redis_url: str | None = None
    # REDIS_URL names one node of a Redis/Valkey Cluster (the others are learnt from it)
    redis_cluster: bool = False
    # seconds a store operation waits for Redis (a blocking read: beyond its own wait) before
    # the request is answered 503 redis-unavailable
    redis_timeout_s: float = 2.0
    # connections of redis-py's pool (per node on a cluster) for what is neither a game's read
    # or commit (one shared connection) nor a wait (none): past it, 503 store-busy
    redis_pool: int = 256
    # seconds a game's commits channel stays subscribed after its last waiter asked
    hear_linger_s: float = 30.0
    data_dir: Path = Path("data")
    retention_s: int = 7 * 24 * 3600
    idle_ttl_s: int = 7 * 24 * 3600
    events_retention_s: int = 600
    max_body_bytes: int = 64 * 1024
    sweep_interval_s: float = 0.5
    recent_games: int = 4096
    fast_routes: bool = True
    appendfsync: str = "everysec"
    # who may create games and tournaments: SHA-256 digests of the organizer keys (none: all)
    organizer_keys: tuple[str, ...] = ()
    # addresses of proxies whose X-Forwarded-For names the client
    trusted_proxies: tuple[str, ...] = ()
    # limits (0: off), shared by every replica through Redis
    rate_per_token: int = 100
    rate_per_address: int = 1000
    max_waiting_per_address: int = 256
    live_games_per_owner: int = 1000
    live_tournaments_per_owner: int = 20
    max_seats: int = 64
    max_entrants: int = 64
    # the HTTP server: seconds to send a request's headers, and to keep an idle connection
    header_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    max_connections_per_address: int = 256
    # idempotency keys: how long an answer is kept, and the secret its record derives from
    # (none: the replicas share one made in Redis)
    idempotency_ttl_s: int = 24 * 3600
    idempotency_secret: str | None = None
    # a request's head (431 past a limit, 414 for a request line too long; 0: no limit) and
    # the seconds its body may take to arrive, from the end of its headers (408 past them)
    max_header_line_bytes: int = 8 * 1024
    max_header_bytes: int = 64 * 1024
    max_header_fields: int = 100
    body_timeout_s: float = 10.0
    # the league (docs/LEAGUE.md): a bot's arena games a day and at once, and the league games
    # in a row it may let deadlines decide before it is paused
    bot_games_per_day: int = 2000
    bot_concurrent_games: int = 4
    bot_timeouts_to_pause: int = 3
    #: the least deadline_s of a league game (an arena seek, a challenge)
    bot_min_deadline_s: float = 1.0
    # a measure: each process writes how soon its woken waiters were answered to
    # ``<file>.<pid>`` (``service.wakes``); None: not timed
    wake_times: Path | None = None
    # a bot account's webhook turn calls that may fail in a row before the bot is paused
    bot_webhook_failures_to_pause: int = 5
    # webhook bots: hosts or CIDRs the SSRF guard lets through though not globally routable,
    # the calls at a time per host, the answer's size, and a delivery's claim (seconds)
    webhook_allow: tuple[str, ...] = ()
    webhook_per_host: int = 8
    webhook_max_body: int = 64 * 1024
    webhook_lease_s: float = 2.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """From the process's environment, or from ``env`` (a mapping of the same names)."""
        env = os.environ if env is None else env
        return cls(
            redis_url=env.get("REDIS_URL") or None,
            redis_cluster=env.get("REFEREE_REDIS_CLUSTER", "0") not in ("", "0"),
            redis_timeout_s=float(env.get("REFEREE_REDIS_TIMEOUT_S", 2)),
            redis_pool=_int(env, "REFEREE_REDIS_POOL", 256),
            hear_linger_s=float(env.get("REFEREE_HEAR_LINGER_S", 30)),
            data_dir=Path(env.get("REFEREE_DATA_DIR", "data")),
            retention_s=_int(env, "REFEREE_RETENTION_S", 7 * 24 * 3600),
            idle_ttl_s=_int(env, "REFEREE_IDLE_TTL_S", 7 * 24 * 3600),
            events_retention_s=_int(env, "REFEREE_EVENTS_RETENTION_S", 600),
            max_body_bytes=_int(env, "REFEREE_MAX_BODY_BYTES", 64 * 1024),
            sweep_interval_s=float(env.get("REFEREE_SWEEP_INTERVAL_S", 0.5)),
            recent_games=_int(env, "REFEREE_RECENT_GAMES", 4096),
            fast_routes=env.get("REFEREE_FAST_ROUTES", "1") != "0",
            appendfsync=env.get("REFEREE_APPENDFSYNC", "everysec"),
            organizer_keys=key_hashes(env.get("REFEREE_ORGANIZER_KEYS", "")),
            trusted_proxies=tuple(
                p.strip() for p in env.get("REFEREE_TRUSTED_PROXIES", "").split(",") if p.strip()
            ),
            rate_per_token=_int(env, "REFEREE_RATE_PER_TOKEN", 100),
            rate_per_address=_int(env, "REFEREE_RATE_PER_ADDRESS", 1000),
            max_waiting_per_address=_int(env, "REFEREE_MAX_WAITING_PER_ADDRESS", 256),
            live_games_per_owner=_int(env, "REFEREE_LIVE_GAMES_PER_ORGANIZER", 1000),
            live_tournaments_per_owner=_int(env, "REFEREE_LIVE_TOURNAMENTS_PER_ORGANIZER", 20),
            max_seats=_int(env, "REFEREE_MAX_SEATS", 64),
            max_entrants=_int(env, "REFEREE_MAX_ENTRANTS", 64),
            header_timeout_s=float(env.get("REFEREE_HEADER_TIMEOUT_S", 10)),
            keep_alive_s=float(env.get("REFEREE_KEEP_ALIVE_S", 5)),
            max_connections_per_address=_int(env, "REFEREE_MAX_CONNECTIONS_PER_ADDRESS", 256),
            idempotency_ttl_s=_int(env, "REFEREE_IDEMPOTENCY_TTL_S", 24 * 3600),
            idempotency_secret=env.get("REFEREE_IDEMPOTENCY_SECRET") or None,
            max_header_line_bytes=_int(env, "REFEREE_MAX_HEADER_LINE_BYTES", 8 * 1024),
            max_header_bytes=_int(env, "REFEREE_MAX_HEADER_BYTES", 64 * 1024),
            max_header_fields=_int(env, "REFEREE_MAX_HEADER_FIELDS", 100),
            body_timeout_s=float(env.get("REFEREE_BODY_TIMEOUT_S", 10)),
            bot_games_per_day=_int(env, "REFEREE_BOT_GAMES_PER_DAY", 2000),
            bot_concurrent_games=_int(env, "REFEREE_BOT_CONCURRENT_GAMES", 4),
            bot_timeouts_to_pause=_int(env, "REFEREE_BOT_TIMEOUTS_TO_PAUSE", 3),
            bot_min_deadline_s=float(env.get("REFEREE_BOT_MIN_DEADLINE_S", 1.0)),
            wake_times=Path(env["REFEREE_WAKE_TIMES"]) if env.get("REFEREE_WAKE_TIMES") else None,
            bot_webhook_failures_to_pause=_int(env, "REFEREE_BOT_WEBHOOK_FAILURES_TO_PAUSE", 5),
            webhook_allow=tuple(
                a.strip() for a in env.get("REFEREE_WEBHOOK_ALLOW", "").split(",") if a.strip()
            ),
            webhook_per_host=_int(env, "REFEREE_WEBHOOK_PER_HOST", 8),
            webhook_max_body=_int(env, "REFEREE_WEBHOOK_MAX_BODY_BYTES", 64 * 1024),
            webhook_lease_s=float(env.get("REFEREE_WEBHOOK_LEASE_S", 2)),
        )
