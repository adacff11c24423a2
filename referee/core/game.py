"""A game as loaded from the store: what the referee does with it between a read and a
commit, with no I/O. It starts the game when every seat is taken, applies a decision (or a
timeout) through the rules engine, moves deadlines, and tells each party what it may see:
a seat its turn, anyone the public view, and the record as far as it is disclosed.

Every change is gathered in ``change`` (the record's new decisions and the public events)
for the service to commit in one atomic write.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import msgspec

from ..bots import bot_names, get_bot
from ..games import (
    GameError,
    RuleViolation,
    chain_link,
    chain_start,
    get_ruleset,
    record_decision,
)
from ..games import commitment as seed_commitment
from ..games import dice_key as make_dice_key
from ..games._common import check_seats, plain
from .documents import (
    HOUSE_BOT_SEAT,
    Deadline,
    GameDoc,
    SeatDoc,
    check_invite,
    check_name,
    decode_doc,
    decode_state,
    encode,
    first_deadline,
    holder_of,
    new_token,
    token_hash,
)
from .refusals import Refusal, from_rules
from .views import GameViews

__all__ = ["HIDDEN_STEP", "HOUSE_SEATS_MAX", "Change", "LoadedGame", "new_game"]

_json = msgspec.json.Encoder()

#: The event a hidden step of a seat's postal round writes: every change adds an event (a
#: waiting seat's proof that it saw the game as it is rests on it), but this one is never told
#: to anyone (the event stream skips it): its very existence would say how far through its
#: round the seat is, or that it played a card.
HIDDEN_STEP = {"type": "step"}
_HIDDEN_STEP_JSON = _json.encode(HIDDEN_STEP)

#: house bots a game may seat; at least one seat of every game is someone else's, so a house
#: bot decides only after a decision of theirs (or a deadline) and never plays on its own
HOUSE_SEATS_MAX = 3


class Change:
    """What a change adds besides the new document: the record's decisions and the events."""

    def __init__(self) -> None:
        self.decisions: list[bytes] = []
        self.events: list[bytes] = []
        self.untold = 0  # how many of the events are told to no one (``HIDDEN_STEP``)

    def written(self) -> tuple[list[bytes], bool]:
        """The events to write, and whether none of them is told to anyone. A change that
        tells an event writes no hidden step: its told events make it a change already, and
        a step among them would take a number from the ids the stream tells (Redis numbers a
        commit's events 0, 1, ...: a house bot's hidden steps, written with the decision that
        made its seat decide, showed in the gap)."""
        events, untold = self.events, self.untold
        if not untold:
            return events, False
        if untold == len(events):
            return events, True
        return [event for event in events if event != _HIDDEN_STEP_JSON], False


def _accepted(seat: int, seq: int, moves: list[Any], status: str) -> dict[str, Any]:
    return {
        "accepted": True,
        "seat": seat,
        "seq": seq,
        "next_seq": seq + 1,
        "moves": moves,
        "game_status": status,
    }


class LoadedGame(GameViews):
    """A game as loaded, with its rules state decoded, ready to change or to be shown
    (``GameViews``)."""

    def __init__(self, version: str, doc: GameDoc) -> None:
        self.version = version
        self.doc = doc
        self.ruleset = get_ruleset(doc.ruleset)
        self.state = decode_state(doc.ruleset, doc.state) if doc.state else None
        self.change = Change()
        self.dirty = False
        self.last_event_id = "0"
        self.first_deadline: float | None = None  # as stored in the deadlines hint
        self.now_stored: Any = None  # the game as it is, after a lost commit (the store's)
        # shared by readers (the service's remembered reads): never changed, so its public
        # view is built once for all of them
        self.shared = False
        self.public_view_cache: Any = None

    @classmethod
    def read(cls, version: str, blob: bytes, last_event_id: str, now: float) -> LoadedGame:
        """The game a stored form gives, its expired deadlines resolved (``dirty`` if any)."""
        return cls._as_read(version, decode_doc(blob), last_event_id, now)

    def copied(self, now: float) -> LoadedGame:
        """What ``read`` gives of the form this game was shared for, without decoding its
        document again: a copy to change, the document copied as deep as a change replaces
        in place (the seats' list; every other field a change assigns anew) and the rules'
        state decoded from the form's own bytes. This game, shared, stays as it is."""
        doc = msgspec.structs.replace(self.doc)
        doc.seats = list(doc.seats)
        return LoadedGame._as_read(self.version, doc, self.last_event_id, now)

    @classmethod
    def _as_read(cls, version: str, doc: GameDoc, last_event_id: str, now: float) -> LoadedGame:
        game = cls(version, doc)
        game.last_event_id = last_event_id
        game.first_deadline = first = first_deadline(doc)
        if first is not None and first < now:  # else nothing is due: nothing to look at
            game.resolve_expired(now)
        return game

    def as_stored(self) -> LoadedGame:
        """The game as just committed, with nothing more to write."""
        game = LoadedGame(self.version, self.doc)
        game.last_event_id = self.last_event_id
        return game

    def encoded(self) -> bytes:
        """The document to commit, with the rules' state in it."""
        if self.state is not None:
            self.doc.state = encode(self.state)
        return encode(self.doc)

    # -- changing ------------------------------------------------------------------------------

    def emit(self, event: dict[str, Any]) -> None:
        self.change.events.append(_json.encode(event))
        self.dirty = True

    def claim_seat(
        self, name: str, client_seed: str | None, now: float, invite_code: str | None = None
    ) -> tuple[int, str]:
        """Seat a player in the first open seat (with the game's invite code, if it has
        one); its token is returned, only its hash kept."""
        check_invite(self.doc.invite, invite_code)
        name = check_name(name, "name")
        free = [i for i, s in enumerate(self.doc.seats) if s.name is None]
        if not free:
            raise Refusal("no-open-seat", "every seat of this game is taken")
        seat = free[0]
        token = new_token(self.doc.id)
        self.doc.seats[seat] = SeatDoc(name, token_hash(token), client_seed)
        self.emit({"type": "seat_claimed", "seat": seat, "name": name})
        self.maybe_start(now)
        return seat, token

    def rekey_seat(self, seat: int, digest: bytes) -> None:
        """The seat answers to another token from now on (its bot's token was rotated or
        revoked, and with it the token its tournament seats it with): a change told to no
        one, as a hidden step is."""
        self.doc.seats[seat] = msgspec.structs.replace(self.doc.seats[seat], token_hash=digest)
        self.emit(HIDDEN_STEP)
        self.change.untold += 1

    def maybe_start(self, now: float) -> None:
        """Deal the dice once every seat is taken: the seed and the players' seeds make the
        key the whole game's dice derive from."""
        doc = self.doc
        if doc.status != "waiting" or any(s.name is None for s in doc.seats):
            return
        client_seeds = [s.client_seed for s in doc.seats if s.client_seed]
        key = make_dice_key(doc.seed, client_seeds)
        self.state = self.ruleset.create(doc.options, len(doc.seats), key)
        doc.status = "running"
        self.emit({"type": "game_started", "seats": len(doc.seats)})
        self.play_house(now)
        self.refresh_deadlines(now)

    def play_house(self, now: float) -> None:
        """The house bots' decisions, each as soon as its seat must decide, in the change
        that made it so. A house bot is handed what its seat would be shown (its turn, as
        JSON), nothing more, and its randomness comes from the game's seed and the seq."""
        doc, ruleset = self.doc, self.ruleset
        house = {i: s.house for i, s in enumerate(doc.seats) if s.house}
        while house and self.state is not None and doc.status == "running":
            due = [seat for seat in ruleset.to_decide(self.state) if seat in house]
            if not due:
                return
            for seat in due:
                seq = ruleset.seq(self.state, seat)
                seen = msgspec.json.decode(_json.encode(self.turn(seat)))
                digest = hashlib.blake2b(doc.seed + f"{seat}.{seq}".encode(), digest_size=8)
                bot = get_bot(doc.ruleset, house[seat], int.from_bytes(digest.digest()))
                chosen = bot(seen)
                moves = chosen if isinstance(chosen, list) else [chosen]
                self.apply(seat, [msgspec.convert(m, ruleset.Move) for m in moves], now)

    def refresh_deadlines(self, now: float) -> None:
        """A deadline for each seat that must decide, kept while its seq stays the same."""
        doc, ruleset, state = self.doc, self.ruleset, self.state
        if doc.deadline_s <= 0:  # a game without deadlines: a None for each seat
            doc.deadlines = [None] * len(doc.seats)
            return
        before = doc.deadlines
        deadlines: list[Deadline | None] = [None] * len(doc.seats)
        for seat in ruleset.to_decide(state) if state is not None else ():
            old = before[seat] if seat < len(before) else None
            seq = ruleset.public_seq(state, seat)  # a hidden step moves no deadline
            deadlines[seat] = (
                old if old is not None and old.seq == seq else Deadline(seq, now + doc.deadline_s)
            )
        doc.deadlines = deadlines

    def resolve_expired(self, now: float) -> None:
        """Every decision whose deadline has passed, taken as the rules' timeout. Passed:
        the clock is beyond it (a deadline set now, ``now + deadline_s``, may equal ``now``
        when ``deadline_s`` is below the clock's resolution: it is due at the next read, not
        in this one, or a single read would play the whole game by timeouts)."""
        if self.state is None or self.doc.status != "running":
            return
        while not self.ruleset.finished(self.state):
            expired = [
                seat for seat, d in enumerate(self.doc.deadlines) if d is not None and d.at < now
            ]
            if not expired:
                return
            for seat in expired:
                if seat in self.ruleset.to_decide(self.state):
                    self.apply(seat, None, now)
            self.play_house(now)
            self.refresh_deadlines(now)

    def apply(self, seat: int, moves: list[Any] | None, now: float) -> list[dict[str, Any]]:
        """Apply a decision (or a timeout when ``moves`` is None) and record it."""
        ruleset, state = self.ruleset, self.state
        seq = ruleset.seq(state, seat)
        public_seq = ruleset.public_seq(state, seat)
        if moves is None:
            moves = ruleset.default_moves(state, seat)
            events = ruleset.timeout(state, seat)
            timed_out = True
            if seat not in self.doc.timed_out:
                self.doc.timed_out = [*self.doc.timed_out, seat]
        else:
            events = ruleset.decide(state, seat, moves)
            timed_out = False
        decision = record_decision(seat, seq, moves, timed_out, round(now, 3))
        self.change.decisions.append(decision)
        if ruleset.public_seq(state, seat) != public_seq:
            decided: dict[str, Any] = {"type": "decision", "seat": seat, "seq": public_seq}
            if timed_out:
                decided["timeout"] = True
        else:  # a hidden step: written, as every change is, but never told (``HIDDEN_STEP``)
            decided = HIDDEN_STEP
            self.change.untold += 1
        self.emit(decided)
        told = [_json.encode(event) for event in events if event.get("type") != "timeout"]
        self.change.events += told
        if self.doc.chain:
            self.doc.chain = chain_link(self.doc.chain, decision, told)
            if events and all(
                ruleset.disclosed(state, s) == ruleset.seq(state, s)
                for s in range(len(self.doc.seats))
            ):
                self.doc.disclosed_chain = self.doc.chain
        if ruleset.finished(state):
            self.doc.status = "finished"
            self.doc.finished_at = now
            self.emit(self.game_over_event())
        self.dirty = True
        return events

    # -- deciding ------------------------------------------------------------------------------

    def seat_of(self, token: str | None) -> int:
        """The seat a bearer token holds."""
        if not token:
            raise Refusal("unauthorized", "send the seat's token as 'Authorization: Bearer'")
        seat = holder_of([s.token_hash for s in self.doc.seats], token)
        if seat < 0:
            raise Refusal("forbidden", "this token holds no seat in this game")
        return seat

    def current_seq(self, seat: int) -> int:
        """The seq of the seat's next decision (refused before the game starts)."""
        if self.state is None:
            raise Refusal("game-not-started", "the game waits for its seats to be claimed")
        return self.ruleset.seq(self.state, seat)

    def decide(self, seat: int, seq: int, moves: list[Any], now: float) -> dict[str, Any]:
        """Apply the seat's decision for its current ``seq``; the answer to give once it is
        committed. A rule broken is refused, with the seq to decide."""
        ruleset = self.ruleset
        try:
            moves = [ruleset.normalize(m) for m in moves]
            _check_move_types(ruleset, moves)
            self.apply(seat, moves, now)
        except GameError as exc:
            raise from_rules(exc, current_seq=seq) from None
        status = self.doc.status  # what this decision did: a retry is answered alike
        self.play_house(now)
        self.refresh_deadlines(now)
        return _accepted(seat, seq, moves, status)

    def retried(
        self, seat: int, seq: int, moves: list[Any], decisions: list[bytes]
    ) -> dict[str, Any] | None:
        """A retry: the same decision for a seq already decided gets the same answer, read
        from the game's record (``decisions``); anything else gets None."""
        try:
            submitted = plain([self.ruleset.normalize(m) for m in moves])
        except GameError:
            return None
        for index, raw in enumerate(decisions):
            decision = msgspec.json.decode(raw)
            if decision["seat"] == seat and decision["seq"] == seq:
                if decision["timeout"] or decision["moves"] != submitted:
                    return None
                last = index == len(decisions) - 1
                status = "finished" if last and self.doc.status == "finished" else "running"
                return _accepted(seat, seq, decision["moves"], status)
        return None


def _check_house(ruleset_id: str, seats: list[dict[str, Any]]) -> None:
    """House bots: known ones, at most ``HOUSE_SEATS_MAX``, and never every seat."""
    house = [i for i, seat in enumerate(seats) if seat.get("bot") is not None]
    for index in house:
        names = bot_names(ruleset_id)
        if seats[index]["bot"] not in names:
            raise Refusal(
                "house-bot-limit",
                f"the house bots are {', '.join(names)}",
                field=f"seats[{index}].bot",
            )
    if len(house) > HOUSE_SEATS_MAX or (house and len(house) == len(seats)):
        raise Refusal(
            "house-bot-limit",
            f"a game seats at most {HOUSE_SEATS_MAX} house bots, and at least one other seat",
            field="seats",
        )


def _check_move_types(ruleset: Any, moves: list[Any]) -> None:
    allowed = getattr(ruleset.Move, "__args__", (ruleset.Move,))
    for index, move in enumerate(moves):
        if not isinstance(move, allowed):
            raise RuleViolation(
                "unknown-move",
                f"moves of type {type(move).__name__} are not part of {ruleset.id}",
                field=f"moves[{index}].type" if len(moves) > 1 else "move.type",
            )


def new_game(
    ruleset_id: str,
    options: dict[str, Any],
    seats: list[dict[str, Any]],
    deadline_s: float,
    seed: bytes,
    now: float,
    *,
    game_id: str | None = None,
    token_hashes: list[bytes] | None = None,
    group: list[str] | None = None,
    owner: str = "",
    invite: bytes = b"",
    tournament: str = "",
) -> tuple[LoadedGame, list[str | None]]:
    """A new game, started if every seat is named, and the token of each named seat (shown
    once; only hashes are kept). ``token_hashes``: the seats answer to tokens the caller
    holds (a tournament's entrants), and none is handed out. ``group``: the other games
    dealt the same dice (see ``GameDoc.group``). ``owner``, ``invite`` and ``tournament``:
    see ``GameDoc``."""
    try:
        ruleset = get_ruleset(ruleset_id)
        engine_options = ruleset.options(options)
        check_seats(len(seats), ruleset.min_seats, ruleset.max_seats, ruleset.id)
    except GameError as exc:
        raise from_rules(exc) from None
    game_id = game_id or secrets.token_hex(8)
    _check_house(ruleset.id, seats)
    handed: list[str | None] = []
    seat_docs = []
    for index, seat in enumerate(seats):
        name = seat.get("name")
        if seat.get("bot") is not None:
            name = check_name(name or seat["bot"] + HOUSE_BOT_SEAT, f"seats[{index}].name")
            handed.append(None)
            seat_docs.append(SeatDoc(name, None, None, seat["bot"]))
        elif token_hashes is not None:  # a tournament's entrants, named when they registered
            handed.append(None)
            seat_docs.append(SeatDoc(name, token_hashes[index]))
        elif name is not None:
            name = check_name(name, f"seats[{index}].name")
            # a webhook seat's token is made by the service, which keeps it to play the seat
            token = seat.get("token") or new_token(game_id)
            handed.append(token)
            seat_docs.append(SeatDoc(name, token_hash(token), seat.get("client_seed")))
        else:
            handed.append(None)
            seat_docs.append(SeatDoc(None))
    start = chain_start(seed_commitment(seed))
    doc = GameDoc(
        game_id,
        ruleset.id,
        msgspec.to_builtins(engine_options),
        deadline_s,
        seat_docs,
        seed_commitment(seed),
        seed,
        "waiting",
        now,
        chain=start,
        disclosed_chain=start,
        group=list(group or []),
        owner=owner,
        invite=invite,
        tournament=tournament,
    )
    game = LoadedGame("", doc)
    game.emit({"type": "game_created", "seats": len(seats)})
    game.maybe_start(now)
    return game, handed
