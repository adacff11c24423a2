"""The garbage collector's policy for a long-running event loop (the referee, the bench's bots).

A request's objects die by reference count; the collector only ever finds the rare cycle, yet
each of its passes stops the event loop while it walks every object still alive. So:

- what lives as long as the process (modules, the app, the engines' caches, pools) is frozen,
  out of every pass: otherwise a full pass stalled the loop ~50 ms about once a second;
- young passes run every 50,000 allocations instead of 700, the older ones 50 times more
  rarely each instead of 10: at 700, the referee ran ~150 young passes a second, ~5 % of its
  CPU, and full passes of up to 50 ms still came every second or so under load.

Measured with ``referee bench`` (``benchmarks/results/README.md``).
"""

from __future__ import annotations

import gc

__all__ = ["settle_collector"]

THRESHOLDS = (50_000, 50, 50)


def settle_collector() -> None:
    """Call once everything long-lived exists: freeze it, and space the passes out."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
