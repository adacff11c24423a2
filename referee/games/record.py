"""A game's record, and the replay that proves it: every die re-derived, every decision
re-applied, every event it caused and every final figure recomputed from the revealed seed.

The record carries a hash chain: it starts from the game's commitment, and each accepted
decision extends it with the decision as recorded and the events it caused, as the referee
told them. The referee keeps the chain as it plays and publishes its end in ``game_over``, so
a record whose decisions were edited, even into others that score the same, replays to
another chain and is refused.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from . import dice as _dice
from ._common import plain
from .errors import GameError
from .registry import get_ruleset

__all__ = [
    "Decision",
    "Record",
    "Recorder",
    "VerifyReport",
    "chain_link",
    "chain_start",
    "final_seats",
    "record_decision",
    "verify",
]

_json = msgspec.json.Encoder()


def chain_start(commitment: str) -> bytes:
    """The chain before any decision: bound to the game's commitment."""
    return hashlib.sha256(b"referee-record\0" + commitment.encode()).digest()


def chain_link(previous: bytes, decision: bytes, events: Sequence[bytes]) -> bytes:
    """The chain after one decision (``record_decision``'s bytes) and the events it caused
    (each as JSON, in order); lengths are hashed too, so no two splits hash alike. Hashed in
    one piece: an ``update`` per part cost a decision twice as much."""
    parts = [previous, len(decision).to_bytes(4, "big"), decision]
    for part in events:
        parts += (len(part).to_bytes(4, "big"), part)
    return hashlib.sha256(b"".join(parts)).digest()


def record_decision(seat: int, seq: int, moves: Any, timeout: bool, at: float | None) -> bytes:
    """A decision as the record stores it and the chain hashes it (moves as the engine's
    Structs, so a record read back and converted hashes to the same bytes)."""
    return _json.encode({"seat": seat, "seq": seq, "moves": moves, "timeout": timeout, "at": at})


def final_seats(ruleset: Any, state: Any) -> list[dict[str, Any]]:
    """Every seat's final sheet or play area, as the public view shows it at the end (plain
    values, as a record read back holds them)."""
    seats: list[dict[str, Any]] = plain(ruleset.view(state))["seats"]
    return seats


def _told(events: Sequence[dict[str, Any]]) -> list[bytes]:
    """The events a decision caused, as the referee tells them (a timeout is its own event)."""
    return [_json.encode(e) for e in events if e.get("type") != "timeout"]


class Decision(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One accepted decision: the seat's ``seq`` before it, its moves, whether a deadline chose."""

    seat: int
    seq: int
    moves: list[Any]
    timeout: bool = False
    at: float | None = None  # seconds since the epoch, when the referee accepted it


class Record(msgspec.Struct, forbid_unknown_fields=True):
    """Everything needed to replay a game; tokens never appear here."""

    ruleset: str
    options: dict[str, Any]
    seats: list[str]
    commitment: str
    client_seeds: list[str] = []
    decisions: list[Decision] = []
    dice: list[dict[str, Any]] = []
    totals: list[int] = []
    ranking: list[int] = []
    final: list[dict[str, Any]] = []  # every seat's sheet or area at the end
    finished: bool = False
    chain: str | None = None  # hex: the hash chain's end over these decisions
    seed: str | None = None  # hex, revealed once the game is over


class VerifyReport(msgspec.Struct, frozen=True):
    """``ok`` only on an exact match; ``notes`` say what was not compared, and why."""

    ok: bool
    problems: list[str]
    notes: list[str] = []


class Recorder:
    """Plays a game through a ruleset and keeps its record (the service does the same in Redis)."""

    def __init__(
        self,
        ruleset: Any,
        options: Any,
        seats: list[str],
        seed: bytes,
        client_seeds: list[str] | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.seed = seed
        client_seeds = list(client_seeds or [])
        self.state = ruleset.create(options, len(seats), _dice.dice_key(seed, client_seeds))
        self.record = Record(
            ruleset.id,
            msgspec.to_builtins(self.state.options),
            list(seats),
            _dice.commitment(seed),
            client_seeds,
        )
        self.chain = chain_start(self.record.commitment)
        self.record.chain = self.chain.hex()

    def decide(self, seat: int, moves: list[Any], at: float | None = None) -> list[dict[str, Any]]:
        seq = self.ruleset.seq(self.state, seat)
        moves = [self.ruleset.normalize(m) for m in moves]
        events: list[dict[str, Any]] = self.ruleset.decide(self.state, seat, moves)
        self._keep(seat, seq, moves, False, at, events)
        return events

    def timeout(self, seat: int, at: float | None = None) -> list[dict[str, Any]]:
        seq = self.ruleset.seq(self.state, seat)
        moves = self.ruleset.default_moves(self.state, seat)
        events: list[dict[str, Any]] = self.ruleset.timeout(self.state, seat)
        self._keep(seat, seq, moves, True, at, events)
        return events

    def _keep(
        self,
        seat: int,
        seq: int,
        moves: list[Any],
        timeout: bool,
        at: float | None,
        events: list[Any],
    ) -> None:
        decision = record_decision(seat, seq, moves, timeout, at)
        self.chain = chain_link(self.chain, decision, _told(events))
        self.record.decisions.append(Decision(seat, seq, plain(moves), timeout, at))
        self.record.chain = self.chain.hex()
        if self.ruleset.finished(self.state):
            close(self.record, self.ruleset, self.state, self.seed)


def close(record: Record, ruleset: Any, state: Any, seed: bytes) -> None:
    """Fill in the final figures and reveal the seed."""
    record.dice = plain(ruleset.dice_log(state))
    record.totals = ruleset.totals(state)
    record.ranking = ruleset.ranking(state)
    record.final = final_seats(ruleset, state)
    record.finished = True
    record.seed = seed.hex()


def verify(
    record: Record | dict[str, Any] | bytes,
    seed: bytes | str | None = None,
    chain: str | None = None,
    *,
    step: Callable[[Any, Any, Decision | None], None] | None = None,
) -> VerifyReport:
    """Replay a game from its record and the revealed seed; ok only on an exact match.

    Every decision is re-applied and hashed into the chain with the events it causes; the
    chain must end where the record's does (and where ``chain``, the end the referee
    published, does when given). A finished game's dice, totals, ranking and every seat's
    final sheet or area must equal the replay's. A record of a game not yet over is verified
    as the prefix it is, and the notes say so.

    ``step(ruleset, state, decision)`` watches the replay: called with the new game (decision
    None), then after each decision is applied (a replay page draws its frames from it).
    """
    problems: list[str] = []
    notes: list[str] = []
    try:
        if isinstance(record, bytes):
            record = msgspec.json.decode(record, type=Record)
        elif isinstance(record, dict):
            record = msgspec.convert(record, Record)
    except msgspec.ValidationError as exc:
        return VerifyReport(False, [f"the record is malformed: {exc}"])
    if seed is None:
        seed = record.seed
    if seed is None:
        return VerifyReport(
            False, ["no seed: the game is not over, or the record hides it (give --seed)"]
        )
    try:
        seed_bytes = bytes.fromhex(seed) if isinstance(seed, str) else seed
    except ValueError:
        return VerifyReport(False, ["the seed is not hex"])
    if not hmac.compare_digest(_dice.commitment(seed_bytes), record.commitment):
        return VerifyReport(False, ["SHA-256 of the seed does not match the commitment"])
    try:
        ruleset = get_ruleset(record.ruleset)
        state = ruleset.create(
            record.options, len(record.seats), _dice.dice_key(seed_bytes, record.client_seeds)
        )
    except GameError as exc:
        return VerifyReport(False, [f"the game cannot be created: {exc.message}"])
    link = chain_start(record.commitment)
    if step is not None:
        step(ruleset, state, None)
    for index, decision in enumerate(record.decisions):
        where = f"decision {index} (seat {decision.seat}, seq {decision.seq})"
        try:
            if ruleset.seq(state, decision.seat) != decision.seq:
                problems.append(f"{where}: the seat's seq is {ruleset.seq(state, decision.seat)}")
                break
            if decision.timeout:
                moves = ruleset.default_moves(state, decision.seat)
                if plain(moves) != decision.moves:
                    problems.append(f"{where}: the default moves were {plain(moves)}")
                    break
                events = ruleset.timeout(state, decision.seat)
            else:
                # list[...] of the ruleset's Move, built at run time: not a static type
                moves = msgspec.convert(decision.moves, list[ruleset.Move])  # type: ignore[name-defined]
                if plain([ruleset.normalize(m) for m in moves]) != decision.moves:
                    problems.append(f"{where}: the moves are not in canonical form")
                    break
                events = ruleset.decide(state, decision.seat, moves)
        except (GameError, msgspec.ValidationError, IndexError) as exc:
            problems.append(f"{where}: refused on replay: {exc}")
            break
        told = _told(events)
        link = chain_link(
            link,
            record_decision(decision.seat, decision.seq, moves, decision.timeout, decision.at),
            told,
        )
        if step is not None:
            step(ruleset, state, decision)
    if problems:
        return VerifyReport(False, problems)
    if record.chain is None:
        if record.finished:
            problems.append("the record carries no chain: its decisions cannot be checked")
        else:
            notes.append("the record carries no chain (it holds no hidden decision's place)")
    elif not hmac.compare_digest(link.hex(), record.chain):
        problems.append(
            "the decisions, and the events they cause on replay, do not hash to the record's "
            "chain: the record was edited"
        )
    if chain is not None and not hmac.compare_digest(link.hex(), chain.lower()):
        problems.append("the decisions do not hash to the chain the referee published")
    if record.finished:
        if not ruleset.finished(state):
            problems.append("the replayed game is not over")
        if plain(ruleset.dice_log(state)) != record.dice:
            problems.append("the recorded dice differ from the dice the seed derives")
        if ruleset.totals(state) != record.totals:
            problems.append(f"the totals replay as {ruleset.totals(state)}, not {record.totals}")
        if ruleset.ranking(state) != record.ranking:
            problems.append(f"the ranking replays as {ruleset.ranking(state)}")
        replayed = final_seats(ruleset, state)
        for seat, (mine, theirs) in enumerate(zip(replayed, record.final, strict=False)):
            if mine != theirs:
                problems.append(f"seat {seat}'s final figures replay as {mine}, not {theirs}")
        if len(replayed) != len(record.final):
            problems.append(f"the record has final figures for {len(record.final)} seats")
    else:
        if ruleset.finished(state):
            problems.append("the record says the game is not over, but its decisions end it")
        notes.append(
            f"a prefix: {len(record.decisions)} decisions replayed; the game was not over when "
            "the record was taken, so no dice, totals or final figures were compared"
        )
    return VerifyReport(not problems, problems, notes)
