"""Liar's dice as OpenSpiel's ``liars_dice`` plays it: one round, bids of quantity and face in
turn, sixes wild, a "liar" call ends it and either the caller or the last bidder loses.

Rules and the choices this plug-in made where OpenSpiel leaves room: RULES.md beside this
package. Dice come only from the key the referee hands to :meth:`LiarsDiceRuleset.create`,
through ``referee.games.roll`` at ``round/0/seat/<s>`` as CHOPTA draws its pools, so the
referee's commitment, reveal and ``verify`` hold for this ruleset as for its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, UnsetType

from referee.games import RuleViolation, check_seats, parse_options, places, roll
from referee.games.shapes import Decided, GameBase, Ranking, RecordBase, Sitting, ViewShapes

from . import bots as _bots

__all__ = [
    "FACES",
    "WILD",
    "Bid",
    "Call",
    "Liar",
    "LiarsDiceDecision",
    "LiarsDiceGameView",
    "LiarsDiceMove",
    "LiarsDiceOptions",
    "LiarsDicePublicSeat",
    "LiarsDiceRecord",
    "LiarsDiceRuleset",
    "LiarsDiceSeatView",
    "LiarsDiceState",
    "LiarsDiceView",
    "PublicBid",
    "RolledDice",
    "SeatDice",
    "SeatPublic",
    "bid_rank",
]

FACES = 6  # the referee's dice are six-sided (OpenSpiel's ``dice_sides`` at its default)
WILD = FACES  # the highest face counts as every face (OpenSpiel: ``dice_sides`` is wild)
MAX_DICE_PER_SEAT = 10
MAX_SEATS = 8

Face = Annotated[int, msgspec.Meta(ge=1, le=FACES, description="a die face, 1..6 (6 is wild)")]
Quantity = Annotated[
    int, msgspec.Meta(ge=1, le=MAX_SEATS * MAX_DICE_PER_SEAT, description="how many dice")
]
Seat = Annotated[int, msgspec.Meta(ge=0, le=MAX_SEATS - 1)]


class LiarsDiceOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Liar's dice options (OpenSpiel's ``numdice`` and ``bidding_rule``)."""

    dice_per_seat: Annotated[
        int,
        msgspec.Meta(ge=1, le=MAX_DICE_PER_SEAT, description="dice each seat rolls (OpenSpiel 1)"),
    ] = 5
    bidding_rule: Annotated[
        Literal["reset-face", "reset-quantity"],
        msgspec.Meta(
            description="reset-face: a higher quantity of any face, or the same quantity of a "
            "higher face; reset-quantity: a higher face of any quantity, or the same face with "
            "a higher quantity"
        ),
    ] = "reset-face"


class Bid(msgspec.Struct, frozen=True, tag="bid", forbid_unknown_fields=True):
    """At least ``quantity`` dice of all the seats show ``face`` (sixes count as any face)."""

    quantity: Quantity
    face: Face


class Liar(msgspec.Struct, frozen=True, tag="liar", forbid_unknown_fields=True):
    """Call the last bid a lie: the dice are shown and the round is over."""


LiarsDiceMove = Bid | Liar


def bid_rank(quantity: int, face: int, total_dice: int, rule: str) -> int:
    """OpenSpiel's action id of a bid: a bid is higher than another when its rank is."""
    if rule == "reset-face":
        return (quantity - 1) * FACES + (face - 1)
    return (face - 1) * total_dice + (quantity - 1)


def _unrank(rank: int, total_dice: int, rule: str) -> Bid:
    if rule == "reset-face":
        return Bid(rank // FACES + 1, rank % FACES + 1)
    return Bid(rank % total_dice + 1, rank // total_dice + 1)


# --- state and views


class PublicBid(msgspec.Struct, frozen=True):
    """A bid as everyone saw it made."""

    seat: Seat
    quantity: Quantity
    face: Face


class Call(msgspec.Struct, frozen=True):
    """How the round ended: who called, on which bid, how many dice matched, who lost."""

    caller: Seat
    bidder: Seat
    quantity: Quantity
    face: Face
    matches: int
    winner: Seat
    loser: Seat


class LiarsDiceState(msgspec.Struct, array_like=True):
    """A whole game. ``key`` and ``dice`` are secret until the round is over."""

    ruleset: str
    options: LiarsDiceOptions
    key: bytes
    turn: int  # the seat to bid or call
    dice: list[list[int]]  # per seat, sorted
    bids: list[PublicBid]
    seqs: list[int]
    timeouts: list[int]
    call: Call | None = None
    finished: bool = False


Turn = Annotated[Seat, msgspec.Meta(description="the seat to bid or call; absent once over")]
Shown = Annotated[
    list[Face],
    msgspec.Meta(description="the seat's dice, sorted; absent until the call shows every die"),
]


class SeatPublic(msgspec.Struct, frozen=True):
    """A seat as everyone sees it; its dice only once the round is over."""

    seat: Seat
    dice_count: Annotated[int, msgspec.Meta(ge=0, description="how many dice it rolled")]
    timeouts: Annotated[int, msgspec.Meta(ge=0, description="deadlines it let pass")]
    total: Annotated[int, msgspec.Meta(description="+1 the call's winner, -1 its loser")]
    dice: Shown | UnsetType = UNSET


class LiarsDiceView(msgspec.Struct, frozen=True, kw_only=True):
    """The board (``view(state)``): the bids, whose turn, each seat's dice count. What does
    not apply now is absent, never null (the contract's rule for the views): ``turn`` once
    the game is over, ``bid`` (the bid to beat or to call) before the first bid, ``call``
    and ``ranking`` until a seat calls, a seat's ``dice`` until then."""

    options: LiarsDiceOptions
    finished: bool
    turn: Turn | UnsetType = UNSET
    total_dice: Annotated[int, msgspec.Meta(ge=2, description="the dice of every seat")]
    bid: PublicBid | UnsetType = UNSET
    bids: Annotated[list[PublicBid], msgspec.Meta(description="every bid, first to last")]
    seats: list[SeatPublic]
    call: Call | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET


class SeatDice(msgspec.Struct, frozen=True):
    """What only one seat sees (``seat_view``, the view's ``"you"``): its own dice."""

    seat: Seat
    dice: list[Face]


class LiarsDiceSeatView(
    LiarsDiceView, frozen=True, kw_only=True, tag_field="ruleset", tag="liars-dice"
):
    """A seat's view (``view(state, seat)``): the board and its own dice."""

    you: SeatDice


class RolledDice(msgspec.Struct, frozen=True):
    """A seat's dice as rolled (``dice_log``; the record shows them once the game is over)."""

    round: Annotated[int, msgspec.Meta(ge=0)]
    seat: Seat
    dice: list[Face]


# --- what the referee composes of them (``views``: the contract states these)


class LiarsDicePublicSeat(Sitting):
    """Who sits there and, once the game runs (and unless sealed), its public figures."""

    dice_count: int | UnsetType = UNSET
    timeouts: int | UnsetType = UNSET
    total: int | UnsetType = UNSET
    dice: Shown | UnsetType = UNSET


class LiarsDiceGameView(GameBase, tag_field="ruleset", tag="liars-dice", kw_only=True):
    """A Liar's dice game as anyone sees it: the board once it runs, unless sealed."""

    options: LiarsDiceOptions
    turn: Turn | UnsetType = UNSET
    total_dice: int | UnsetType = UNSET
    bid: PublicBid | UnsetType = UNSET
    bids: list[PublicBid] | UnsetType = UNSET
    call: Call | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET
    seats: list[LiarsDicePublicSeat]


class LiarsDiceDecision(Decided):
    """A decision as the record tells it: one bid or call."""

    moves: list[LiarsDiceMove]


class LiarsDiceRecord(RecordBase, tag_field="ruleset", tag="liars-dice", kw_only=True):
    """A Liar's dice game's record."""

    options: LiarsDiceOptions
    decisions: list[LiarsDiceDecision]
    dice: Annotated[list[RolledDice], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[SeatPublic], msgspec.Meta(description="empty until over")]


# --- the engine


class LiarsDiceRuleset:
    """``liars-dice``: 2..8 seats, one round; the loser of the call -1, its winner +1."""

    id: ClassVar[str] = "liars-dice"
    title: ClassVar[str] = "Liar's dice"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = MAX_SEATS
    Options: ClassVar[type] = LiarsDiceOptions
    Move: ClassVar[Any] = LiarsDiceMove
    State: ClassVar[type] = LiarsDiceState
    #: its views, as the engine returns them and the contract states them (the referee
    #: composes the public view and the record of the board's parts)
    views: ClassVar[ViewShapes] = ViewShapes(
        LiarsDiceSeatView, LiarsDiceGameView, LiarsDiceDecision, LiarsDiceRecord
    )
    #: house bots, as ``referee.plugins`` takes them: name -> (seed) -> (turn JSON) -> move
    bots: ClassVar[dict[str, Any]] = {
        "random": _bots.random_bot,
        "greedy": _bots.greedy_bot,
        "strong": _bots.strong_bot,
    }
    #: its part of the referee's pages (a JavaScript module, served as
    #: /rulesets/liars-dice/page.js): the board a spectator sees, what a seat clicks
    page_script: ClassVar[Path] = Path(__file__).parent / "page.js"
    #: the refusal codes this ruleset raises besides the referee's own, and what each means
    codes: ClassVar[dict[str, str]] = {
        "bid-not-higher": "a bid must be higher than the last one in the game's bidding rule",
        "quantity-out-of-range": "a bid's quantity is 1..the number of dice in the game",
        "face-out-of-range": "a bid's face is 1..6",
        "no-bid-to-call": "liar calls the last bid: the first decision of a round is a bid",
    }

    def options(self, raw: Any) -> LiarsDiceOptions:
        return parse_options(LiarsDiceOptions, raw)

    def create(self, options: Any, seats: int, key: bytes) -> LiarsDiceState:
        options = self.options(options)
        check_seats(seats, self.min_seats, self.max_seats, self.id)
        dice = [sorted(self._rolled(key, options, s)) for s in range(seats)]
        return LiarsDiceState(self.id, options, key, 0, dice, [], [0] * seats, [0] * seats)

    def _rolled(self, key: bytes, options: LiarsDiceOptions, seat: int) -> tuple[int, ...]:
        """A seat's dice, as the seed derives them (in the order rolled)."""
        return roll(key, f"round/0/seat/{seat}", options.dice_per_seat)

    def _total_dice(self, state: LiarsDiceState) -> int:
        return len(state.seqs) * state.options.dice_per_seat

    def _last_rank(self, state: LiarsDiceState) -> int:
        if not state.bids:
            return -1
        last = state.bids[-1]
        return bid_rank(
            last.quantity, last.face, self._total_dice(state), state.options.bidding_rule
        )

    # -- whose turn ----------------------------------------------------------------------------

    def to_decide(self, state: LiarsDiceState) -> list[int]:
        return [] if state.finished else [state.turn]

    def must_decide(self, state: LiarsDiceState, seat: int) -> bool:
        return not state.finished and state.turn == seat

    def seq(self, state: LiarsDiceState, seat: int) -> int:
        return state.seqs[seat]

    def public_seq(self, state: LiarsDiceState, seat: int) -> int:
        """Every bid and call is made in view: all of a seat's decisions are counted."""
        return state.seqs[seat]

    def disclosed(self, state: LiarsDiceState, seat: int) -> int:
        """Every decision is public as it is made: the secret is the dice, not the bids."""
        return state.seqs[seat]

    def finished(self, state: LiarsDiceState) -> bool:
        return state.finished

    def _check_seat(self, state: LiarsDiceState, seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < len(state.seqs):
            raise RuleViolation("no-such-seat", f"there is no seat {seat}", field="seat")

    def normalize(self, move: Any) -> Any:
        """A bid or a call has one form only."""
        return move

    def legal_moves(self, state: LiarsDiceState, seat: int) -> list[Any]:
        """``liar`` first (once there is a bid: the default of a missed deadline), then every
        higher bid from the lowest up, in the bidding rule's order (OpenSpiel's action ids)."""
        self._check_seat(state, seat)
        if state.finished or seat != state.turn:
            return []
        total, rule = self._total_dice(state), state.options.bidding_rule
        moves: list[Any] = [Liar()] if state.bids else []
        moves += [_unrank(r, total, rule) for r in range(self._last_rank(state) + 1, total * FACES)]
        return moves

    # -- deciding ------------------------------------------------------------------------------

    def _validate(self, state: LiarsDiceState, seat: int, move: Any) -> None:
        """Independent of :meth:`legal_moves`; the tests check that both agree."""
        if state.finished:
            raise RuleViolation("game-over", "the game is over")
        if seat != state.turn:
            raise RuleViolation(
                "not-your-turn", f"it is seat {state.turn}'s turn, not seat {seat}'s"
            )
        if isinstance(move, Liar):
            if not state.bids:
                raise RuleViolation(
                    "no-bid-to-call", "there is no bid to call yet: the round opens with a bid"
                )
            return
        if not isinstance(move, Bid):
            raise RuleViolation("unknown-move", f"{type(move).__name__} is not a Liar's dice move")
        total = self._total_dice(state)
        if not isinstance(move.quantity, int) or not 1 <= move.quantity <= total:
            raise RuleViolation(
                "quantity-out-of-range",
                f"the game has {total} dice: bid a quantity of 1..{total}, not {move.quantity}",
                field="quantity",
            )
        if not isinstance(move.face, int) or not 1 <= move.face <= FACES:
            raise RuleViolation(
                "face-out-of-range", f"a face is 1..{FACES}, not {move.face}", field="face"
            )
        rule = state.options.bidding_rule
        if bid_rank(move.quantity, move.face, total, rule) <= self._last_rank(state):
            last = state.bids[-1]
            how = (
                "a higher quantity, or as many of a higher face"
                if rule == "reset-face"
                else "a higher face, or more of the same face"
            )
            raise RuleViolation(
                "bid-not-higher",
                f"{move.quantity} × {move.face} does not beat {last.quantity} × {last.face} "
                f"({rule}: bid {how})",
                field="quantity",
            )

    def decide(
        self, state: LiarsDiceState, seat: int, moves: Sequence[Any]
    ) -> list[dict[str, Any]]:
        """One bid or one call (a list of one move, as every ruleset takes a list)."""
        self._check_seat(state, seat)
        if len(moves) != 1:
            raise RuleViolation(
                "one-move-per-decision", "a decision is exactly one bid or call", field="moves"
            )
        self._validate(state, seat, moves[0])
        return self._play(state, seat, moves[0])

    def default_moves(self, state: LiarsDiceState, seat: int) -> list[Any]:
        """What :meth:`timeout` applies: the first legal move (a call, or the lowest bid)."""
        self._check_seat(state, seat)
        if state.finished or seat != state.turn:
            raise RuleViolation("not-your-turn", f"it is not seat {seat}'s turn")
        return self.legal_moves(state, seat)[:1]

    def timeout(self, state: LiarsDiceState, seat: int) -> list[dict[str, Any]]:
        """The deadline passed: the seat calls the last bid (or opens with the lowest bid)."""
        (move,) = self.default_moves(state, seat)
        state.timeouts[seat] += 1
        return [{"type": "timeout", "seat": seat}, *self._play(state, seat, move)]

    def _play(self, state: LiarsDiceState, seat: int, move: Any) -> list[dict[str, Any]]:
        state.seqs[seat] += 1
        events: list[dict[str, Any]] = [
            {"type": "played", "seat": seat, "move": msgspec.to_builtins(move)}
        ]
        if isinstance(move, Bid):
            state.bids.append(PublicBid(seat, move.quantity, move.face))
            state.turn = (seat + 1) % len(state.seqs)
            return events
        last = state.bids[-1]
        matches = sum(1 for dice in state.dice for d in dice if d in (last.face, WILD))
        bidder_right = matches >= last.quantity
        winner, loser = (last.seat, seat) if bidder_right else (seat, last.seat)
        state.call = Call(seat, last.seat, last.quantity, last.face, matches, winner, loser)
        state.finished = True
        events.append(
            {
                "type": "round_over",
                "round": 0,
                "dice": [list(dice) for dice in state.dice],
                "call": msgspec.to_builtins(state.call),
                "totals": self.totals(state),
            }
        )
        return events  # the service announces the end, with the ranking

    # -- what players see ----------------------------------------------------------------------

    def totals(self, state: LiarsDiceState) -> list[int]:
        """OpenSpiel's returns: +1 the call's winner, -1 its loser, 0 every other seat."""
        totals = [0] * len(state.seqs)
        if state.call is not None:
            totals[state.call.winner] = 1
            totals[state.call.loser] = -1
        return totals

    def ranking(self, state: LiarsDiceState) -> list[int]:
        return places(self.totals(state))

    def scores(self, state: LiarsDiceState) -> list[dict[str, Any]]:
        return [{"total": total} for total in self.totals(state)]

    def view(self, state: LiarsDiceState, seat: int | None = None) -> LiarsDiceView:
        """Public: the bids, whose turn, each seat's dice count; every die once it is over. A
        seat's view adds its own dice, nobody else's."""
        totals, over = self.totals(state), state.finished
        board: dict[str, Any] = {
            "options": state.options,
            "finished": over,
            "turn": UNSET if over else state.turn,
            "total_dice": self._total_dice(state),
            "bid": state.bids[-1] if state.bids else UNSET,
            "bids": list(state.bids),
            "seats": [
                SeatPublic(
                    s,
                    len(state.dice[s]),
                    state.timeouts[s],
                    totals[s],
                    list(state.dice[s]) if over else UNSET,
                )
                for s in range(len(state.seqs))
            ],
            "call": UNSET if state.call is None else state.call,
            "ranking": self.ranking(state) if over else UNSET,
        }
        if seat is None:
            return LiarsDiceView(**board)
        return LiarsDiceSeatView(**board, you=self.seat_view(state, seat))

    def seat_view(self, state: LiarsDiceState, seat: int) -> SeatDice:
        """What only ``seat`` sees: its own dice (``view``'s "you")."""
        self._check_seat(state, seat)
        return SeatDice(seat, list(state.dice[seat]))

    def dice_log(self, state: LiarsDiceState) -> list[RolledDice]:
        """Every seat's dice as rolled (the record shows them once the game is over)."""
        return [
            RolledDice(0, s, list(self._rolled(state.key, state.options, s)))
            for s in range(len(state.seqs))
        ]
