"""What a process hears of the games' commits: a game's channel subscribed while a seat or a
stream it serves waits on the game (``follow``; one attempt that every caller meanwhile
shares), let go once no one has asked for it in a while (``let_go``), and the store watched
so that a Redis that stops answering is one log line (``watch_store``). ``GameService``
builds on it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from ..store import STORE_UNAVAILABLE, GameStore, StoreError
from .memory import Memory

__all__ = ["HeardGames"]

log = logging.getLogger("referee")


class HeardGames:
    """The games whose commits this process hears, and the waits on them."""

    store: GameStore
    memory: Memory
    hear_linger_s: float
    _following: dict[str, asyncio.Future[None]]

    async def wait_for_commits(self, positions: dict[str, str], seconds: float) -> None:
        """Until any of several games (id -> the event id last seen) moves on, at most
        ``seconds``, from the commits heard on their channels; returns at once once it has
        just begun to hear one of them (the caller looks at them again: a commit before may
        have gone untold)."""
        fresh = [game_id for game_id in positions if not self.follows(game_id)]
        if fresh:
            try:
                await asyncio.gather(*(self.follow(game_id) for game_id in fresh))
            except STORE_UNAVAILABLE:
                await asyncio.sleep(min(seconds, 1.0))
            return
        await self.memory.hear(positions, seconds)

    def follows(self, game_id: str) -> bool:
        """Whether the game's commits are heard now; a waiter asks, so its channel is kept
        for ``hear_linger_s`` more."""
        memory = self.memory
        memory.used[game_id] = time.monotonic()
        return game_id in memory.hearing

    async def hear(self, game_id: str) -> None:
        """Hear the game's commits, if it is not heard yet (should Redis not answer, the
        read that follows says so; a wait then looks at the game now and then)."""
        if not self.follows(game_id):
            with contextlib.suppress(*STORE_UNAVAILABLE):
                await self.follow(game_id)

    async def follow(self, game_id: str) -> None:
        """Hear the game's commits from now on (its channel subscribed: one attempt that
        every caller meanwhile shares); raises one of ``STORE_UNAVAILABLE`` if Redis does
        not answer. A read of the game begun before this returned may have missed a commit."""
        memory = self.memory
        memory.used[game_id] = time.monotonic()
        if game_id in memory.hearing:
            return
        attempt = self._following.get(game_id)
        if attempt is None:
            attempt = self._following[game_id] = asyncio.ensure_future(self._subscribe(game_id))
            attempt.add_done_callback(lambda done: self._followed(game_id, done))
        await asyncio.shield(attempt)

    async def _subscribe(self, game_id: str) -> None:
        await self.store.hearing.subscribe(game_id)
        self.memory.started_hearing(game_id)  # in the same step: nothing heard is lost

    def _followed(self, game_id: str, attempt: asyncio.Future[None]) -> None:
        if self._following.get(game_id) is attempt:
            del self._following[game_id]
        if not attempt.cancelled():
            attempt.exception()  # told to every caller

    def let_go(self, idle_s: float | None = None) -> int:
        """Stop hearing the games no waiter has asked for in ``idle_s`` (``hear_linger_s``)
        and none waits on now; how many were let go."""
        memory, hearing = self.memory, self.store.hearing
        since = time.monotonic() - (self.hear_linger_s if idle_s is None else idle_s)
        gone = 0
        for game_id, used in list(memory.used.items()):
            if used > since or game_id in memory.waiting or game_id in self._following:
                continue
            del memory.used[game_id]
            if game_id in memory.hearing:
                hearing.unsubscribe(game_id)
                memory.stopped_hearing(game_id)
                gone += 1
        return gone

    async def let_go_forever(self) -> None:
        while True:
            await asyncio.sleep(max(0.05, self.hear_linger_s / 4))
            self.let_go()

    async def watch_store(self, retry_s: float = 1.0) -> None:
        """A PING every ``retry_s`` for as long as the process runs, so that a Redis that does
        not answer (an unreachable ``REDIS_URL`` at start too) is one log line, and one more
        when it answers again."""
        lost = False
        while True:
            try:
                await self.store.ping()
            except (StoreError, OSError) as exc:
                if not lost:
                    log.warning(
                        "%s does not answer (%s): /readyz says 503; trying again every %g s",
                        self.store.where,
                        (str(exc).strip().splitlines() or [type(exc).__name__])[0],
                        retry_s,
                    )
                lost = True
            else:
                if lost:
                    log.warning("%s answers again", self.store.where)
                lost = False
            await asyncio.sleep(retry_s)
