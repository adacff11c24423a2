"""What the views of every ruleset share, as the contract states them: statuses, seats,
places, the commitment, seed and chain, and the bases of a ruleset's public seat, public
view, decision and record. A ruleset's package subclasses them with its own fields, tagged
with its id (``ruleset``), and names them in its ``views`` (a :class:`ViewShapes`); the web
layer joins every registered ruleset's into the contract's unions."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Annotated, Any, Literal, get_args

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "RANKING",
    "Chain",
    "Commitment",
    "Decided",
    "EpochSeconds",
    "GameBase",
    "GameStatus",
    "Placing",
    "Ranking",
    "RecordBase",
    "Seat",
    "Seed",
    "Sitting",
    "TurnStatus",
    "ViewShapes",
    "own_views",
    "public_seat",
]

GameStatus = Annotated[
    Literal["waiting", "running", "finished"],
    msgspec.Meta(description="waiting: open seats to claim; running: being played; finished: over"),
]
TurnStatus = Annotated[
    Literal["your_turn", "waiting", "finished"],
    msgspec.Meta(
        description="your_turn: decide now (legal_moves); waiting: others decide first, or "
        "the game waits for its seats; finished: the game is over"
    ),
]
Seat = Annotated[int, msgspec.Meta(ge=0, le=63, description="a seat number, from 0")]
Placing = Annotated[
    int,
    msgspec.Meta(
        ge=1,
        description="a place: 1 is first; equal totals share a place and the next place is "
        "skipped (1, 1, 3)",
    ),
]
#: how a finished game ranks its seats (docs/RULES.md, Ranking)
RANKING = (
    "each seat's place, in seat order (ranking[s] is seat s's place): highest total first; "
    "equal totals share a place and the next place is skipped (totals 30, 30, 10 rank 1, 1, "
    "3). No tie-break: seats that tie share the place"
)
Ranking = Annotated[list[Placing], msgspec.Meta(description=RANKING + "; once the game is over")]
Commitment = Annotated[
    str,
    msgspec.Meta(
        pattern="^[0-9a-f]{64}$",
        description="SHA-256 of the seed, hex: shown from the start, so the dice cannot change",
    ),
]
Seed = Annotated[
    str,
    msgspec.Meta(
        pattern="^[0-9a-f]+$",
        description="the seed that made every die, hex; shown once the game (and every game "
        "dealt the same dice) is over, so anyone can replay them (referee verify)",
    ),
]
Chain = Annotated[
    str,
    msgspec.Meta(
        pattern="^[0-9a-f]{64}$",
        description="SHA-256 hash chain over the decisions told so far, hex",
    ),
]
EpochSeconds = Annotated[float, msgspec.Meta(description="seconds since the Unix epoch (UTC)")]


class Sitting(msgspec.Struct):
    """Who sits at a seat of the public view, and when its decision times out. A ruleset's
    public seat adds its board seat's fields but ``seat``, each absent until the game runs,
    in the board seat's order (then the referee builds it from positions, not names)."""

    seat: Seat
    name: Annotated[str | None, msgspec.Meta(description="null while the seat is open")]
    claimed: bool
    deadline: (
        Annotated[
            EpochSeconds,
            msgspec.Meta(
                description="when the seat's current decision times out; absent: none (or "
                "the game waits, is sealed, or is a step of a replay)"
            ),
        ]
        | UnsetType
    ) = UNSET


class GameBase(msgspec.Struct, kw_only=True):
    """What every game's public view shows (a ruleset adds its board and seats)."""

    id: str
    status: GameStatus
    commitment: Commitment
    deadline_s: Annotated[float, msgspec.Meta(ge=0, description="seconds per decision; 0: none")]
    to_decide: Annotated[list[Seat], msgspec.Meta(description="the seats to decide now")]
    sealed: Annotated[
        bool,
        msgspec.Meta(
            description="true while other games dealt the same dice play on: the view shows "
            "only who sits where"
        ),
    ]
    seed: Seed | UnsetType = UNSET
    chain: Chain | UnsetType = UNSET


class Decided(msgspec.Struct, kw_only=True):
    """A decision as the record tells it (a ruleset adds its ``moves``)."""

    seat: Seat
    seq: Annotated[int, msgspec.Meta(ge=0, description="the seat's seq this decided")]
    timeout: Annotated[bool, msgspec.Meta(description="the deadline chose for the seat")]
    at: EpochSeconds


class RecordBase(msgspec.Struct, kw_only=True):
    """What every record shows; a ruleset's states the types of its options, decisions, dice
    and final figures (each in its place here, so every record's fields come in one order)."""

    options: Any
    seats: Annotated[list[str], msgspec.Meta(description="names, in seat order")]
    commitment: Commitment
    client_seeds: Annotated[
        list[str], msgspec.Meta(description="the seeds the seats mixed into the dice")
    ]
    decisions: list[Any]
    dice: Annotated[list[Any], msgspec.Meta(description="empty until the game is over")]
    totals: Annotated[list[int], msgspec.Meta(description="empty until the game is over")]
    ranking: Annotated[
        list[Placing], msgspec.Meta(description=RANKING + "; empty until the game is over")
    ]
    final: Annotated[list[Any], msgspec.Meta(description="empty until over")]
    finished: bool
    chain: Annotated[
        Chain | None,
        msgspec.Meta(description="null while the record holds back an undisclosed decision"),
    ]
    seed: Annotated[Seed | None, msgspec.Meta(description="null until the game is over")]


class ViewShapes(msgspec.Struct, frozen=True):
    """The Structs of a ruleset's views, each tagged with its id (``ruleset``): a seat's
    (``Turn.view``, what ``view(state, seat)`` returns), the public one (``getGame``), a
    decision as the record and the replay tell it, and the record (``getRecord``). A ruleset
    declares them as its ``views`` attribute. The engine builds them and the referee composes
    the public view and the record from their parts (``referee.core.views``): the seat view
    is the engine's board (``view(state)``) with ``you`` added; the public view holds the
    board's fields but ``finished`` and ``seats``, and each of its ``seats`` a seat's
    ``Sitting`` with the board seat's fields; the record's ``final`` is the board's seats and
    its ``dice`` the engine's ``dice_log``."""

    seat_view: type
    game_view: type
    decision: type
    record: type


def own_views(ruleset: Any) -> ViewShapes | None:
    """A ruleset's views if they are its own: each tagged with its id. A ruleset that took
    another's by subclassing it has views the contract cannot tell apart: it has none here,
    and its views are served as plain values."""
    shapes = getattr(ruleset, "views", None)
    if not isinstance(shapes, ViewShapes):
        return None
    return shapes if _tagged(shapes, ruleset.id) else None


@lru_cache(maxsize=256)
def _tagged(shapes: ViewShapes, ruleset_id: str) -> bool:
    """Whether each of the views is tagged ``ruleset_id``, remembered: every turn asks
    (a Struct's config is built anew at each look, 1.3 µs a ruleset)."""
    for shape in (shapes.seat_view, shapes.game_view, shapes.record):
        config = getattr(shape, "__struct_config__", None)
        if config is None or config.tag != ruleset_id:
            return False
    return True


@cache
def public_seat(game_view: type) -> type:
    """The Struct of a public view's seats (``seats: list[...]`` of ``game_view``)."""
    seats = next(f for f in msgspec.structs.fields(game_view) if f.name == "seats")
    seat: type = get_args(seats.type)[0]
    return seat
