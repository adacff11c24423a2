"""CHOPTA: ten hidden dice each, placed or swapped into public areas, scored as sets and chains.

Rules: RULES.md "CHOPTA" and docs/RULES.md. A decision is one die: with ``dice_per_turn`` 2 a
turn is two decisions by the same seat in a row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from ...games import dice as _dice
from ...games._common import Scorer, check_seats, parse_options, places
from ...games.errors import RuleViolation
from ...games.shapes import ViewShapes
from .scoring import Arrangement, score_area
from .state import (
    POOL_SIZE,
    ChoptaMove,
    ChoptaOptions,
    ChoptaState,
    Place,
    Swap,
    _counts,
    _dice_of,
    swap_takes,
)
from .views import (
    ChoptaBoard,
    ChoptaDecision,
    ChoptaGameView,
    ChoptaPool,
    ChoptaRecord,
    ChoptaSeat,
    ChoptaSeatView,
    ChoptaYou,
)

__all__ = ["ChoptaRuleset"]


class ChoptaRuleset:
    """``chopta``: 2..8 seats; first to the target after a round ends the game."""

    id: ClassVar[str] = "chopta"
    title: ClassVar[str] = "CHOPTA"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 8
    Options: ClassVar[type] = ChoptaOptions
    Move: ClassVar[Any] = ChoptaMove
    State: ClassVar[type] = ChoptaState
    #: house bots by name, each a function of a seed (the package sets them: ``bots.py``)
    bots: ClassVar[dict[str, Callable[[int | None], Any]]] = {}
    #: its score calculator (the package sets it: ``shapes.py``)
    scorer: ClassVar[Scorer | None] = None
    #: its views, as the engine returns them and the contract states them
    views: ClassVar[ViewShapes | None] = ViewShapes(
        ChoptaSeatView, ChoptaGameView, ChoptaDecision, ChoptaRecord
    )
    #: its part of the pages, a JavaScript module (the package sets it: ``page.js``)
    page_script: ClassVar[Path | None] = None
    rules_help: ClassVar[Path | None] = None
    #: its rounds in the turn report (the package sets it: ``report.py``)
    report: ClassVar[Any] = None
    #: the turn report's rounds: the view's ``round``
    round_field: ClassVar[str] = "round"
    round_dealt: ClassVar[tuple[str, ...]] = ()

    def options(self, raw: Any) -> ChoptaOptions:
        options: ChoptaOptions = parse_options(ChoptaOptions, raw)
        return options

    def create(self, options: Any, seats: int, key: bytes) -> ChoptaState:
        options = self.options(options)
        check_seats(seats, self.min_seats, self.max_seats, self.id)
        state = ChoptaState(
            self.id,
            options,
            key,
            -1,
            0,
            0,
            [],
            [],
            [0] * seats,
            [],
            [False] * seats,
            [0] * seats,
            [0] * seats,
        )
        self._start_round(state)
        return state

    def _pool_dice(self, state: ChoptaState, round_: int, seat: int) -> tuple[int, ...]:
        return _dice.roll(state.key, f"round/{round_}/seat/{seat}", POOL_SIZE)

    def _start_round(self, state: ChoptaState) -> None:
        seats = len(state.totals)
        state.round += 1
        state.pools = [list(_counts(self._pool_dice(state, state.round, s))) for s in range(seats)]
        state.areas = [[0] * 7 for _ in range(seats)]
        state.turn = state.round % seats
        state.played = 0

    # -- whose turn ----------------------------------------------------------------------------

    def to_decide(self, state: ChoptaState) -> list[int]:
        return [] if state.finished else [state.turn]

    def must_decide(self, state: ChoptaState, seat: int) -> bool:
        return not state.finished and state.turn == seat

    def seq(self, state: ChoptaState, seat: int) -> int:
        return state.seqs[seat]

    def public_seq(self, state: ChoptaState, seat: int) -> int:
        """Every decision places a die in view: all of them are counted in public."""
        return state.seqs[seat]

    def finished(self, state: ChoptaState) -> bool:
        return state.finished

    def disclosed(self, state: ChoptaState, seat: int) -> int:
        """Every CHOPTA decision is public as it is played (the die lands in an area)."""
        return state.seqs[seat]

    def _check_seat(self, state: ChoptaState, seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < len(state.totals):
            raise RuleViolation("no-such-seat", f"there is no seat {seat}", field="seat")

    def normalize(self, move: Any) -> Any:
        """CHOPTA moves have one form only."""
        return move

    def legal_moves(self, state: ChoptaState, seat: int) -> list[Any]:
        """Places (lowest die first), then swaps by opponent, die and taken value."""
        self._check_seat(state, seat)
        if state.finished or seat != state.turn:
            return []
        pool = state.pools[seat]
        moves: list[Any] = [Place(v) for v in range(1, 7) if pool[v]]
        for opponent, area in enumerate(state.areas):
            if opponent == seat:
                continue
            for v in range(1, 7):
                if pool[v]:
                    moves.extend(Swap(v, opponent, w) for w in swap_takes(v) if area[w])
        return moves

    # -- deciding ------------------------------------------------------------------------------

    def _validate(self, state: ChoptaState, seat: int, move: Any) -> None:
        """Independent of :meth:`legal_moves`; the tests check that both agree."""
        if state.finished:
            raise RuleViolation("game-over", "the game is over")
        if seat != state.turn:
            raise RuleViolation(
                "not-your-turn", f"it is seat {state.turn}'s turn, not seat {seat}'s"
            )
        if not isinstance(move, (Place, Swap)):
            raise RuleViolation("unknown-move", f"{type(move).__name__} is not a CHOPTA move")
        pool = state.pools[seat]
        if not pool[move.die]:
            raise RuleViolation(
                "die-not-in-pool",
                f"your pool holds {_dice_of(pool)}: there is no {move.die} in it",
                field="die",
            )
        if isinstance(move, Swap):
            if move.opponent == seat or not 0 <= move.opponent < len(state.totals):
                raise RuleViolation(
                    "invalid-opponent",
                    f"swap with another seat (0..{len(state.totals) - 1}, not yourself)",
                    field="opponent",
                )
            if move.take not in swap_takes(move.die):
                raise RuleViolation(
                    "swap-not-allowed",
                    f"a {move.die} may take {'a 6' if move.die == 1 else f'1..{move.die - 1}'}"
                    f", not a {move.take}",
                    field="take",
                )
            if not state.areas[move.opponent][move.take]:
                raise RuleViolation(
                    "die-not-in-area",
                    f"seat {move.opponent}'s play area has no {move.take}",
                    field="take",
                )

    def decide(self, state: ChoptaState, seat: int, moves: Sequence[Any]) -> list[dict[str, Any]]:
        """Play one die (a list of one move, as every ruleset takes a list)."""
        self._check_seat(state, seat)
        if len(moves) != 1:
            raise RuleViolation(
                "one-move-per-decision", "a CHOPTA decision is exactly one die", field="moves"
            )
        self._validate(state, seat, moves[0])
        state.timeouts[seat] = 0
        return self._play(state, seat, moves[0])

    def default_moves(self, state: ChoptaState, seat: int) -> list[Any]:
        """What :meth:`timeout` would apply: the first legal move (the lowest die placed)."""
        self._check_seat(state, seat)
        if state.finished or seat != state.turn:
            raise RuleViolation("not-your-turn", f"it is not seat {seat}'s turn")
        return self.legal_moves(state, seat)[:1]

    def timeout(self, state: ChoptaState, seat: int) -> list[dict[str, Any]]:
        """The deadline passed: place the lowest die; three in a row retire the seat."""
        (move,) = self.default_moves(state, seat)
        state.timeouts[seat] += 1
        if state.timeouts[seat] >= 3:
            state.retired[seat] = True
        events = [{"type": "timeout", "seat": seat, "retired": state.retired[seat]}]
        return events + self._play(state, seat, move)

    def _play(self, state: ChoptaState, seat: int, move: Any) -> list[dict[str, Any]]:
        state.pools[seat][move.die] -= 1
        if isinstance(move, Place):
            state.areas[seat][move.die] += 1
        else:
            state.areas[move.opponent][move.die] += 1
            state.areas[move.opponent][move.take] -= 1
            state.areas[seat][move.take] += 1
        state.seqs[seat] += 1
        state.played += 1
        events = [{"type": "played", "seat": seat, "move": msgspec.to_builtins(move)}]
        return events + self._advance(state)

    def _advance(self, state: ChoptaState) -> list[dict[str, Any]]:
        """Pass the turn on: skip empty pools, end rounds, auto-place for retired seats."""
        events: list[dict[str, Any]] = []
        seats = len(state.totals)
        while True:
            pool = state.pools[state.turn]
            if state.played < state.options.dice_per_turn and sum(pool) != 0:
                if not state.retired[state.turn]:
                    return events
                events += self._play_retired(state)
                continue
            if not any(sum(p) for p in state.pools):
                events += self._end_round(state)
                if state.finished:
                    return events
                continue
            state.played = 0
            state.turn = (state.turn + 1) % seats
            while not sum(state.pools[state.turn]):
                state.turn = (state.turn + 1) % seats

    def _play_retired(self, state: ChoptaState) -> list[dict[str, Any]]:
        seat = state.turn
        move = Place(next(v for v in range(1, 7) if state.pools[seat][v]))
        state.pools[seat][move.die] -= 1
        state.areas[seat][move.die] += 1
        state.played += 1
        return [{"type": "played", "seat": seat, "move": msgspec.to_builtins(move), "auto": True}]

    def _end_round(self, state: ChoptaState) -> list[dict[str, Any]]:
        options = state.options
        results = [
            score_area(_dice_of(area), bonus=options.bonus, face_value=options.face_value)
            for area in state.areas
        ]
        scores = [r.points for r in results]
        state.history.append(scores)
        state.totals = [t + s for t, s in zip(state.totals, scores, strict=True)]
        event = {
            "type": "round_over",
            "round": state.round,
            "pools": [list(self._pool_dice(state, state.round, s)) for s in range(len(scores))],
            "areas": [msgspec.to_builtins(r) for r in results],
            "totals": list(state.totals),
        }
        if max(state.totals) >= options.target or state.round + 1 >= options.max_rounds:
            state.finished = True
            return [event]  # the service announces the end, with the ranking
        self._start_round(state)
        return [event]

    # -- what players see ----------------------------------------------------------------------

    def totals(self, state: ChoptaState) -> list[int]:
        return list(state.totals)

    def ranking(self, state: ChoptaState) -> list[int]:
        return places(state.totals)

    def scores(self, state: ChoptaState) -> list[Arrangement]:
        """Each play area's best arrangement now (its points: what the area would score)."""
        options = state.options
        return [
            score_area(_dice_of(area), bonus=options.bonus, face_value=options.face_value)
            for area in state.areas
        ]

    def view(self, state: ChoptaState, seat: int | None = None) -> ChoptaBoard:
        """Public: areas, pool sizes, totals (``views.seat_view``'s fields but ``you``). With
        ``seat``, that seat's view: the board and its own pool, nobody else's."""
        arrangements = self.scores(state)
        board: dict[str, Any] = {
            "options": state.options,
            "finished": state.finished,
            "round": state.round,
            "first_seat": state.round % len(state.totals),
            "turn": None if state.finished else state.turn,
            "played_this_turn": state.played,
            "seats": [
                ChoptaSeat(
                    seat=s,
                    pool_size=sum(state.pools[s]),
                    area=_dice_of(state.areas[s]),
                    retired=state.retired[s],
                    total=state.totals[s],
                    rounds=[scores[s] for scores in state.history],
                    arrangement=arrangements[s],
                )
                for s in range(len(state.totals))
            ],
        }
        if state.finished:
            board["ranking"] = self.ranking(state)
        if seat is None:
            return ChoptaBoard(**board)
        return ChoptaSeatView(**board, you=self.seat_view(state, seat))

    def seat_view(self, state: ChoptaState, seat: int) -> ChoptaYou:
        """What only ``seat`` sees: its own pool (``view``'s "you")."""
        self._check_seat(state, seat)
        return ChoptaYou(seat, _dice_of(state.pools[seat]))

    def dice_log(self, state: ChoptaState) -> list[ChoptaPool]:
        """Every pool rolled so far, by round and seat (secret until the round is over)."""
        return [
            ChoptaPool(r, s, list(self._pool_dice(state, r, s)))
            for r in range(state.round + 1)
            for s in range(len(state.totals))
        ]
