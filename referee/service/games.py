"""Games, as use cases over the store: create a game, claim a seat, read a game as it is now
(its expired deadlines resolved and written, exactly once), commit a change, show a game's
record and events, resolve deadlines nobody looked at (``sweep``), and hear the commits of
every replica on the games this process serves waiters on (``follow``, in
``service.hearing``).

Redis holds every game; any replica may serve any request. A process remembers forms of the
games it served (``memory``) only to spare reads: a change is committed under a version
check, and a change built on a form that was out of date fails and is taken again on the
game as the failed commit found it. A refusal is never given from a remembered game, only
from one just read. The seats' own requests (their turn, their decisions) are in
``service.seats``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
import msgspec

from ..core.documents import decode_doc, first_deadline, invite_hash, next_version
from ..core.game import LoadedGame, new_game
from ..core.refusals import Refusal, busy, not_found
from ..core.replay import postal_report, replay
from ..core.views import Shown, game_summary
from ..games import new_seed
from ..store import STORE_UNAVAILABLE, GameStore, Stored
from . import wakes
from .finished import FinishedAnswers
from .limits import Limits
from .memory import InFlight, Memory
from .sealing import SealedGames

__all__ = ["MAX_RETRIES", "GameService"]

log = logging.getLogger("referee")
MAX_RETRIES = 20


class GameService(SealedGames):
    """The games of one Redis, as this process serves them (what it hears of their commits:
    ``HeardGames``)."""

    def __init__(
        self,
        store: GameStore,
        *,
        retention_s: int = 7 * 24 * 3600,
        events_retention_s: int = 600,
        recent_games: int = 4096,
        idle_ttl_s: int = 7 * 24 * 3600,
        limits: Limits | None = None,
        max_seats: int = 64,
        hear_linger_s: float = 30.0,
    ) -> None:
        self.store = store
        self.retention_s = retention_s
        # a game nobody changes for this long (no deadlines, abandoned) is dropped: every key
        # the referee writes expires, so no one can fill its Redis for good
        self.idle_ttl_s = idle_ttl_s
        # a finished game's event stream serves late listeners for a while; its record stays
        self.events_retention_s = events_retention_s
        self.memory = Memory(recent_games)
        self.limits = limits
        self.max_seats = max_seats
        # a game's channel is kept this long after its last waiter asked (a bot's loop waits
        # again within moments: it does not subscribe anew each time)
        self.hear_linger_s = hear_linger_s
        store.hearing.heard = self.memory.heard_commit
        store.hearing.lost = self.memory.stopped_hearing
        self._following: dict[str, asyncio.Future[None]] = {}
        # what is told from a finished game's whole replay, computed off the event loop
        self.answers = FinishedAnswers()
        # called with each game whose end this process committed (e.g. to compute its
        # answers before anyone asks); each must return at once
        self.on_finished: list[Callable[[LoadedGame], None]] = []

    # -- creating and joining ------------------------------------------------------------------

    async def create(
        self,
        ruleset_id: str,
        options: dict[str, Any],
        seats: list[dict[str, Any]],
        deadline_s: float,
        seed: bytes | None = None,
        *,
        game_id: str | None = None,
        token_hashes: list[bytes] | None = None,
        group: list[str] | None = None,
        owner: str = "",
        invite_code: str | None = None,
        tournament: str = "",
    ) -> tuple[LoadedGame, list[str | None]]:
        """Create a game (``core.game.new_game``) and the tokens of its named seats; a caller
        that names ``game_id`` may call again after a crash: an existing game of that id is
        returned, never a second one. ``owner``: whose live games count it (refused past
        the owner's quota); ``invite_code``: what claiming an open seat needs; ``tournament``:
        the tournament whose table it is (listed among its games too)."""
        if self.max_seats > 0 and len(seats) > self.max_seats:
            raise Refusal(
                "too-many-seats", f"at most {self.max_seats} seats per game here", field="seats"
            )
        game, handed = new_game(
            ruleset_id,
            options,
            seats,
            deadline_s,
            seed or new_seed(),
            time.time(),
            game_id=game_id,
            token_hashes=token_hashes,
            group=group,
            owner=owner,
            invite=invite_hash(invite_code),
            tournament=tournament,
        )
        limits = self.limits if owner else None
        if limits is not None:
            await limits.admit(owner, "games", game.doc.id)
        if not await self.write(game, listed_at=game.doc.created):
            if limits is not None:
                await limits.release(owner, "games", game.doc.id)
            if game_id is None:  # 64 random bits collided
                raise Refusal("busy", "try again", retry_after=1)
            return await self.load(game_id), handed  # created by an earlier attempt
        return game, handed

    async def claim(
        self,
        game_id: str,
        name: str,
        client_seed: str | None,
        invite_code: str | None = None,
        check: Callable[[], Awaitable[None]] | None = None,
    ) -> tuple[int, str]:
        """Seat a player in the game's first open seat; the seat and its token. ``check``:
        what else must hold of the claim, once the game's own checks passed (the game, its
        invite code, an open seat, the name), before it is written (the league's names)."""
        for _ in range(MAX_RETRIES):
            game = await self.load(game_id)
            seat, token = game.claim_seat(name, client_seed, time.time(), invite_code)
            if check is not None:
                await check()
            if await self.write(game):
                return seat, token
        raise busy()

    # -- reading -------------------------------------------------------------------------------

    async def load(self, game_id: str, *, reading: bool = False) -> LoadedGame:
        """The game as read now (``decoded``), its form remembered."""
        memory = self.memory
        epoch = memory.epoch_of(game_id)
        stored = await self.store.load(game_id)
        memory.remember(game_id, stored, epoch)
        return self.decoded(game_id, stored, reading)

    def decoded(self, game_id: str, stored: Stored, reading: bool = False) -> LoadedGame:
        """The game as ``stored`` gives it, expired deadlines resolved.

        ``reading``: the caller only reads the game, so the game decoded for the last reader of
        the same remembered form (the very object) may be shared, while none of its deadlines
        has passed. Else the caller changes it: a copy of that shared game where there is one
        (``LoadedGame.copied``: its document is not decoded again), or the form decoded.
        """
        if stored.blob is None:
            raise not_found("game", game_id)
        now, memory = time.time(), self.memory
        shared = self._decoded_for(game_id, stored)
        if shared is not None:
            if not reading:  # a copy to change
                return shared.copied(now)
            if (shared.first_deadline or math.inf) > now:
                return shared
        game = LoadedGame.read(stored.version, stored.blob, stored.last_event_id, now)
        if reading and not game.dirty and memory.remembered(game_id) is stored:
            memory.share(game_id, stored, game)
        return game

    def _decoded_for(self, game_id: str, stored: Stored | None) -> LoadedGame | None:
        """The game its readers share, decoded from ``stored`` (the very object); else None."""
        pair = self.memory.shared_reads.get(game_id) if stored is not None else None
        return pair[1] if pair is not None and pair[0] is stored else None

    def shared_for(self, game_id: str, stored: Stored | None) -> LoadedGame | None:
        """The game decoded for the readers of ``stored`` (the very object), while none of
        its deadlines has passed; else None."""
        game = self._decoded_for(game_id, stored)
        return (
            game if game is not None and (game.first_deadline or math.inf) > time.time() else None
        )

    def shared_now(self, game_id: str) -> LoadedGame | None:
        """The game as it is now, where its readers share it already: its commits heard, its
        form remembered (so proven current: ``proven_form``) and shared, no deadline due; else
        None (``proven_form`` and ``current`` look)."""
        memory = self.memory
        return (
            self.shared_for(game_id, memory.remembered(game_id)) if memory.hears(game_id) else None
        )

    async def current(
        self, game_id: str, stored: Stored | None = None, *, reading: bool = False
    ) -> LoadedGame:
        """The game as it is now: read (or taken as ``stored``, a form known to be current),
        its expired deadlines resolved and written (exactly once). ``reading``: the caller
        changes nothing of it (see ``decoded``)."""
        for _ in range(MAX_RETRIES):
            if stored is None:
                game = await self.load(game_id, reading=reading)
            else:
                game = self.decoded(game_id, stored, reading)
            if not game.dirty or await self.write(game):
                return game.as_stored() if game.dirty else game
            stored = game.now_stored
        raise busy()

    async def proven_form(self, game_id: str) -> Stored | None:
        """The game's remembered form, where it is the game as it is now: remembered while its
        commits are heard, and none heard after it. A commit of this process on its way,
        already heard, dropped the form remembered before it: its reply is as near as a
        read's would be (and, landed behind a later commit heard already, the next one's is).
        """
        memory = self.memory
        if not memory.hears(game_id):
            return None  # nothing is remembered of a game not heard
        for _ in range(MAX_RETRIES):
            known = memory.remembered(game_id)
            in_flight = memory.in_flight.get(game_id)
            if known is not None or in_flight is None:
                return known
            await in_flight.landed()
        return memory.remembered(game_id)

    # -- committing ----------------------------------------------------------------------------

    async def write(self, game: LoadedGame, listed_at: float | None = None) -> bool:
        """Commit the game's change: True, or False with the game as it now is in
        ``now_stored`` (the version had moved); ``listed_at``: see ``send``."""
        return await self.written(game, self.send(game, listed_at))

    def send(self, game: LoadedGame, listed_at: float | None = None) -> InFlight:
        """Queue the game's commit now (no await), and make it the base of this process's
        next decision on the game until its outcome is known; ``listed_at``: a new game,
        listed in the same write."""
        doc = game.doc
        blob = game.encoded()
        first = first_deadline(doc)
        # a hint is written when the game comes to have a deadline and dropped when it has
        # none left, not moved at every decision: deadlines are set ``deadline_s`` from the
        # moment they are set, so a game's first deadline never moves earlier and a hint
        # once right stays early enough; the sweep moves on a hint it finds early (``sweep``)
        hinted = game.first_deadline is not None
        hint: float | bool | None = False if (first is not None) == hinted else first
        version = next_version(game.version)
        events, untold = game.change.written()
        commit = self.store.send_commit(
            doc.id,
            game.version,
            version,
            blob,
            decisions=game.change.decisions,
            events=events,
            untold=untold,
            ttl=self.ttl_of(doc.status),
            events_ttl=self.events_retention_s if doc.status == "finished" else 0,
            deadline=hint,
            finished_for=doc.owner if doc.status == "finished" else "",
            listed_at=listed_at,
            # a tournament's list of its games lives as long as the longest-kept of them
            tournament=(doc.tournament, max(self.retention_s, self.idle_ttl_s))
            if listed_at is not None and doc.tournament
            else None,
        )
        memory = self.memory
        in_flight = InFlight(
            Stored(version, blob, game.last_event_id), commit, first, memory.epoch_of(doc.id)
        )
        memory.in_flight[doc.id] = in_flight
        return in_flight

    def ttl_of(self, status: str) -> int:
        """How long a game's or a tournament's keys live after a write: the retention once
        it is finished, else the idle time after which it is dropped."""
        return self.retention_s if status == "finished" else self.idle_ttl_s

    async def written(self, game: LoadedGame, in_flight: InFlight) -> bool:
        """The outcome of a commit sent (``send``); see ``write``."""
        game_id = game.doc.id
        memory = self.memory
        try:
            written = await self.store.committed(in_flight.commit)
            if isinstance(written, Stored):  # lost the race: here is the game as it is
                game.now_stored = written
                memory.remember(game_id, written, in_flight.epoch)
                return False
            # made anew: a NamedTuple's _replace costs twice as much
            stored = Stored(in_flight.stored.version, in_flight.stored.blob, written[-1])
            game.version, game.first_deadline = stored.version, in_flight.first_deadline
            game.last_event_id = stored.last_event_id
            memory.remember(game_id, stored, in_flight.epoch)
            if wakes.ENABLED:
                memory.committed(game_id, stored.last_event_id)
            if game.doc.status == "finished":
                for hook in self.on_finished:
                    hook(game)
            return True
        finally:
            if memory.in_flight.get(game_id) is in_flight:
                del memory.in_flight[game_id]
            in_flight.settle()

    async def decisions(self, game_id: str) -> list[bytes]:
        """The game's recorded decisions, as stored (a retried decision is answered from
        them)."""
        return await self.store.decisions(game_id)

    # -- what anyone may see -------------------------------------------------------------------

    async def view(self, game_id: str) -> Shown:
        """The public view, or the sealed view while the game's dice group plays on (the
        ruleset's ``game_view`` Struct)."""
        game = await self.current(game_id)
        return game.sealed_view() if await self.sealed(game) else game.public_view()

    async def record(self, game_id: str) -> Shown:
        """The game's record as far as it is disclosed (``LoadedGame.record``: the ruleset's
        ``record`` Struct); refused while the game is sealed."""
        game, decisions = await self._unsealed(game_id)
        return game.record(decisions)

    async def replay(self, game_id: str) -> bytes:
        """A finished game step by step (``core.replay``), encoded as JSON; refused while it
        is sealed. Computed in a worker thread once per process (``answers``)."""
        game, decisions = await self._unsealed(game_id)

        def compute() -> tuple[bytes, int]:
            encoded = msgspec.json.encode(replay(game, decisions))
            return encoded, len(encoded)

        # (refused before the end: replay raises it, so nothing is kept then)
        answer: bytes = await self.answers.get(("replay", game_id), compute)
        return answer

    async def report(self, game_id: str) -> dict[str, Any]:
        """The turn report of the rounds that are over (``core.replay``); refused while the
        game is sealed. Computed in a worker thread; kept once the game is over."""
        game, decisions = await self._unsealed(game_id)
        if game.doc.status != "finished":
            return await anyio.to_thread.run_sync(postal_report, game, decisions)

        def compute() -> tuple[dict[str, Any], int]:
            report = postal_report(game, decisions)
            return report, len(msgspec.json.encode(report))

        answer: dict[str, Any] = await self.answers.get(("report", game_id), compute)
        return answer

    async def _unsealed(self, game_id: str) -> tuple[LoadedGame, list[bytes]]:
        """The game and its decisions, for what is told from its record; refused while the
        game is sealed (``check_unsealed``)."""
        game = await self.current(game_id)
        await self.check_unsealed(game)
        return game, await self.store.decisions(game_id)

    async def listed(
        self, before: float | None, limit: int, tournament: str = ""
    ) -> dict[str, Any]:
        """A page of games, newest first, and the cursor of the next page (None at the
        end): of each, what even its sealed view shows."""
        found, following = await self.store.listed(before, limit, tournament)
        return {"games": [game_summary(decode_doc(blob)) for *_, blob in found], "next": following}

    async def events_after(
        self, game_id: str, after: str, wait_s: float | None
    ) -> list[tuple[str, str]]:
        """The game's events after ``after``, as (event id, JSON); with ``wait_s``, waiting
        that long for one: for a commit heard on the game's channel (then one read). The wait
        holds no connection; while the game's channel cannot be heard, it looks again after
        a second at most."""
        if wait_s:
            if not self.follows(game_id):
                try:
                    await self.follow(game_id)
                except STORE_UNAVAILABLE:
                    await asyncio.sleep(min(wait_s, 1.0))
                    return await self.store.events_after(game_id, after)
                # commits before the channel was heard went untold: read first
                entries = await self.store.events_after(game_id, after)
                if entries:
                    return entries
            elif self.memory.heard.get(game_id) is None:
                # heard, but no commit since the hearing began: what came before it (a reader
                # resuming from an older id) is known only to the store
                entries = await self.store.events_after(game_id, after)
                if entries:
                    return entries
            if await self.memory.hear({game_id: after}, wait_s) is None:
                return []
        return await self.store.events_after(game_id, after)

    async def sweep(self, lease_s: float = 0) -> int:
        """Resolve every game whose deadline passed; any replica may run this at any time.
        With ``lease_s``, only in the parts of the deadlines no other replica swept in the
        last ``lease_s`` (the replicas take them in turn)."""
        resolved = 0
        now = time.time()
        for game_id in await self.store.due(now, lease_s=lease_s):
            try:
                game = await self.current(game_id)
            except Refusal:
                await self.store.forget_deadline(game_id, now)
                continue
            first = first_deadline(game.doc)
            if first is None:
                await self.store.forget_deadline(game_id, now)
            else:  # a hint left early by the game's decisions (``send``) moves on
                await self.store.hint_deadline(game_id, first)
            resolved += 1
        return resolved

    async def sweep_forever(self, interval: float) -> None:
        while True:
            # a sweeper must not die; the next request to a game resolves it anyway
            with contextlib.suppress(Exception):
                await self.sweep(lease_s=interval)
            await asyncio.sleep(interval)
