"""How soon a woken waiter is answered, as its process sees it: from the moment the process
first knows of the commit that woke it (heard on the game's channel, or the reply to its own
commit, whichever came first) to the moment the waiter's answer is handed to the transport.

A measure, off unless ``REFEREE_WAKE_TIMES`` names a file (``benchmarks/thinking_bots.py``
sets it): then each wake costs two clock readings and a histogram count, and the process
writes its histogram to ``<file>.<pid>`` every second. Off, the code it touches tests one
module flag. Only the answers the server's protocol writes itself (``web.serving``: a seat's
turn and decision, long-polled) are counted; an answer that followed no commit heard (a wait
that ran out, a turn that was already the seat's) is not.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from contextvars import ContextVar
from pathlib import Path

__all__ = [
    "WakeTimes",
    "answered",
    "bucket_ns",
    "enable",
    "percentile",
    "times",
    "woken",
    "write_forever",
]

#: whether wakes are timed (``enable``); a module flag, read where a wake happens
ENABLED = False

#: the bucket of a duration: its bit length and the next ``_FINE`` bits (1/16 of an octave)
_FINE = 4

# the moment (perf_counter_ns) the commit that woke this request's wait was first known; 0: none
_woken: ContextVar[int] = ContextVar("referee_woken", default=0)


class WakeTimes:
    """A histogram of durations in nanoseconds, in buckets at most 1/16 of their durations
    wide (a bucket's middle is within 3.2 % of every duration it counts)."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}

    def add(self, ns: int) -> None:
        shift = max(ns.bit_length() - 1 - _FINE, 0)
        # its octave, then its top bits: the buckets sort as their durations do
        bucket = (shift << (_FINE + 1)) | (ns >> shift)
        self.counts[bucket] = self.counts.get(bucket, 0) + 1


def bucket_ns(bucket: int) -> float:
    """The middle of a bucket's durations."""
    shift, top = bucket >> (_FINE + 1), bucket & ((2 << _FINE) - 1)
    return (top << shift) + (1 << shift) / 2


def percentile(counts: dict[int, int], q: float) -> float | None:
    """The ``q`` quantile (0..1) of a histogram's durations, in milliseconds."""
    total = sum(counts.values())
    if not total:
        return None
    rank, seen = q * total, 0
    for bucket in sorted(counts):
        seen += counts[bucket]
        if seen >= rank:
            return bucket_ns(bucket) / 1e6
    return bucket_ns(max(counts)) / 1e6


times = WakeTimes()


def enable() -> None:
    global ENABLED
    ENABLED = True


def woken(at_ns: int) -> None:
    """The request's wait ended on a commit first known at ``at_ns`` (0: on none)."""
    _woken.set(at_ns)


def answered() -> None:
    """The request's answer was just handed to the transport: counted if a commit woke it."""
    at_ns = _woken.get()
    if at_ns:
        _woken.set(0)
        times.add(time.perf_counter_ns() - at_ns)


async def write_forever(path: Path, every_s: float = 1.0) -> None:
    """The histogram, to ``<path>.<pid>`` every ``every_s`` (written whole, then renamed)."""
    target = Path(f"{path}.{os.getpid()}")
    partial = target.with_name(target.name + ".partial")
    while True:
        await asyncio.sleep(every_s)
        partial.write_text(json.dumps({str(k): v for k, v in times.counts.items()}))
        partial.replace(target)
