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

    async def wait_turn(self, game_id: str, token: str | None, wait_s: float) -> dict[str, Any]:
        """The seat's turn, waiting up to ``wait_s`` while it has nothing to decide.

        A remembered game may answer only where the game's events prove it current (read,
        or heard as commits): a wait with no event after it, or the newest event, written
        with it. A finished game never changes, and answers from memory while it is surely
        kept. A refusal comes only from the game as read.
        """
        games, memory = self.games, self.memory
        stop = time.monotonic() + wait_s
        if not games.follows(game_id):
            # heard before it is read, so that no commit after the read goes untold (should
            # Redis not answer, the read says so; the wait looks at the game now and then)
            with contextlib.suppress(*STORE_UNAVAILABLE):
                await games.follow(game_id)
        heard = memory.hears(game_id)
        known = memory.remembered(game_id)
        for _ in range(MAX_RETRIES):
            in_flight = memory.in_flight.get(game_id) if heard else None
            if known is not None or in_flight is None:
                break
            # a commit of this process on its way, already heard (which dropped the form
            # remembered before it): its reply is as near as a read's would be (and, landed
            # behind a later commit heard already, the next one's is)
            await in_flight.landed()
            known = memory.remembered(game_id)
        # not yet shown current; while heard, no commit was heard after it: current
        guess = known is not None and not heard
        last_id = None
        while True:
            try:
                game = await games.current(game_id, known, reading=True)
                seat = game.seat_of(token)
            except Refusal:
                if known is None:  # the game as read: a refusal
                    raise
                known, guess = None, False
                continue
            if known is not None and game.doc.status == "finished" and not self._surely_kept(game):
                known, guess = None, False  # it may have expired since: read it
                continue
            if last_id is None:
                last_id = game.last_event_id  # read with the game: no event slips between
            if guess and game.turn_status(seat) != "waiting":
                if game.doc.status == "finished" and self._surely_kept(game):
                    return game.turn(seat)
                known, guess, last_id = None, False, None  # to act on, read the game as it is
                continue
            known = None
            # the process stops (SIGTERM): answered now, as a wait that ran out
            remaining = 0.0 if memory.stopping else stop - time.monotonic()
            if not guess and (game.turn_status(seat) != "waiting" or remaining <= 0):
                return game.turn(seat)
            next_deadline = first_deadline(game.doc)
            block = max(0.0, remaining)
            if next_deadline is not None:
                block = max(0.05, min(block, next_deadline - time.time() + 0.01))
            try:
                if memory.hears(game_id):  # a commit heard, or the proof that none came
                    newest = await memory.hear({game_id: last_id}, block)
                else:
                    # not heard (its channel was lost, or could not be had): heard again, the
                    # game is read again (a commit may have gone untold); while Redis does not
                    # answer, it is looked at again in a while, holding no connection
                    try:
                        await games.follow(game_id)
                    except STORE_UNAVAILABLE:
                        await asyncio.sleep(min(block, 1.0))
                    newest = ""
            except (*STORE_UNAVAILABLE, asyncio.CancelledError):
                if guess:
                    raise
                return game.turn(seat)  # the wait was cut short: answer now
            guess = False  # an event read (or heard) followed: nothing came, or we read on
            if newest == "":  # not heard (or no longer): read the game
                last_id = None
                continue
            if newest is None:
                if time.monotonic() >= stop and (next_deadline or math.inf) > time.time():
                    return game.turn(seat)  # nothing happened: as it was
                continue
            last_id = newest
            recent = memory.remembered(game_id)
            in_flight = memory.in_flight.get(game_id)
            if getattr(recent, "last_event_id", None) != last_id and in_flight is not None:
                # the event may be this process's own commit, whose reply is still on its way
                await in_flight.landed()
                recent = memory.remembered(game_id)
            if recent is not None and recent.last_event_id == last_id:
                # written with the newest event, and every change adds one: the game as it is
                # now, without reading it again
                known = recent

    def _surely_kept(self, game: LoadedGame) -> bool:
        """A finished game stays, unchanged, for the retention after it ended."""
        finished_at = game.doc.finished_at
        return finished_at is not None and time.time() < finished_at + self.games.retention_s - 60

    async def move(
        self, game_id: str, token: str | None, seq: int, moves: list[Any]
    ) -> dict[str, Any]:
        """Decide on the game as this process last wrote or knew it, committed without
        reading; if it had moved, on the game as the failed commit found it.

        This process's decisions on a game take turns only until each one's commit is sent:
        the next builds on it while it is on its way, and is sent behind it on the same
        connection, so the two are answered in one round trip. Should the first fail, the
        version the second expects is nowhere, and the second is taken again like any
        decision that lost a race. A refusal, or a retry's answer from the record, is never
        given from a game not yet stored: the commit it builds on lands first, then the game
        is read.
        """
        games, memory = self.games, self.memory
        stored: Stored | None = None
        guess = True  # known, not read: good to commit on, not to refuse
        for _ in range(MAX_RETRIES):
            async with memory.one_at_a_time(game_id):
                in_flight = None
                if guess:
                    in_flight = memory.in_flight.get(game_id)
                    if in_flight is not None and not in_flight.commit.queued:
                        in_flight = None  # no connection yet: not surely sent before this one
                    stored = in_flight.stored if in_flight else memory.remembered(game_id)
                    guess = stored is not None
                if stored is None:
                    game = await games.load(game_id)
                else:
                    game = games.decoded(game_id, stored)
                try:
                    answer, sent = await self._decide(game, token, seq, moves)
                except Refusal:
                    if not guess:
                        raise
                    answer, sent, game.now_stored = None, None, None  # ask the store first
                if in_flight is not None and sent is None:
                    await in_flight.landed()  # then read the game as it is
                    answer, game.now_stored = None, None
            if sent is not None:
                if await games.written(game, sent):
                    self._share_decided(game)
                    return answer  # type: ignore[return-value]  # sent: _decide answered
            elif answer is not None:
                return answer
            stored, guess = game.now_stored, False
        raise busy()

    async def move_then_turn(
        self, game_id: str, token: str | None, seq: int, moves: list[Any], wait_s: float
    ) -> dict[str, Any]:
        """A decision, then the seat's next turn, long-polled up to ``wait_s``: a bot's
        whole loop in one request. Sent again, it is answered alike (a seq decided with the
        same decision is answered from the record), with the turn as it is then."""
        answer = await self.move(game_id, token, seq, moves)
        return {**answer, "turn": await self.wait_turn(game_id, token, wait_s)}

    def _share_decided(self, game: LoadedGame) -> None:
        """A decision's game, as just stored and remembered, for its readers to share (the
        seats' turns come next); the decision is done with it."""
        game_id = game.doc.id
        stored = self.memory.remembered(game_id)
        if stored is not None and stored.version == game.version:
            game.change, game.dirty = Change(), False
            self.memory.share(game_id, stored, game)

    async def _decide(
        self, game: LoadedGame, token: str | None, seq: int, moves: list[Any]
    ) -> tuple[dict[str, Any] | None, InFlight | None]:
        """One try at a decision: the answer and the commit it waits for (None for an answer
        from the record), or no answer if the game must be taken again."""
        seat = game.seat_of(token)
        current = game.current_seq(seat)
        if seq != current:
            if game.dirty:  # resolve expired deadlines first, then answer
                await self.games.write(game)
                return None, None
            if seq < current:
                decisions = await self.games.store.decisions(game.doc.id)
                retried = game.retried(seat, seq, moves, decisions)
                if retried is not None:
                    return retried, None
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
        return answer, self.games.send(game)
