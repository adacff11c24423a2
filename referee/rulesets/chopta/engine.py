"""CHOPTA: ten hidden dice each, placed or swapped into public areas, scored as sets and chains.

Rules: RULES.md "CHOPTA" and docs/RULES.md. A decision is one die: with ``dice_per_turn`` 2 a
turn is two decisions by the same seat in a row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import UNSET, UnsetType

from ...games import dice as _dice
from ...games._common import Die, Scorer, check_seats, parse_options, places
from ...games.errors import RuleViolation
from ...games.shapes import (
    Decided,
    GameBase,
    Ranking,
    RecordBase,
    Seat,
    Sitting,
    ViewShapes,
)

__all__ = [
    "Arrangement",
    "ChoptaBoard",
    "ChoptaDecision",
    "ChoptaGameView",
    "ChoptaMove",
    "ChoptaOptions",
    "ChoptaPool",
    "ChoptaPublicSeat",
    "ChoptaRecord",
    "ChoptaRuleset",
    "ChoptaSeat",
    "ChoptaSeatView",
    "ChoptaState",
    "ChoptaYou",
    "Group",
    "Place",
    "Swap",
    "score_area",
    "swap_takes",
]

POOL_SIZE = 10


class ChoptaOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """CHOPTA options; all rule options are off by default."""

    target: Annotated[
        int, msgspec.Meta(ge=1, le=10_000, description="points that end the game")
    ] = 50
    bonus: Annotated[bool, msgspec.Meta(description="+1 per die beyond a group's minimum")] = False
    face_value: Annotated[
        bool, msgspec.Meta(description="each grouped die scores its face value instead of 1")
    ] = False
    dice_per_turn: Annotated[int, msgspec.Meta(ge=1, le=2, description="dice played per turn")] = 1
    max_rounds: Annotated[
        int, msgspec.Meta(ge=1, le=1_000, description="the game also ends after this many rounds")
    ] = 100


class Place(msgspec.Struct, frozen=True, tag="place", forbid_unknown_fields=True):
    """Put a die from the pool into your own play area."""

    die: Die


class Swap(msgspec.Struct, frozen=True, tag="swap", forbid_unknown_fields=True):
    """Put a die into an opponent's area and take a lower die (a 1 takes a 6) into yours."""

    die: Die
    opponent: Annotated[int, msgspec.Meta(ge=0, le=7)]
    take: Die


ChoptaMove = Place | Swap


def swap_takes(die: int) -> tuple[int, ...]:
    """The values a die of value ``die`` may take in a swap (RULES.md CHOPTA §2)."""
    return (6,) if die == 1 else tuple(range(1, die))


# --- scoring


class Group(msgspec.Struct, frozen=True):
    """A set or a chain of a play area, its dice, and the points it scores."""

    kind: str  # "set" or "chain"
    dice: list[int]
    points: int


class Arrangement(msgspec.Struct, frozen=True):
    """A play area's best arrangement: its groups, the dice left out, the points."""

    points: int
    groups: list[Group]
    unused: list[Die]


def _counts(dice: Iterable[int]) -> tuple[int, ...]:
    counts = [0] * 7
    for d in dice:
        counts[d] += 1
    return tuple(counts)


@lru_cache(maxsize=1024)
def _gains(count: int, worth: int, bonus: int) -> tuple[int, ...]:
    """Points of a value's ``count`` dice when y of them are in chains and the rest in one set.

    Constant while >= 3 dice stay for the set, then y * (worth + bonus) once the set is gone.
    """
    if count >= 3:
        flat = count * worth + bonus * (count - 3)
        return (flat,) * (count - 2) + tuple(
            y * (worth + bonus) for y in range(count - 2, count + 1)
        )
    return tuple(y * (worth + bonus) for y in range(count + 1))


@lru_cache(maxsize=65536)
def _best(counts: tuple[int, ...], bonus: bool, face: bool) -> tuple[int, int, int, int, int, int]:
    """Best (points, N, y1, y2, y5, y6) for a count vector (index = face value).

    Every chain (>= 4 consecutive values inside 1..6) contains both 3 and 4, so with N chains
    y3 = y4 = N, and the chains cover 1, 2, 5, 6 y1 <= y2 <= N and y6 <= y5 <= N times. Such a
    cover splits into chains exactly when N - y2 <= y6 and N - y5 <= y1 (Hall's condition on
    chain starts and ends). The bonus of chains, sum(y) - 4N, does not depend on the split.
    Dice of a value not in chains score best as one set, so per value the score g(y) is
    constant while at least 3 dice stay for the set, and rises with y after that: only the
    top of each range, and the top of its constant part, can be best.
    """
    b = 1 if bonus else 0
    _, c1, c2, c3, c4, c5, c6 = counts
    if face:
        g1, g2, g3 = _gains(c1, 1, b), _gains(c2, 2, b), _gains(c3, 3, b)
        g4, g5, g6 = _gains(c4, 4, b), _gains(c5, 5, b), _gains(c6, 6, b)
    else:
        g1, g2, g3 = _gains(c1, 1, b), _gains(c2, 1, b), _gains(c3, 1, b)
        g4, g5, g6 = _gains(c4, 1, b), _gains(c5, 1, b), _gains(c6, 1, b)
    result = (g1[0] + g2[0] + g3[0] + g4[0] + g5[0] + g6[0], 0, 0, 0, 0, 0)
    for n in range(1, min(c3, c4) + 1):
        middle = g3[n] + g4[n] - 4 * n * b
        hi2, hi5 = min(c2, n), min(c5, n)
        # the top of each range, and the top of its flat part, are the only candidates
        for y2 in (c2 - 3, hi2) if 0 <= c2 - 3 < hi2 else (hi2,):
            for y5 in (c5 - 3, hi5) if 0 <= c5 - 3 < hi5 else (hi5,):
                lo1, hi1 = max(0, n - y5), min(y2, c1)
                lo6, hi6 = max(0, n - y2), min(y5, c6)
                if lo1 > hi1 or lo6 > hi6:
                    continue
                y1 = hi1
                if lo1 <= c1 - 3 < hi1 and g1[c1 - 3] > g1[hi1]:
                    y1 = c1 - 3
                y6 = hi6
                if lo6 <= c6 - 3 < hi6 and g6[c6 - 3] > g6[hi6]:
                    y6 = c6 - 3
                points = middle + g2[y2] + g5[y5] + g1[y1] + g6[y6]
                if points > result[0]:
                    result = (points, n, y1, y2, y5, y6)
    return result


def score_area(
    dice: Iterable[int], *, bonus: bool = False, face_value: bool = False
) -> Arrangement:
    """Score a play area with the arrangement that maximises points (RULES.md CHOPTA §3, §5)."""
    counts = _counts(dice)
    points, n, y1, y2, y5, y6 = _best(counts, bonus, face_value)
    b = 1 if bonus else 0
    # Split the chain cover: starts at 1, 2, 3 and ends at 4, 5, 6.
    starts = {1: y1, 2: y2 - y1, 3: n - y2}
    ends = {4: n - y5, 5: y5 - y6, 6: y6}
    chains: list[tuple[int, int]] = []
    for start, choices in ((3, (6,)), (2, (5, 6)), (1, (4, 5, 6))):
        for end in choices:
            k = min(starts[start], ends[end])
            chains += [(start, end)] * k
            starts[start] -= k
            ends[end] -= k
    left = list(counts)
    groups: list[Group] = []
    for start, end in sorted(chains):
        values = list(range(start, end + 1))
        for v in values:
            left[v] -= 1
        worth = sum(values) if face_value else len(values)
        groups.append(Group("chain", values, worth + b * (len(values) - 4)))
    unused: list[int] = []
    for v in range(1, 7):
        n_left = left[v]
        if n_left >= 3:
            worth = n_left * (v if face_value else 1) + b * (n_left - 3)
            groups.append(Group("set", [v] * n_left, worth))
        elif n_left:
            unused += [v] * n_left
    return Arrangement(points, groups, unused)


# --- state


class ChoptaState(msgspec.Struct, array_like=True):
    """A whole CHOPTA game. ``key`` and ``pools`` are secret; views show pool sizes only."""

    ruleset: str
    options: ChoptaOptions
    key: bytes
    round: int
    turn: int  # the seat to play
    played: int  # dice played by ``turn`` in this turn
    pools: list[list[int]]  # per seat, counts indexed by face value (index 0 unused)
    areas: list[list[int]]  # per seat, counts indexed by face value
    totals: list[int]
    history: list[list[int]]  # round scores per finished round
    retired: list[bool]
    seqs: list[int]
    timeouts: list[int]
    finished: bool = False


def _dice_of(counts: Sequence[int]) -> list[int]:
    return [v for v in range(1, 7) for _ in range(counts[v])]


# -- the views: what the engine returns, and the contract states (``views``) ----------------


class ChoptaSeat(msgspec.Struct, kw_only=True):
    """A seat's public CHOPTA figures: its play area, its pool's size (not its dice)."""

    seat: Seat
    pool_size: Annotated[int, msgspec.Meta(ge=0, description="dice left in its hidden pool")]
    area: Annotated[list[Die], msgspec.Meta(description="its play area")]
    retired: bool
    total: int
    rounds: Annotated[list[int], msgspec.Meta(description="points of each round over")]
    arrangement: Arrangement


Round = Annotated[int, msgspec.Meta(ge=0)]
ToPlay = Annotated[Seat | None, msgspec.Meta(description="the seat to play; null when over")]
PlayedThisTurn = Annotated[int, msgspec.Meta(ge=0)]


class ChoptaYou(msgspec.Struct):
    """What only this seat sees: its own pool."""

    seat: Seat
    pool: list[Die]


class ChoptaBoard(msgspec.Struct, kw_only=True):
    """What every seat sees of a CHOPTA game (``view(state)``): every play area and pool
    size."""

    options: ChoptaOptions
    finished: bool
    round: Round
    first_seat: Seat
    turn: ToPlay
    played_this_turn: PlayedThisTurn
    seats: list[ChoptaSeat]
    ranking: Ranking | UnsetType = UNSET


class ChoptaSeatView(ChoptaBoard, tag_field="ruleset", tag="chopta", kw_only=True):
    """A CHOPTA seat's view: every play area and pool size, and its own pool (``you``)."""

    you: ChoptaYou


class ChoptaPublicSeat(Sitting):
    """Who sits there and, once the game runs (and unless sealed), their play area."""

    pool_size: int | UnsetType = UNSET
    area: list[Die] | UnsetType = UNSET
    retired: bool | UnsetType = UNSET
    total: int | UnsetType = UNSET
    rounds: list[int] | UnsetType = UNSET
    arrangement: Arrangement | UnsetType = UNSET


class ChoptaGameView(GameBase, tag_field="ruleset", tag="chopta", kw_only=True):
    """A CHOPTA game as anyone sees it; the board fields once it runs, unless sealed."""

    options: ChoptaOptions
    round: Round | UnsetType = UNSET
    first_seat: Seat | UnsetType = UNSET
    turn: (
        Annotated[Seat, msgspec.Meta(description="the seat to play; absent once it is over")]
        | UnsetType
    ) = UNSET
    played_this_turn: PlayedThisTurn | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET
    seats: list[ChoptaPublicSeat]


class ChoptaDecision(Decided):
    """A decision as the record tells it."""

    moves: list[ChoptaMove]


class ChoptaPool(msgspec.Struct, gc=False):
    """A seat's pool as rolled at the start of a round."""

    round: Annotated[int, msgspec.Meta(ge=0)]
    seat: Seat
    dice: list[Die]


class ChoptaRecord(RecordBase, tag_field="ruleset", tag="chopta", kw_only=True):
    """A CHOPTA game's record."""

    options: ChoptaOptions
    decisions: list[ChoptaDecision]
    dice: Annotated[list[ChoptaPool], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoptaSeat], msgspec.Meta(description="empty until over")]


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
    #: each seat draws its own pools, so the league's arena pairs two bots in two games with
    #: the same dice and the seats swapped (duplicates), and luck cancels between them
    arena_duplicates: ClassVar[bool] = True

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
