"""What a seat asks of a game, nearly every request of a tournament: its turn (long-polled)
and a decision. Both answer from a remembered game where that is proven safe, and commit a
decision without reading the game first (``service.memory``); a refusal comes only from the
game as read.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from typing import Any

from ..core.documents import first_deadline
from ..core.game import Change, LoadedGame
from ..core.refusals import Refusal, busy
from ..store import STORE_UNAVAILABLE, Stored
from .games import MAX_RETRIES, GameService
from .memory import InFlight

__all__ = ["Seats"]


class Seats:
    """The seats' requests on the games of a ``GameService``."""

    def __init__(self, games: GameService) -> None:
        self.games = games
        self.memory = games.memory

    # -- a seat's turn -------------------------------------------------------------------------

    async def wait_turn(
        self,
        game_id: str,
        token: str | None,
        wait_s: float,
        decided: int | None = None,
    ) -> dict[str, Any]:
        """The seat's turn, waiting up to ``wait_s`` while it has nothing to decide.

        The game's commits are heard before it is read, so that no commit after the read goes
        untold. A remembered form answers only where the commits heard prove it current; a
        refusal comes only from the game as read. Each pass of the outer loop starts from
        the game as it is now and waits after its newest event; a pass ends when the game's
        commits stop being heard (a commit may then have gone untold: the game is read again).
        ``decided``: the seat, whose decision just stored and shared the game: the first pass
        starts from the game shared as proven current (``GameService.shared_now``), as a pass
        woken by a commit does (``shared_for``), without looking the game up again.
        """
        stop = time.monotonic() + wait_s
        first = None
        if decided is not None and self.games.follows(game_id):  # follows: the hearing is kept
            first = self._kept(self.games.shared_now(game_id), decided)
        known = None
        if first is None:
            await self.games.hear(game_id)
            known = await self.games.proven_form(game_id)
        while True:
            if first is not None:
                (game, seat), first = first, None
            else:
                game, seat = await self._game_now(game_id, token, known)
            after = game.last_event_id  # read with the game: no event slips between
            while True:
                remaining = self._remaining(stop)
                if game.turn_status(seat) != "waiting" or remaining <= 0:
                    return game.turn(seat)
                next_deadline = first_deadline(game.doc)
                try:
                    newest = await self._next_commit(game_id, after, remaining, next_deadline)
                except (*STORE_UNAVAILABLE, asyncio.CancelledError):
                    return game.turn(seat)  # the wait was cut short: answer now
                if newest == "":
                    break  # not heard (or no longer): read the game and wait after it
                if newest is None:  # nothing heard: the wait ran out, or a deadline is due
                    if time.monotonic() >= stop and (next_deadline or math.inf) > time.time():
                        return game.turn(seat)  # nothing happened: as it was
                    game, seat = await self._game_now(game_id, token, None)
                    continue
                after = newest
                form = await self._form_at(game_id, newest)
                shared = self._kept(self.games.shared_for(game_id, form), seat)
                game, seat = shared or await self._game_now(game_id, token, form)
            known = None

    def _kept(self, shared: LoadedGame | None, seat: int) -> tuple[LoadedGame, int] | None:
        """A game the readers share as proven current (``GameService.shared_for``), with
        ``seat`` (a token's seat never changes: no hash of the token again), where
        ``_game_now`` would take it too: not a finished game that may have expired; else
        None (``_game_now`` then looks)."""
        return (shared, seat) if shared is not None and self._surely_kept(shared) else None

    async def _game_now(
        self, game_id: str, token: str | None, known: Stored | None
    ) -> tuple[LoadedGame, int]:
        """The game as it is now and the token's seat in it: from ``known``, a form proven
        current, unless it would refuse or a finished game may have expired since; else as
        read, whose refusal is the answer."""
        games = self.games
        if known is not None:
            with contextlib.suppress(Refusal):
                game = await games.current(game_id, known, reading=True)
                seat = game.seat_of(token)
                if self._surely_kept(game):
                    return game, seat
        game = await games.current(game_id, reading=True)
        return game, game.seat_of(token)

    def _remaining(self, stop: float) -> float:
        """How long the wait may last yet; nothing once the process stops (SIGTERM): each
        wait is answered now, as a wait that ran out."""
        return 0.0 if self.memory.stopping else stop - time.monotonic()

    async def _next_commit(
        self, game_id: str, after: str, remaining: float, next_deadline: float | None
    ) -> str | None:
        """The newest commit heard of the game after the event ``after``, waiting at most
        ``remaining`` and until just past the game's next deadline; None if none came, ""
        if the game is not heard (or stopped being heard meanwhile)."""
        block = remaining
        if next_deadline is not None:
            block = max(0.05, min(block, next_deadline - time.time() + 0.01))
        memory = self.memory
        if memory.hears(game_id):
            return await memory.hear({game_id: after}, block)
        # not heard (its channel was lost, or could not be had): heard again, the game is read
        # again; while Redis does not answer, it is looked at again in a while, holding no
        # connection
        try:
            await self.games.follow(game_id)
        except STORE_UNAVAILABLE:
            await asyncio.sleep(min(block, 1.0))
        return ""

    async def _form_at(self, game_id: str, event_id: str) -> Stored | None:
        """The remembered form written with the event ``event_id``, the newest heard: every
        change adds an event, so it is the game as it is now. The event may be this
        process's own commit, whose reply is still on its way. None: read the game."""
        memory = self.memory
        recent = memory.remembered(game_id)
        in_flight = memory.in_flight.get(game_id)
        if in_flight is not None and (recent is None or recent.last_event_id != event_id):
            await in_flight.landed()
            recent = memory.remembered(game_id)
        return recent if recent is not None and recent.last_event_id == event_id else None

    def _surely_kept(self, game: LoadedGame) -> bool:
        """Whether a game known as current is still there to answer from: one not finished
        is; a finished one stays, unchanged, for the retention after it ended."""
        if game.doc.status != "finished":
            return True
        finished_at = game.doc.finished_at
        return finished_at is not None and time.time() < finished_at + self.games.retention_s - 60

    # -- a seat's decision ---------------------------------------------------------------------

    async def move(
        self, game_id: str, token: str | None, seq: int, moves: list[Any]
    ) -> dict[str, Any]:
        """Decide on the game (``_move``): the answer."""
        return (await self._move(game_id, token, seq, moves))[0]

    async def _move(
        self, game_id: str, token: str | None, seq: int, moves: list[Any]
    ) -> tuple[dict[str, Any], int | None]:
        """Decide on the game as this process last wrote or knew it, committed without
        reading; if it had moved, on the game as the failed commit found it.

        This process's decisions on a game take turns only until each one's commit is sent:
        the next builds on it while it is on its way, and is sent behind it on the same
        connection, so the two are answered in one round trip. Should the first fail, the
        version the second expects is nowhere, and the second is taken again like any
        decision that lost a race. A refusal, or a retry's answer from the record, is never
        given from a game not yet stored: the commit it builds on lands first, then the game
        is read. With the answer: the seat, if the game it stored is shared with its readers
        (the turn that follows among them); None if the answer came from the record.
        """
        games, memory = self.games, self.memory
        stored: Stored | None = None
        from_memory = True  # the first try builds on what this process knows, unread
        for _ in range(MAX_RETRIES):
            async with memory.one_at_a_time(game_id):
                in_flight = None
                if from_memory:
                    in_flight, stored = self._base(game_id)
                    from_memory = stored is not None
                if stored is None:
                    game = await games.load(game_id)
                else:
                    game = games.decoded(game_id, stored)
                try:
                    answer, sent, seat = await self._decide(game, token, seq, moves)
                except Refusal:
                    if not from_memory:
                        raise
                    # known, not read: good to commit on, not to refuse; ask the store first
                    answer, sent, seat, game.now_stored = None, None, -1, None
                if in_flight is not None and sent is None:
                    await in_flight.landed()  # then read the game as it is
                    answer, game.now_stored = None, None
            if sent is not None:
                if await games.written(game, sent):
                    # sent: _decide answered
                    return answer, self._share_decided(game, seat)  # type: ignore[return-value]
            elif answer is not None:
                return answer, None
            stored, from_memory = game.now_stored, False
        raise busy()

    def _base(self, game_id: str) -> tuple[InFlight | None, Stored | None]:
        """What a decision builds on without reading: this process's commit on its way (if
        surely sent before the decision's own) and the form it stores, or the form
        remembered."""
        in_flight = self.memory.in_flight.get(game_id)
        if in_flight is not None and in_flight.queued:
            return in_flight, in_flight.stored
        return None, self.memory.remembered(game_id)

    async def move_then_turn(
        self, game_id: str, token: str | None, seq: int, moves: list[Any], wait_s: float
    ) -> dict[str, Any]:
        """A decision, then the seat's next turn, long-polled up to ``wait_s``: a bot's
        whole loop in one request. Sent again, it is answered alike (a seq decided with the
        same decision is answered from the record), with the turn as it is then."""
        answer, decided = await self._move(game_id, token, seq, moves)
        return {**answer, "turn": await self.wait_turn(game_id, token, wait_s, decided)}

    def _share_decided(self, game: LoadedGame, seat: int) -> int | None:
        """A decision's game, as just stored and remembered, for its readers to share (the
        seats' turns come next); the decision is done with it. The deciding ``seat``, or
        None if the game is not what is remembered."""
        game_id = game.doc.id
        stored = self.memory.remembered(game_id)
        if stored is None or stored.version != game.version:
            return None
        game.change, game.dirty = Change(), False
        self.memory.share(game_id, stored, game)
        return seat

    async def _decide(
        self, game: LoadedGame, token: str | None, seq: int, moves: list[Any]
    ) -> tuple[dict[str, Any] | None, InFlight | None, int]:
        """One try at a decision: the answer and the commit it waits for (None for an answer
        from the record), or no answer if the game must be taken again; and the seat."""
        seat = game.seat_of(token)
        current = game.current_seq(seat)
        if seq != current:
            if game.dirty:  # resolve expired deadlines first, then answer
                await self.games.write(game)
                return None, None, seat
            if seq < current:
                decisions = await self.games.decisions(game.doc.id)
                retried = game.retried(seat, seq, moves, decisions)
                if retried is not None:
                    return retried, None, seat
                raise Refusal(
                    "seq-already-decided",
                    f"seq {seq} was decided with a different decision; the current seq is "
                    f"{current}",
                    field="seq",
                    current_seq=current,
                )
            raise Refusal(
                "seq-mismatch",
                f"the current seq of this seat is {current}, not {seq}",
                field="seq",
                current_seq=current,
            )
        try:
            answer = game.decide(seat, seq, moves, time.time())
        except Refusal:
            if game.dirty:  # expired deadlines were resolved on load: keep that, not this
                await self.games.write(game)
            raise
        return answer, self.games.send(game), seat
