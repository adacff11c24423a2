"""What is told of a finished game from its whole replay (``getReplay``'s frames, the turn
report, the pages' compact replay): seconds of work for a large game (a 64-seat CHOICE game,
an 8-seat CHOPTA game of 1,000 rounds), so it is done in a worker thread, never on the event
loop, once per process, and kept: a finished game never changes.

What is kept is bounded by its encoded size (the replay of a 64-seat game is some 50 MB as
JSON), least recently used first out. Two requests for the same answer share one
computation, and one computation runs at a time, so that a burst of them takes one core of
the machine, not all of them. The process that commits a game's end may compute its answers
then, in the background (``GameService.on_finished``), so that even its first visitor waits
for nothing.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

__all__ = ["FinishedAnswers"]


class FinishedAnswers:
    """Answers computed from finished games' records, by key (e.g. ``("report", id)``)."""

    def __init__(self, max_bytes: int = 128 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._kept: OrderedDict[tuple[str, str], tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._computing: dict[tuple[str, str], asyncio.Future[Any]] = {}
        self._worker = anyio.CapacityLimiter(1)

    def kept(self, key: tuple[str, str]) -> Any | None:
        """The answer kept under ``key``, or None."""
        found = self._kept.get(key)
        if found is None:
            return None
        self._kept.move_to_end(key)
        return found[0]

    async def get(self, key: tuple[str, str], compute: Callable[[], tuple[Any, int]]) -> Any:
        """The answer under ``key``: kept, being computed (then awaited), or computed now in
        the worker thread by ``compute`` (which returns it with its size in bytes)."""
        found = self.kept(key)
        if found is not None:
            return found
        pending = self._computing.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._computing[key] = future
        try:
            answer, size = await anyio.to_thread.run_sync(compute, limiter=self._worker)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # (retrieved: a failure with no other waiter is not logged)
            raise
        finally:
            del self._computing[key]
        future.set_result(answer)
        self._keep(key, answer, size)
        return answer

    def _keep(self, key: tuple[str, str], answer: Any, size: int) -> None:
        if size > self.max_bytes:
            return
        self._kept[key] = (answer, size)
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, dropped) = self._kept.popitem(last=False)
            self._bytes -= dropped
