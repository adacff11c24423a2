"""Redis stream ids, which only the store should have to read: their order."""

from __future__ import annotations

import functools

__all__ = ["event_order"]


@functools.lru_cache(maxsize=8192)
def event_order(event_id: str) -> tuple[int, int]:
    """Stream ids ("<ms>-<seq>", "0" for none) in the order Redis gave them; remembered, as
    each commit's id is compared some five times (heard, remembered, waited after)."""
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq or 0)
