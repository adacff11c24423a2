"""The referee's game service: translates requests into rules-engine calls and Redis writes.

Stateless: every answer comes from the game as Redis holds it; the rules decide, and every
change commits with a version check, retrying on a lost race. Expired deadlines are resolved by
whoever touches the game first; the version check makes that happen exactly once.

A process remembers the newest stored form of the games it has read or written lately
(``recent``). A decision is tried on that form first and committed without reading: if the game
moved meanwhile (another seat, another replica), the commit fails and returns the game as it
is, and the decision is tried again on that. A refusal is never given from a remembered game,
only from one just read. While a commit of this process is on its way, the game's next
decision builds on it and is sent behind it on the same connection (``move``): a version is
never written twice, so a decision built on a commit that then fails can only fail too.

The process listens to every replica's commits (``watch_commits``; the store publishes each
one). A game heard to have moved past its remembered form is forgotten, and a form read or
written before listening started (or stopped) is not remembered, so while listening, a
remembered game is the game as it is (to within the moment a commit takes to be heard, a moment
in which a deadline could as well have passed): a turn is told from it, and a waiting seat is
woken by the commit it waits for. While not listening, a turn is told from a remembered game
only once an event read shows it current, or when the game is finished (it never changes
again).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import hmac
import itertools
import logging
import math
import secrets
import time
from typing import Any

import msgspec
from lru import LRU
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .games import (
    GameError,
    RuleViolation,
    chain_link,
    chain_start,
    final_seats,
    get_ruleset,
    new_seed,
    record_decision,
)
from .games import commitment as seed_commitment
from .games import dice_key as make_dice_key
from .games._common import check_seats, plain
from .store import DEADLINES, EVENTS_PER_READ, Commit, Store, Stored

__all__ = ["ApiError", "GameDoc", "GameService", "SeatDoc"]

log = logging.getLogger("referee")
MAX_RETRIES = 20
#: games whose decoded form readers share (see GameService._read)
SHARED_READS = 256
CONFLICT_CODES = {"not-your-turn", "game-over"}


class ApiError(Exception):
    """An error the API turns into an RFC 9457 problem; nothing was changed."""

    def __init__(
        self, status: int, code: str, detail: str, *, field: str | None = None, **extra: Any
    ) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail, self.field, self.extra = (
            status,
            code,
            detail,
            field,
            extra,
        )


class SeatDoc(msgspec.Struct, array_like=True):
    name: str | None
    token_hash: bytes | None = None
    client_seed: str | None = None


class Deadline(msgspec.Struct, array_like=True):
    seq: int
    at: float


class GameDoc(msgspec.Struct, array_like=True):
    """Everything about a game but its record; ``seed`` and token hashes never leave the store."""

    id: str
    ruleset: str
    options: dict[str, Any]
    deadline_s: float
    seats: list[SeatDoc]
    commitment: str
    seed: bytes
    status: str  # waiting | running | finished
    created: float
    state: bytes | None = None
    deadlines: list[Deadline | None] = []
    finished_at: float | None = None
    # the hash chain over every accepted decision and the events it caused (record.py); a
    # game created before chains were kept has none
    chain: bytes = b""
    # the other games dealt the same dice (a tournament's duplicate tables): until every one of
    # them is over, this game is sealed to everyone but its own seats, and its seed withheld
    group: list[str] = []


_doc_decoder = msgspec.msgpack.Decoder(GameDoc)


@functools.cache
def _state_decoder(ruleset_id: str) -> msgspec.msgpack.Decoder:
    return msgspec.msgpack.Decoder(get_ruleset(ruleset_id).State)


_encoder = msgspec.msgpack.Encoder()
_json = msgspec.json.Encoder()


def _accepted(seat: int, seq: int, moves: list[Any], status: str) -> dict[str, Any]:
    return {
        "accepted": True,
        "seat": seat,
        "seq": seq,
        "next_seq": seq + 1,
        "moves": moves,
        "game_status": status,
    }


def _first_deadline(doc: GameDoc) -> float | None:
    first = None
    for deadline in doc.deadlines:  # a loop: min() over a generator cost five times as much
        if deadline is not None and (first is None or deadline.at < first):
            first = deadline.at
    return first


def _settle(future: asyncio.Future, result: Any) -> None:
    if not future.done():
        future.set_result(result)


@functools.lru_cache(maxsize=8192)
def _event_order(event_id: str) -> tuple[int, int]:
    """Stream ids ("<ms>-<seq>", "0" for none) in the order Redis gave them; remembered, as
    each commit's id is compared some five times (heard, remembered, waited after)."""
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq or 0)


#: this process's mark in the versions it writes (``_next_version``)
_WRITER = secrets.token_hex(4)
_writes = itertools.count()


def _version_number(version: str) -> int:
    return int(version.partition(".")[0] or 0)


def _next_version(version: str) -> str:
    """The version a commit on ``version`` writes: its number, one more, and a mark no other
    write has. A decision chained on a commit still on its way expects that commit's
    version; had the commit lost its race, a version of the same number written by another
    would otherwise pass for it."""
    return f"{_version_number(version) + 1}.{_WRITER}{next(_writes):x}"


def new_token(game_id: str) -> str:
    """A seat's bearer secret; it starts with the game's id, so a token alone finds its game."""
    return f"{game_id}.{secrets.token_urlsafe(32)}"


@functools.lru_cache(maxsize=16384)
def token_hash(token: str) -> bytes:
    """Remembered for the seats playing now: every request of a bot hashes its token, and
    OpenSSL's SHA-256 cost a decision about 3 % of its time."""
    return hashlib.sha256(token.encode()).digest()


def holder_of(hashes: list[bytes | None], token: str) -> int:
    """The index whose token hash matches, or -1; every hash is compared in constant time."""
    digest = token_hash(token)
    found = -1
    for index, stored in enumerate(hashes):
        if stored is not None and hmac.compare_digest(stored, digest):
            found = index
    return found


class Change:
    """What a mutation adds besides the new document: decisions and events."""

    def __init__(self) -> None:
        self.decisions: list[bytes] = []
        self.events: list[bytes] = []


class Loaded:
    """A game as loaded, with its engine state decoded, ready to change."""

    def __init__(self, version: str, doc: GameDoc) -> None:
        self.version = version
        self.doc = doc
        self.ruleset = get_ruleset(doc.ruleset)
        self.state = _state_decoder(doc.ruleset).decode(doc.state) if doc.state else None
        self.change = Change()
        self.dirty = False
        self.last_event_id = "0"
        self.first_deadline: float | None = None  # as stored in the deadlines hint
        self.now_stored: Stored | None = None  # the game as it is, after a lost commit
        # shared by readers (``GameService._read``): never changed, so its public view is
        # built once for all of them
        self.shared = False
        self.public_view: dict[str, Any] | None = None


class _InFlight:
    """A commit of this process on its way: the game as it will be stored if it lands."""

    __slots__ = ("commit", "epoch", "first_deadline", "landed_waiters", "settled", "stored")

    def __init__(self, stored: Stored, commit: Commit, first_deadline: float | None, epoch: int):
        self.stored = stored  # its newest event id is the one before it: not to wait after
        self.commit = commit
        self.first_deadline = first_deadline
        self.epoch = epoch
        self.settled = False
        self.landed_waiters: list[asyncio.Future[None]] | None = None

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


class _Queue:
    """A game's decisions in this process, one at a time (``GameService._one_at_a_time``); it
    lasts while any is waiting. An async context manager of its own: contextlib's, a generator
    per decision, cost about 5 % of one."""

    __slots__ = ("deciding", "game_id", "lock", "users")

    def __init__(self, deciding: dict[str, _Queue], game_id: str) -> None:
        self.deciding = deciding
        self.game_id = game_id
        self.lock = asyncio.Lock()
        self.users = 0

    async def __aenter__(self) -> None:
        self.users += 1
        try:
            await self.lock.acquire()
        except BaseException:
            self._leave()
            raise

    async def __aexit__(self, *_: object) -> None:
        self.lock.release()
        self._leave()

    def _leave(self) -> None:
        self.users -= 1
        if not self.users:
            del self.deciding[self.game_id]


class GameService:
    def __init__(
        self,
        store: Store,
        *,
        retention_s: int = 7 * 24 * 3600,
        events_retention_s: int = 600,
        recent_games: int = 4096,
    ) -> None:
        self.store = store
        self.retention_s = retention_s
        # a finished game's event stream serves late listeners for a while; its record stays
        self.events_retention_s = events_retention_s
        # game id -> its newest stored form this process saw: a base to commit on, never an
        # answer (see the module's doc)
        self.recent: LRU | None = LRU(recent_games) if recent_games > 0 else None
        self._deciding: dict[str, _Queue] = {}
        # game id -> the newest commit of this process on its way: a decision builds on it
        self._in_flight: dict[str, _InFlight] = {}
        self.listening = False  # to every replica's commits (watch_commits)
        self._loop: asyncio.AbstractEventLoop | None = None  # the one listening
        self._epoch = 0  # bumped whenever listening starts or stops
        # commits heard: game id -> newest event id; it needs to outlast only a read or a
        # commit in flight
        self._heard = LRU(max(16384, recent_games))
        # the seats (and entrants and streams) waiting to hear of a game's commit
        self._waiting: dict[str, list[asyncio.Future[str | None]]] = {}
        # game id -> (a remembered form, the game a reader decoded of it): its other readers,
        # who come within moments of the commit, share it. Few: each is some thirty objects
        # the garbage collector's full passes walk, and those passes stall the event loop
        self._read = LRU(SHARED_READS)
        # grouped games seen over with their whole group: they are never sealed again
        self._released = LRU(4096)

    # -- creating and joining --------------------------------------------------------------

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
    ) -> tuple[GameDoc, list[str | None]]:
        """Create a game; a caller that names ``game_id`` may call again after a crash: an
        existing game of that id is returned, never a second one. ``token_hashes``: the seats
        answer to tokens the caller holds (a tournament's entrants), and none is handed out.
        ``group``: the other games dealt the same dice (see ``GameDoc.group``)."""
        try:
            ruleset = get_ruleset(ruleset_id)
            engine_options = ruleset.options(options)
            check_seats(len(seats), ruleset.min_seats, ruleset.max_seats, ruleset.id)
        except GameError as exc:
            raise ApiError(422, exc.code, exc.message, field=exc.field) from None
        seed = seed or new_seed()
        named = game_id is not None
        game_id = game_id or secrets.token_hex(8)
        handed: list[str | None] = []
        seat_docs = []
        for index, seat in enumerate(seats):
            if token_hashes is not None:
                handed.append(None)
                seat_docs.append(SeatDoc(seat["name"], token_hashes[index]))
            elif seat.get("name"):
                token = new_token(game_id)
                handed.append(token)
                seat_docs.append(SeatDoc(seat["name"], token_hash(token), seat.get("client_seed")))
            else:
                handed.append(None)
                seat_docs.append(SeatDoc(None))
        doc = GameDoc(
            game_id,
            ruleset.id,
            msgspec.to_builtins(engine_options),
            deadline_s,
            seat_docs,
            seed_commitment(seed),
            seed,
            "waiting",
            time.time(),
            chain=chain_start(seed_commitment(seed)),
            group=list(group or []),
        )
        game = Loaded("", doc)
        self._emit(game, {"type": "game_created", "seats": len(seats)})
        self._maybe_start(game)
        if not await self._write(game):
            if not named:  # 64 random bits collided
                raise ApiError(503, "busy", "try again")
            return (await self._load(game_id)).doc, handed  # created by an earlier attempt
        return doc, handed

    async def claim(self, game_id: str, name: str, client_seed: str | None) -> tuple[int, str]:
        for _ in range(MAX_RETRIES):
            game = await self._load(game_id)
            free = [i for i, s in enumerate(game.doc.seats) if s.name is None]
            if not free:
                raise ApiError(409, "no-open-seat", "every seat of this game is taken")
            seat = free[0]
            token = new_token(game_id)
            game.doc.seats[seat] = SeatDoc(name, token_hash(token), client_seed)
            self._emit(game, {"type": "seat_claimed", "seat": seat, "name": name})
            self._maybe_start(game)
            if await self._write(game):
                return seat, token
        raise ApiError(503, "busy", "the game changed too often; try again")

    def _maybe_start(self, game: Loaded) -> None:
        doc = game.doc
        if doc.status != "waiting" or any(s.name is None for s in doc.seats):
            return
        client_seeds = [s.client_seed for s in doc.seats if s.client_seed]
        key = make_dice_key(doc.seed, client_seeds)
        game.state = game.ruleset.create(doc.options, len(doc.seats), key)
        doc.status = "running"
        self._emit(game, {"type": "game_started", "seats": len(doc.seats)})
        self._refresh_deadlines(game, time.time())

    # -- loading, deadlines, writing -------------------------------------------------------

    async def _load(self, game_id: str, *, reading: bool = False) -> Loaded:
        """The game as read now (``_decoded``), its form remembered."""
        epoch = self._epoch
        stored = await self.store.load(game_id)
        self._remember(game_id, stored, epoch)
        return self._decoded(game_id, stored, reading)

    def _decoded(self, game_id: str, stored: Stored, reading: bool = False) -> Loaded:
        """The game as ``stored`` gives it, expired deadlines resolved.

        ``reading``: the caller only reads the game, so the form decoded for the last reader of
        the same remembered form (the very object) may be shared, while none of its deadlines
        has passed.
        """
        if stored.blob is None:
            raise ApiError(404, "game-not-found", f"there is no game {game_id!r}")
        now = time.time()
        shared = self._read.get(game_id) if reading else None
        if (
            shared is not None
            and shared[0] is stored
            and (shared[1].first_deadline or math.inf) > now
        ):
            return shared[1]
        game = Loaded(stored.version, _doc_decoder.decode(stored.blob))
        game.last_event_id = stored.last_event_id
        game.first_deadline = _first_deadline(game.doc)
        self._resolve_expired(game, now)
        if reading and not game.dirty and self._remembered(game_id) is stored:
            self._share(game_id, stored, game)
        return game

    def _share(self, game_id: str, stored: Stored, game: Loaded) -> None:
        """The readers of ``stored`` (the very object) take ``game`` instead of decoding the
        form again; nothing changes it any more, so its public view is built once for all."""
        game.shared = True
        self._read[game_id] = (stored, game)

    def _remember(self, game_id: str, stored: Stored, epoch: int) -> None:
        """Keep the newest stored form, read or written since ``epoch`` began."""
        if self.recent is None or stored.blob is None or epoch != self._epoch:
            return  # asked before the process started or stopped listening: unproven
        heard = self._heard.get(game_id)
        if heard is not None and _event_order(heard) > _event_order(stored.last_event_id):
            return  # read or committed before a commit already heard: out of date
        known = self.recent.get(game_id)
        # a read answered after a newer commit of this process must not replace it
        if known is None or _version_number(known.version) <= _version_number(stored.version):
            self.recent[game_id] = stored

    def _remembered(self, game_id: str) -> Stored | None:
        return self.recent.get(game_id) if self.recent is not None else None

    async def fresh(
        self, game_id: str, stored: Stored | None = None, *, reading: bool = False
    ) -> Loaded:
        """Load a game (or take it as ``stored``, a form known to be current) with its
        expired deadlines resolved and written (exactly once). ``reading``: the caller
        changes nothing of it (see ``_decoded``)."""
        for _ in range(MAX_RETRIES):
            if stored is None:
                game = await self._load(game_id, reading=reading)
            else:
                game = self._decoded(game_id, stored, reading)
            if not game.dirty or await self._write(game):
                if game.dirty:  # written: as stored now, with nothing more to write
                    last_id = game.last_event_id
                    game = Loaded(game.version, game.doc)
                    game.last_event_id = last_id
                return game
            stored = game.now_stored
        raise ApiError(503, "busy", "the game changed too often; try again")

    def _refresh_deadlines(self, game: Loaded, now: float) -> None:
        doc, ruleset, state = game.doc, game.ruleset, game.state
        deciding = set(ruleset.to_decide(state)) if state is not None else set()
        deadlines: list[Deadline | None] = []
        for seat in range(len(doc.seats)):
            old = doc.deadlines[seat] if seat < len(doc.deadlines) else None
            if seat not in deciding or doc.deadline_s <= 0:
                deadlines.append(None)
                continue
            seq = ruleset.seq(state, seat)
            deadlines.append(old if old and old.seq == seq else Deadline(seq, now + doc.deadline_s))
        doc.deadlines = deadlines

    def _resolve_expired(self, game: Loaded, now: float) -> None:
        if game.state is None or game.doc.status != "running":
            return
        while not game.ruleset.finished(game.state):
            expired = [
                seat for seat, d in enumerate(game.doc.deadlines) if d is not None and d.at <= now
            ]
            if not expired:
                return
            for seat in expired:
                if seat in game.ruleset.to_decide(game.state):
                    self._apply(game, seat, None, now)
            self._refresh_deadlines(game, now)

    def _apply(self, game: Loaded, seat: int, moves: list[Any] | None, now: float) -> list[dict]:
        """Apply a decision (or a timeout when ``moves`` is None) and record it."""
        ruleset, state = game.ruleset, game.state
        seq = ruleset.seq(state, seat)
        if moves is None:
            moves = ruleset.default_moves(state, seat)
            events = ruleset.timeout(state, seat)
            timed_out = True
        else:
            events = ruleset.decide(state, seat, moves)
            timed_out = False
        decision = record_decision(seat, seq, moves, timed_out, round(now, 3))
        game.change.decisions.append(decision)
        decided: dict[str, Any] = {"type": "decision", "seat": seat, "seq": seq}
        if timed_out:
            decided["timeout"] = True
        self._emit(game, decided)
        told = [_json.encode(event) for event in events if event.get("type") != "timeout"]
        game.change.events += told
        if game.doc.chain:
            game.doc.chain = chain_link(game.doc.chain, decision, told)
        if ruleset.finished(state):
            game.doc.status = "finished"
            game.doc.finished_at = now
            self._emit(game, self.game_over_event(game))
        game.dirty = True
        return events

    @staticmethod
    def game_over_event(game: Loaded, *, sealed: bool | None = None) -> dict[str, Any]:
        """The last event of a game: totals, ranking, the record's chain, and the seed that
        proves the dice; the seed is withheld (null) while games dealt the same dice play on
        (``sealed``; by default, whenever the game has such a group)."""
        ruleset, state, doc = game.ruleset, game.state, game.doc
        if sealed is None:
            sealed = bool(doc.group)
        return {
            "type": "game_over",
            "totals": ruleset.totals(state),
            "ranking": ruleset.ranking(state),
            "chain": doc.chain.hex() if doc.chain else None,
            "seed": None if sealed else doc.seed.hex(),
        }

    def _emit(self, game: Loaded, event: dict) -> None:
        game.change.events.append(_json.encode(event))
        game.dirty = True

    async def _write(self, game: Loaded) -> bool:
        """Commit the game's change: True, or False with the game as it now is in
        ``now_stored`` (the version had moved)."""
        return await self._written(game, self._send(game))

    def _send(self, game: Loaded) -> _InFlight:
        """Queue the game's commit now (no await), and make it the base of this process's
        next decision on the game until its outcome is known."""
        doc = game.doc
        if game.state is not None:
            doc.state = _encoder.encode(game.state)
        first = _first_deadline(doc)
        hint: float | bool | None = False if first == game.first_deadline else first
        version = _next_version(game.version)
        blob = _encoder.encode(doc)
        commit = self.store.send_commit(
            doc.id,
            game.version,
            version,
            blob,
            decisions=game.change.decisions,
            events=game.change.events,
            ttl=self.retention_s if doc.status == "finished" else 0,
            events_ttl=self.events_retention_s,
            deadline=hint,
        )
        in_flight = _InFlight(Stored(version, blob, game.last_event_id), commit, first, self._epoch)
        self._in_flight[doc.id] = in_flight
        return in_flight

    async def _written(self, game: Loaded, in_flight: _InFlight) -> bool:
        """The outcome of a commit sent (``_send``); see ``_write``."""
        game_id = game.doc.id
        try:
            written = await self.store.committed(in_flight.commit)
            if isinstance(written, Stored):  # lost the race: here is the game as it is
                game.now_stored = written
                self._remember(game_id, written, in_flight.epoch)
                return False
            stored = in_flight.stored._replace(last_event_id=written[-1])
            game.version, game.first_deadline = stored.version, in_flight.first_deadline
            game.last_event_id = stored.last_event_id
            self._remember(game_id, stored, in_flight.epoch)
            return True
        finally:
            if self._in_flight.get(game_id) is in_flight:
                del self._in_flight[game_id]
            in_flight.settle()

    # -- what seats and spectators see -----------------------------------------------------

    def authenticate(self, game: Loaded, token: str | None) -> int:
        if not token:
            raise ApiError(401, "unauthorized", "send the seat's token as 'Authorization: Bearer'")
        seat = holder_of([s.token_hash for s in game.doc.seats], token)
        if seat < 0:
            raise ApiError(403, "forbidden", "this token holds no seat in this game")
        return seat

    def public_view(self, game: Loaded) -> dict[str, Any]:
        """What anyone may see of a game that is not sealed (``sealed_view`` otherwise)."""
        doc, ruleset, state = game.doc, game.ruleset, game.state
        engine = ruleset.view(state) if state is not None else {}
        seats = []
        for index, seat in enumerate(doc.seats):
            entry: dict[str, Any] = {
                "seat": index,
                "name": seat.name,
                "claimed": seat.name is not None,
            }
            if engine:
                entry.update(engine["seats"][index])
            seats.append(entry)
        view = {
            k: v for k, v in engine.items() if k not in ("seats", "ruleset", "finished", "options")
        }
        view.update(
            id=doc.id,
            ruleset=doc.ruleset,
            options=doc.options,
            status=doc.status,
            commitment=doc.commitment,
            deadline_s=doc.deadline_s,
            seats=seats,
            to_decide=ruleset.to_decide(state) if state is not None else [],
            sealed=False,
        )
        if doc.status == "finished":
            view["seed"] = doc.seed.hex()
            view["chain"] = doc.chain.hex() if doc.chain else None
        return view

    @staticmethod
    def turn_status(game: Loaded, seat: int) -> str:
        ruleset, state = game.ruleset, game.state
        if state is None:
            return "waiting"
        if ruleset.finished(state):
            return "finished"
        return "your_turn" if seat in ruleset.to_decide(state) else "waiting"

    def turn(self, game: Loaded, seat: int) -> dict[str, Any]:
        doc, ruleset, state = game.doc, game.ruleset, game.state
        if state is None:
            return {
                "status": "waiting",
                "game_status": doc.status,
                "seat": seat,
                "seq": 0,
                "legal_moves": [],
                "deadline": None,
                "view": None,
            }
        status = self.turn_status(game, seat)
        deciding = status == "your_turn"
        deadline = doc.deadlines[seat] if deciding and doc.deadlines else None
        return {
            "status": status,
            "game_status": doc.status,
            "seat": seat,
            "seq": ruleset.seq(state, seat),
            "legal_moves": ruleset.legal_moves(state, seat) if deciding else [],
            "deadline": deadline.at if deadline else None,
            "view": self._seat_view(game, seat),
        }

    @staticmethod
    def _seat_view(game: Loaded, seat: int) -> dict[str, Any]:
        """``ruleset.view(state, seat)``; its public part built once for a shared game."""
        ruleset, state = game.ruleset, game.state
        public = game.public_view
        if public is None:
            public = ruleset.view(state)
            if game.shared:
                game.public_view = public
        return {**public, "you": ruleset.seat_view(state, seat)}

    async def wait_turn(self, game_id: str, token: str | None, wait_s: float) -> dict[str, Any]:
        """The seat's turn, waiting up to ``wait_s`` while it has nothing to decide.

        A remembered game may answer only where the game's events prove it current (read,
        or heard as commits): a wait with no event after it, or the newest event, written
        with it. A finished game never changes, and answers from memory while it is surely
        kept. A refusal comes only from the game as read.
        """
        stop = time.monotonic() + wait_s
        known = self._remembered(game_id)
        # not yet shown current; while listening, no commit was heard after it: current
        guess = known is not None and not self.listening
        last_id = None
        while True:
            try:
                game = await self.fresh(game_id, known, reading=True)
                seat = self.authenticate(game, token)
            except ApiError:
                if known is None:  # the game as read: a refusal
                    raise
                known, guess = None, False
                continue
            if known is not None and game.doc.status == "finished" and not self._surely_kept(game):
                known, guess = None, False  # it may have expired since: read it
                continue
            if last_id is None:
                last_id = game.last_event_id  # read with the game: no event slips between
            if guess and self.turn_status(game, seat) != "waiting":
                if game.doc.status == "finished" and self._surely_kept(game):
                    return self.turn(game, seat)
                known, guess, last_id = None, False, None  # to act on, read the game as it is
                continue
            known = None
            remaining = stop - time.monotonic()
            if not guess and (self.turn_status(game, seat) != "waiting" or remaining <= 0):
                return self.turn(game, seat)
            next_deadline = _first_deadline(game.doc)
            block = max(0.0, remaining)
            if next_deadline is not None:
                block = max(0.05, min(block, next_deadline - time.time() + 0.01))
            try:
                if self.listening:  # a commit heard, or the proof that none came
                    newest, complete = await self._hear({game_id: last_id}, block), True
                else:
                    wait_ms = int(block * 1000) or None
                    events = await self.store.events_after(game_id, last_id, wait_ms)
                    newest = events[-1][0].decode() if events else None
                    complete = len(events) < EVENTS_PER_READ
            except (RedisTimeoutError, RedisConnectionError, TimeoutError, asyncio.CancelledError):
                if guess:
                    raise
                return self.turn(game, seat)  # the wait was cut short: answer now
            guess = False  # an event read (or heard) followed: nothing came, or we read on
            if newest == "":  # the process stopped listening meanwhile: read the game
                last_id = None
                continue
            if newest is None:
                if time.monotonic() >= stop and (next_deadline or math.inf) > time.time():
                    return self.turn(game, seat)  # nothing happened: as it was
                continue
            last_id = newest
            recent = self._remembered(game_id)
            in_flight = self._in_flight.get(game_id)
            if getattr(recent, "last_event_id", None) != last_id and in_flight is not None:
                # the event may be this process's own commit, whose reply is still on its way
                await in_flight.landed()
                recent = self._remembered(game_id)
            if recent is not None and recent.last_event_id == last_id and complete:
                # written with the newest event, and every change adds one: the game as it is
                # now, without reading it again
                known = recent

    def _surely_kept(self, game: Loaded) -> bool:
        """A finished game stays, unchanged, for the retention after it ended."""
        finished_at = game.doc.finished_at
        return finished_at is not None and time.time() < finished_at + self.retention_s - 60

    # -- deciding ----------------------------------------------------------------------------

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
        stored: Stored | None = None
        guess = True  # known, not read: good to commit on, not to refuse
        for _ in range(MAX_RETRIES):
            async with self._one_at_a_time(game_id):
                in_flight = None
                if guess:
                    in_flight = self._in_flight.get(game_id)
                    if in_flight is not None and not in_flight.commit.queued:
                        in_flight = None  # no connection yet: not surely sent before this one
                    stored = in_flight.stored if in_flight else self._remembered(game_id)
                    guess = stored is not None
                if stored is None:
                    game = await self._load(game_id)
                else:
                    game = self._decoded(game_id, stored)
                try:
                    answer, sent = await self._decide(game, token, seq, moves)
                except ApiError:
                    if not guess:
                        raise
                    answer, sent, game.now_stored = None, None, None  # ask the store first
                if in_flight is not None and sent is None:
                    await in_flight.landed()  # then read the game as it is
                    answer, game.now_stored = None, None
            if sent is not None:
                if await self._written(game, sent):
                    self._share_decided(game)
                    return answer  # type: ignore[return-value]
            elif answer is not None:
                return answer
            stored, guess = game.now_stored, False
        raise ApiError(503, "busy", "the game changed too often; try again")

    def _share_decided(self, game: Loaded) -> None:
        """A decision's game, as just stored and remembered, for its readers to share (the
        seats' turns come next); the decision is done with it."""
        game_id = game.doc.id
        stored = self._remembered(game_id)
        if stored is not None and stored.version == game.version:
            game.change, game.dirty = Change(), False
            self._share(game_id, stored, game)

    def _one_at_a_time(self, game_id: str) -> _Queue:
        """This process's decisions on one game take turns until each one's commit is sent:
        the next builds on it instead of losing a race to it (replicas still race, safely)."""
        queue = self._deciding.get(game_id)
        if queue is None:
            queue = self._deciding[game_id] = _Queue(self._deciding, game_id)
        return queue

    async def _decide(
        self, game: Loaded, token: str | None, seq: int, moves: list[Any]
    ) -> tuple[dict[str, Any] | None, _InFlight | None]:
        """One try at a decision: the answer and the commit it waits for (None for an answer
        from the record), or no answer if the game must be taken again."""
        seat = self.authenticate(game, token)
        state, ruleset = game.state, game.ruleset
        if state is None:
            raise ApiError(409, "game-not-started", "the game waits for its seats to be claimed")
        current = ruleset.seq(state, seat)
        if seq != current:
            if game.dirty:  # resolve expired deadlines first, then answer
                await self._write(game)
                return None, None
            if seq < current:
                replayed = await self._replay(game, seat, seq, moves)
                if replayed is not None:
                    return replayed, None
                raise ApiError(
                    409,
                    "seq-already-decided",
                    f"seq {seq} was decided with a different decision; the current seq is "
                    f"{current}",
                    field="seq",
                    current_seq=current,
                )
            raise ApiError(
                409,
                "seq-mismatch",
                f"the current seq of this seat is {current}, not {seq}",
                field="seq",
                current_seq=current,
            )
        try:
            moves = [ruleset.normalize(m) for m in moves]
            self._check_move_types(ruleset, moves)
            self._apply(game, seat, moves, time.time())
        except GameError as exc:
            if game.dirty:  # expired deadlines were resolved on load: keep that, not this
                await self._write(game)
            status = 409 if exc.code in CONFLICT_CODES else 422
            raise ApiError(
                status, exc.code, exc.message, field=exc.field, current_seq=current
            ) from None
        self._refresh_deadlines(game, time.time())
        return _accepted(seat, seq, moves, game.doc.status), self._send(game)

    async def _replay(
        self, game: Loaded, seat: int, seq: int, moves: list[Any]
    ) -> dict[str, Any] | None:
        """A retry: the same decision for a seq already decided gets the same answer, read
        from the game's record (so no response is stored twice); anything else gets None."""
        try:
            submitted = plain([game.ruleset.normalize(m) for m in moves])
        except GameError:
            return None
        decisions = await self.store.decisions(game.doc.id)
        for index, raw in enumerate(decisions):
            decision = msgspec.json.decode(raw)
            if decision["seat"] == seat and decision["seq"] == seq:
                if decision["timeout"] or decision["moves"] != submitted:
                    return None
                last = index == len(decisions) - 1
                status = "finished" if last and game.doc.status == "finished" else "running"
                return _accepted(seat, seq, decision["moves"], status)
        return None

    @staticmethod
    def _check_move_types(ruleset: Any, moves: list[Any]) -> None:
        allowed = getattr(ruleset.Move, "__args__", (ruleset.Move,))
        for index, move in enumerate(moves):
            if not isinstance(move, allowed):
                raise RuleViolation(
                    "unknown-move",
                    f"moves of type {type(move).__name__} are not part of {ruleset.id}",
                    field=f"moves[{index}].type" if len(moves) > 1 else "move.type",
                )

    # -- records, events, sweeping ----------------------------------------------------------

    async def record(self, game_id: str) -> dict[str, Any]:
        """The game's record, holding exactly what its public view and events disclose: while
        it runs, the decisions anyone may see (``Ruleset.disclosed``) and no dice; the chain
        only where it covers no hidden decision. Refused while the game is sealed."""
        game = await self.fresh(game_id)
        await self.check_unsealed(game)
        doc, ruleset, state = game.doc, game.ruleset, game.state
        decisions = [msgspec.json.decode(d) for d in await self.store.decisions(game_id)]
        finished = doc.status == "finished"
        whole = True
        if not finished:
            shown = [ruleset.disclosed(state, s) if state else 0 for s in range(len(doc.seats))]
            kept = [d for d in decisions if d["seq"] < shown[d["seat"]]]
            whole = len(kept) == len(decisions)
            decisions = kept
        return {
            "ruleset": doc.ruleset,
            "options": doc.options,
            "seats": [s.name or "" for s in doc.seats],
            "commitment": doc.commitment,
            "client_seeds": [s.client_seed for s in doc.seats if s.client_seed],
            "decisions": decisions,
            "dice": ruleset.dice_log(state) if finished else [],
            "totals": ruleset.totals(state) if finished else [],
            "ranking": ruleset.ranking(state) if finished else [],
            "final": final_seats(ruleset, state) if finished else [],
            "finished": finished,
            "chain": doc.chain.hex() if doc.chain and whole else None,
            "seed": doc.seed.hex() if finished else None,
        }

    # -- sealed games --------------------------------------------------------------------------

    async def sealed(self, game: Loaded) -> bool:
        """Whether any game dealt the same dice (``GameDoc.group``), this one included, still
        runs: until none does, no one but the game's own seats may look at it."""
        doc = game.doc
        if not doc.group or doc.id in self._released:
            return False
        if doc.status != "finished":
            return True
        for other in await asyncio.gather(*(self.store.load(g) for g in doc.group)):
            if other.blob is not None and _doc_decoder.decode(other.blob).status != "finished":
                return True
        self._released[doc.id] = True  # finished games never run again
        return False

    async def check_unsealed(self, game: Loaded) -> None:
        if await self.sealed(game):
            raise ApiError(
                409,
                "game-sealed",
                "this game's dice are dealt at other tables of its tournament round that are "
                "still playing: its play, record and seed are shown once they are all over",
            )

    def sealed_view(self, game: Loaded) -> dict[str, Any]:
        """What anyone may see of a sealed game: who sits there and whether it is over."""
        doc = game.doc
        return {
            "id": doc.id,
            "ruleset": doc.ruleset,
            "options": doc.options,
            "status": doc.status,
            "commitment": doc.commitment,
            "deadline_s": doc.deadline_s,
            "seats": [
                {"seat": i, "name": s.name, "claimed": s.name is not None}
                for i, s in enumerate(doc.seats)
            ],
            "to_decide": [],
            "sealed": True,
        }

    # -- hearing commits ---------------------------------------------------------------------

    async def watch_commits(self, retry_s: float = 1.0) -> None:
        """Listen to every replica's commits for as long as the process runs."""
        while True:
            try:
                await self.store.listen(self._heard_commit, lambda: self._listen(True))
            except (RedisError, OSError) as exc:
                log.warning("not hearing commits (%r); waiting seats read events", exc)
            finally:
                self._listen(False)
            await asyncio.sleep(retry_s)

    def _listen(self, on: bool) -> None:
        """Start or stop trusting what is heard. Commits may have gone unheard before now, so
        no remembered form is kept, and the seats waiting to hear look at their games again."""
        if on:
            self._loop = asyncio.get_running_loop()
        self.listening = on
        self._epoch += 1
        if self.recent is not None:
            self.recent.clear()
        self._read.clear()
        self._heard.clear()
        waiting, self._waiting = self._waiting, {}
        for futures in waiting.values():
            for future in futures:
                _settle(future, "")

    def _heard_commit(self, game_id: str, event_id: str) -> None:
        order = _event_order(event_id)
        heard = self._heard.get(game_id)
        if heard is None or _event_order(heard) < order:
            self._heard[game_id] = event_id
        known = self._remembered(game_id)
        if known is not None and _event_order(known.last_event_id) < order:
            del self.recent[game_id]  # type: ignore[union-attr]
        for future in self._waiting.pop(game_id, ()):
            _settle(future, event_id)

    async def events_after(self, game_id: str, after: str, wait_s: float | None) -> list:
        """The game's events after ``after``; with ``wait_s``, waiting that long for one: for a
        commit heard while listening (then one read), else in a blocked XREAD."""
        if wait_s and self.listening:
            if await self._hear({game_id: after}, wait_s) is None:
                return []
            entries = await self.store.events_after(game_id, after, None)
            if entries:
                return entries
        return await self.store.events_after(game_id, after, int(wait_s * 1000) if wait_s else None)

    async def wait_for_commits(self, positions: dict[str, str], seconds: float) -> None:
        """Until any of several games (id -> the event id last seen) moves on, at most
        ``seconds``: from the commits heard, or, while not listening, one XREAD."""
        if self.listening:
            await self._hear(positions, seconds)
        else:
            await self.store.wait_any(positions, int(seconds * 1000))

    async def _hear(self, positions: dict[str, str], seconds: float) -> str | None:
        """The newest event id heard of a game (id -> event id) after its position, waiting
        up to ``seconds``; None if nothing came, "" if the process stopped listening."""
        # where the commits are heard: asyncio.get_running_loop() costs a getpid() each time
        loop = self._loop or asyncio.get_running_loop()
        stop = loop.time() + seconds
        after = {game_id: _event_order(event_id) for game_id, event_id in positions.items()}
        while True:
            for game_id, order in after.items():
                heard = self._heard.get(game_id)
                if heard is not None and _event_order(heard) > order:
                    return heard
            remaining = stop - loop.time()
            if remaining <= 0 or not self.listening:
                return None if self.listening else ""
            future: asyncio.Future[str | None] = loop.create_future()
            for game_id in after:
                self._waiting.setdefault(game_id, []).append(future)
            timer = loop.call_later(remaining, _settle, future, None)
            try:
                heard = await future
            finally:
                timer.cancel()
                for game_id in after:
                    waiting = self._waiting.get(game_id)
                    if waiting is not None and future in waiting:
                        waiting.remove(future)
                        if not waiting:
                            del self._waiting[game_id]
            if heard == "":
                return ""

    async def sweep(self) -> int:
        """Resolve every game whose deadline passed; any replica may run this at any time."""
        resolved = 0
        for game_id in await self.store.due(time.time()):
            try:
                game = await self.fresh(game_id)
            except ApiError:
                await self.store.redis.zrem(DEADLINES, game_id)
                continue
            pending = [d.at for d in game.doc.deadlines if d is not None]
            if not pending:
                await self.store.redis.zrem(DEADLINES, game_id)
            resolved += 1
        return resolved

    async def sweep_forever(self, interval: float) -> None:
        while True:
            # a sweeper must not die; the next request to a game resolves it anyway
            with contextlib.suppress(Exception):
                await self.sweep()
            await asyncio.sleep(interval)
