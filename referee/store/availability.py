"""Whether the store answers, as this process last found it, and the log lines that say so.

Under load a store that does not answer refuses thousands of requests a minute; a line for
each buries everything else in the log. Every refusal for that reason is told here instead
(``refused``), and the log says it once when the store stops answering, then every
``every_s`` how many requests were refused meanwhile, and once when it answers again
(``answers``, told by the store's connections when one is made again, and by each answer
to the PING the connection that hears commits sends now and then).
"""

from __future__ import annotations

import logging
import time

from redis.exceptions import RedisError

__all__ = ["AVAILABILITY", "Availability", "StoreBusy"]

log = logging.getLogger("referee")


class StoreBusy(RedisError):
    """Every connection of a pool was in use and none came free in time: the referee's own
    limit, not a Redis that does not answer (it may answer well)."""


class Availability:
    """One process's view of its store: up until a refusal, down until a connection is made
    again; one log line per change, and a count of the refusals every ``every_s`` between."""

    def __init__(self, every_s: float = 60.0, quiet_s: float = 1.0) -> None:
        self.every_s = every_s
        # up again only after this long without a refusal: a store that answers a PING but
        # not the requests does not make a line each way every second
        self.quiet_s = quiet_s
        self.down = False
        self._since = 0.0  # when it was found down (monotonic)
        self._last = 0.0  # the last refusal
        self._busy = 0  # refusals for want of a free connection, since they were last counted
        self._busy_counted_at = -every_s
        self._counted_at = 0.0  # when the last count was logged
        self._refused = 0  # since the last count
        self._refused_in_all = 0  # since it was found down

    def refused(self, reason: BaseException) -> None:
        """A request refused (or an open stream ended) because the store did not answer, or
        had no connection free (``StoreBusy``: counted apart, the store is not down)."""
        now = time.monotonic()
        if isinstance(reason, StoreBusy):
            self._busy += 1
            if now - self._busy_counted_at >= self.every_s:
                log.warning(
                    "%d requests refused 503 store-busy in the last %.0f s: every connection "
                    "of a pool to Redis was in use",
                    self._busy,
                    min(now - self._busy_counted_at, self.every_s),
                )
                self._busy_counted_at, self._busy = now, 0
            return
        if not self.down:
            self.down, self._since, self._counted_at = True, now, now
            self._refused, self._refused_in_all = 0, 0
            log.warning(
                "Redis is unavailable (%s): requests are answered 503 redis-unavailable "
                "until it answers again",
                _reason(reason),
            )
        self._last = now
        self._refused += 1
        self._refused_in_all += 1
        if now - self._counted_at >= self.every_s:
            log.warning(
                "%d requests refused in the last %.0f s while Redis is unavailable",
                self._refused,
                now - self._counted_at,
            )
            self._counted_at, self._refused = now, 0

    def answers(self) -> None:
        """The store answered (a connection to it was made, a PING answered)."""
        if self.down and time.monotonic() - self._last >= self.quiet_s:
            self.down = False
            log.warning(
                "Redis is available again after %.1f s; %d requests were refused meanwhile",
                time.monotonic() - self._since,
                self._refused_in_all,
            )


def _reason(error: BaseException) -> str:
    return str(error) or type(error).__name__


#: the process's one view (the web layer's problems and the store's connections share it)
AVAILABILITY = Availability()
