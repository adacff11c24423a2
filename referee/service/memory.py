"""What one referee process remembers of the games it serves, between requests; Redis holds
the truth, this only spares reads and round trips:

- ``recent``: the newest stored form of each game read or written lately, a base to commit a
  decision on without reading first (a commit on a stale form fails and returns the game as
  it is); never an answer by itself;
- ``in_flight``: this process's commit of a game that is on its way: the next decision on
  that game builds on it and is sent behind it;
- ``turns``: per game, this process's decisions take turns (``TurnTaking``) until each
  one's commit is sent;
- ``hearing``: the games whose commits this process hears now (on each game's own channel,
  which every replica publishes its commits to; ``store.hearing``), each with the epoch its
  hearing began; ``used``: when each game was last asked for by a waiter (its channel is let
  go a while after);
- ``heard``: the newest commit heard of each game; a remembered form older than that is
  dropped, and the seats and streams ``waiting`` for a game are woken by it;
- ``shared_reads``: the decoded game of a remembered form, shared by the readers who come
  within moments of its commit;
- ``released``: grouped games seen over with their whole group, never sealed again.

Only a game whose commits are heard is remembered, and then it is the game as it is (to within
the moment a commit takes to be heard). Whenever hearing a game starts or stops, what is
remembered of it is dropped, as its commits may have gone unheard, and a read begun before
its hearing began is not remembered.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

from lru import LRU

from ..core.documents import version_number
from ..core.game import LoadedGame
from ..store import Commit, Stored, event_order
from . import wakes

__all__ = ["InFlight", "Memory", "TurnTaking"]

#: games whose decoded form readers share (a few: each is some thirty objects that the
#: garbage collector's full passes walk, and those passes stall the event loop)
SHARED_READS = 256


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)


class InFlight:
    """A commit of this process on its way: the game as it will be stored if it lands."""

    __slots__ = ("commit", "epoch", "first_deadline", "landed_waiters", "settled", "stored")

    def __init__(self, stored: Stored, commit: Commit, first_deadline: float | None, epoch: int):
        self.stored = stored  # its newest event id is the one before it: not to wait after
        self.commit = commit
        self.first_deadline = first_deadline
        self.epoch = epoch
        self.settled = False
        self.landed_waiters: list[asyncio.Future[None]] | None = None

    @property
    def queued(self) -> bool:
        """Whether the commit is queued on its connection: a later one is surely sent after
        it (none is queued while the connection is being made)."""
        return self.commit.queued

    async def landed(self) -> None:
        """Until the commit's outcome is known (and, written, remembered)."""
        if not self.settled:
            future = asyncio.get_running_loop().create_future()
            if self.landed_waiters is None:
                self.landed_waiters = []
            self.landed_waiters.append(future)
            await future

    def settle(self) -> None:
        self.settled = True
        for future in self.landed_waiters or ():
            _settle(future, None)


class TurnTaking:
    """A lock on one game's decisions in this process, kept in ``turns`` while anyone holds
    or waits for it; the turn passes to the waiters in the order they came. An async context
    manager of its own (contextlib's, a generator per decision, cost about 5 % of one), and
    no ``asyncio.Lock``: nearly every decision finds its game's turn free, and takes it
    without an object or an await more."""

    __slots__ = ("game_id", "held", "turns", "users", "waiters")

    def __init__(self, turns: dict[str, TurnTaking], game_id: str) -> None:
        self.turns = turns
        self.game_id = game_id
        self.held = False
        self.users = 0
        self.waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        self.users += 1
        if not self.held:
            self.held = True
            return
        waiter = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        try:
            await waiter  # handed the turn: ``held`` stays True
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._pass_on()  # handed the turn, then cancelled: the next one takes it
            elif waiter in self.waiters:  # not passed over yet
                self.waiters.remove(waiter)
            self._leave()
            raise

    async def __aexit__(self, *_: object) -> None:
        self._pass_on()
        self._leave()

    def _pass_on(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.held = False

    def _leave(self) -> None:
        self.users -= 1
        if not self.users:
            del self.turns[self.game_id]


class Memory:
    """What this process remembers of games (see the module's doc)."""

    def __init__(self, recent_games: int = 4096) -> None:
        self.recent: LRU[str, Stored] | None = LRU(recent_games) if recent_games > 0 else None
        self.in_flight: dict[str, InFlight] = {}
        self.turns: dict[str, TurnTaking] = {}
        self.loop: asyncio.AbstractEventLoop | None = None  # the one hearing
        self.hearing: dict[str, int] = {}  # game id -> the epoch its hearing began (> 0)
        self.used: dict[str, float] = {}  # game id -> when a waiter last asked (monotonic)
        self._epochs = 0
        # it needs to outlast only a read or a commit in flight
        self.heard: LRU[str, str] = LRU(max(16384, recent_games))
        self.waiting: dict[str, list[asyncio.Future[str | None]]] = {}
        self.shared_reads: LRU[str, tuple[Stored, LoadedGame]] = LRU(SHARED_READS)
        self.released: LRU[str, bool] = LRU(4096)
        self.stopping = False  # the process stops: no wait lasts
        # while wakes are timed (``wakes``): when each game's newest commit heard was first
        # known, and this process's own newest commit (its event id, when its reply came)
        self.heard_ns: LRU[str, int] = LRU(16384)
        self.committed_ns: LRU[str, tuple[str, int]] = LRU(16384)

    # -- remembered forms ----------------------------------------------------------------------

    def remember(self, game_id: str, stored: Stored, epoch: int) -> None:
        """Keep the newest stored form of a game heard, read or written since ``epoch``
        (``epoch_of``, taken before the read or the commit) began."""
        if self.recent is None or stored.blob is None or not epoch:
            return  # not heard: its next commit could go untold
        if self.hearing.get(game_id) != epoch:
            return  # asked before its hearing started or stopped: unproven
        heard = self.heard.get(game_id)
        if heard is not None and event_order(heard) > event_order(stored.last_event_id):
            return  # read or committed before a commit already heard: out of date
        known = self.recent.get(game_id)
        # a read answered after a newer commit of this process must not replace it
        if known is None or version_number(known.version) <= version_number(stored.version):
            self.recent[game_id] = stored

    def remembered(self, game_id: str) -> Stored | None:
        return self.recent.get(game_id) if self.recent is not None else None

    def share(self, game_id: str, stored: Stored, game: LoadedGame) -> None:
        """The readers of ``stored`` (the very object) take ``game`` instead of decoding the
        form again; nothing changes it any more, so its public view is built once for all."""
        game.shared = True
        self.shared_reads[game_id] = (stored, game)

    def one_at_a_time(self, game_id: str) -> TurnTaking:
        """This process's decisions on one game take turns until each one's commit is sent:
        the next builds on it instead of losing a race to it (replicas still race, safely)."""
        turn = self.turns.get(game_id)
        if turn is None:
            turn = self.turns[game_id] = TurnTaking(self.turns, game_id)
        return turn

    # -- commits heard -------------------------------------------------------------------------

    def epoch_of(self, game_id: str) -> int:
        """The epoch of the game's hearing (0: not heard), to be given to ``remember``."""
        return self.hearing.get(game_id, 0)

    def hears(self, game_id: str) -> bool:
        return game_id in self.hearing

    def started_hearing(self, game_id: str) -> None:
        """The game's channel is subscribed: its commits are heard from now on; what was
        known of it before is not proven current."""
        self.loop = asyncio.get_running_loop()
        self._epochs += 1
        self.hearing[game_id] = self._epochs
        self._forget(game_id)

    def stopped_hearing(self, game_id: str) -> None:
        """The game's commits are no longer heard (its channel's connection was lost, its slot
        moved, or it was let go): nothing of it is remembered, and its waiters look at it
        again (told "")."""
        if self.hearing.pop(game_id, None) is None:
            return
        self._forget(game_id)
        for future in self.waiting.pop(game_id, ()):
            _settle(future, "")

    def _forget(self, game_id: str) -> None:
        if self.recent is not None:
            self.recent.pop(game_id, None)
        self.shared_reads.pop(game_id, None)

    def stop_waiting(self) -> None:
        """The process stops: every seat and stream waiting to hear wakes now, and no wait
        begins any more (each answers as a wait that ran out would)."""
        self.stopping = True
        waiting, self.waiting = self.waiting, {}
        for futures in waiting.values():
            for future in futures:
                _settle(future, None)

    def heard_commit(self, game_id: str, event_id: str) -> None:
        """A commit of any replica: newer than a remembered form, it drops it; it wakes the
        game's waiting seats and streams."""
        order = event_order(event_id)
        heard = self.heard.get(game_id)
        if heard is None or event_order(heard) < order:
            self.heard[game_id] = event_id
            if wakes.ENABLED:
                self._known_at(game_id, event_id)
        known = self.remembered(game_id)
        if known is not None and event_order(known.last_event_id) < order:
            # remembered: ``recent`` is not None
            del self.recent[game_id]  # type: ignore[union-attr]
        for future in self.waiting.pop(game_id, ()):
            _settle(future, event_id)

    def committed(self, game_id: str, event_id: str) -> None:
        """This process's own commit of the game just landed (only while wakes are timed)."""
        self.committed_ns[game_id] = (event_id, time.perf_counter_ns())

    def _known_at(self, game_id: str, event_id: str) -> None:
        own = self.committed_ns.get(game_id)
        self.heard_ns[game_id] = (
            own[1] if own is not None and own[0] == event_id else time.perf_counter_ns()
        )

    async def hear(self, positions: dict[str, str], seconds: float) -> str | None:
        """The newest event id heard of a game (id -> event id) after its position, waiting
        up to ``seconds`` (none once the process stops); None if nothing came, "" if one of the
        games is not heard (or stopped being heard meanwhile)."""
        # where the commits are heard: asyncio.get_running_loop() costs a getpid() each time
        loop = self.loop or asyncio.get_running_loop()
        stop = loop.time() + seconds
        after = {game_id: event_order(event_id) for game_id, event_id in positions.items()}
        if wakes.ENABLED:
            wakes.woken(0)
        while True:
            for game_id, order in after.items():
                heard = self.heard.get(game_id)
                if heard is not None and event_order(heard) > order:
                    if wakes.ENABLED:
                        wakes.woken(self.heard_ns.get(game_id, 0))
                    return heard
            hearing = self.hearing
            if any(game_id not in hearing for game_id in after):
                return ""
            remaining = stop - loop.time()
            if remaining <= 0 or self.stopping:
                return None
            future: asyncio.Future[str | None] = loop.create_future()
            for game_id in after:
                self.waiting.setdefault(game_id, []).append(future)
            timer = loop.call_later(remaining, _settle, future, None)
            try:
                heard = await future
            finally:
                timer.cancel()
                for game_id in after:
                    waiting = self.waiting.get(game_id)
                    if waiting is not None and future in waiting:
                        waiting.remove(future)
                        if not waiting:
                            del self.waiting[game_id]
            if heard == "":
                return ""
