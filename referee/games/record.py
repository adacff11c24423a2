"""A finished game's record, and the replay that proves it: every die re-derived, every
decision re-applied, every figure recomputed from the revealed seed."""

from __future__ import annotations

import hmac
from typing import Any

import msgspec

from . import dice as _dice
from ._common import plain
from .errors import GameError

__all__ = ["Decision", "Record", "Recorder", "VerifyReport", "verify"]


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
    finished: bool = False
    seed: str | None = None  # hex, revealed once the game is over


class VerifyReport(msgspec.Struct, frozen=True):
    ok: bool
    problems: list[str]


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

    def decide(self, seat: int, moves: list[Any], at: float | None = None) -> list[dict]:
        seq = self.ruleset.seq(self.state, seat)
        events = self.ruleset.decide(self.state, seat, moves)
        self.record.decisions.append(Decision(seat, seq, plain(moves), False, at))
        self._close()
        return events

    def timeout(self, seat: int, at: float | None = None) -> list[dict]:
        seq = self.ruleset.seq(self.state, seat)
        moves = self.ruleset.default_moves(self.state, seat)
        events = self.ruleset.timeout(self.state, seat)
        self.record.decisions.append(Decision(seat, seq, plain(moves), True, at))
        self._close()
        return events

    def _close(self) -> None:
        if self.ruleset.finished(self.state):
            close(self.record, self.ruleset, self.state, self.seed)


def close(record: Record, ruleset: Any, state: Any, seed: bytes) -> None:
    """Fill in the final figures and reveal the seed."""
    record.dice = ruleset.dice_log(state)
    record.totals = ruleset.totals(state)
    record.ranking = ruleset.ranking(state)
    record.finished = True
    record.seed = seed.hex()


def verify(record: Record | dict | bytes, seed: bytes | str | None = None) -> VerifyReport:
    """Replay a finished game from its record and the revealed seed; ok only on an exact match."""
    from . import get_ruleset  # the registry imports this module

    problems: list[str] = []
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
        return VerifyReport(False, ["no seed: the game is not over, or the record hides it"])
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
    for index, decision in enumerate(record.decisions):
        where = f"decision {index} (seat {decision.seat}, seq {decision.seq})"
        try:
            if ruleset.seq(state, decision.seat) != decision.seq:
                problems.append(f"{where}: the seat's seq is {ruleset.seq(state, decision.seat)}")
                break
            if decision.timeout:
                expected = plain(ruleset.default_moves(state, decision.seat))
                if expected != decision.moves:
                    problems.append(f"{where}: the default moves were {expected}")
                    break
                ruleset.timeout(state, decision.seat)
            else:
                moves = msgspec.convert(decision.moves, list[ruleset.Move])
                ruleset.decide(state, decision.seat, moves)
        except (GameError, msgspec.ValidationError, IndexError) as exc:
            problems.append(f"{where}: refused on replay: {exc}")
            break
    if not problems:
        if not ruleset.finished(state):
            problems.append("the replayed game is not over")
        if ruleset.dice_log(state) != record.dice:
            problems.append("the recorded dice differ from the dice the seed derives")
        if ruleset.totals(state) != record.totals:
            problems.append(f"the totals replay as {ruleset.totals(state)}, not {record.totals}")
        if ruleset.ranking(state) != record.ranking:
            problems.append(f"the ranking replays as {ruleset.ranking(state)}")
    return VerifyReport(not problems, problems)
