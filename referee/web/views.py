"""The shapes of what the referee shows of a game, as the contract states them: each
ruleset's seat view (``Turn.view``), public view (``getGame``) and record (``getRecord``),
each a union told apart by ``ruleset`` (a tournament's: ``tournament_views``).

The service builds these as plain values (``referee.core.views``, the rules engines' ``view``)
and encodes them as they are; these Structs only describe them, and the suite checks every
body a played game shows against the committed contract (``tests/service/test_typed_views.py``).
A field that is absent while the game waits for its seats or is sealed is optional here.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ..games._common import Die
from ..rulesets.choice.engine import ChoiceOptions, ChoiceScore, FreeThrow, Mark, Pass
from ..rulesets.choice_specials.engine import Fdh, Kur, Minus1, Minus2, NullCard, SuppenKasper
from ..rulesets.chopta.engine import ChoptaOptions, Group, Place, Swap

__all__ = [
    "GAME_VIEWS",
    "RECORDS",
    "SEAT_VIEWS",
    "ChoiceDecision",
    "ChoiceGameView",
    "ChoiceRecord",
    "ChoiceSeatView",
    "ChoiceSpecialsDecision",
    "ChoiceSpecialsGameView",
    "ChoiceSpecialsRecord",
    "ChoiceSpecialsSeatView",
    "ChoptaDecision",
    "ChoptaGameView",
    "ChoptaRecord",
    "ChoptaSeatView",
    "EpochSeconds",
    "GameStatus",
    "NextPage",
    "RulesetId",
    "TurnStatus",
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
RulesetId = Literal["choice", "choice-specials", "chopta"]
Card = Literal["fdh", "null", "kur", "minus1", "minus2", "suppen_kasper"]
SumKey = Annotated[str, msgspec.Meta(pattern="^([2-9]|1[0-2])$", description="a sum, 2..12")]
EpochSeconds = Annotated[float, msgspec.Meta(description="seconds since the Unix epoch (UTC)")]
#: a listing page's ``next``: the cursor to send as ``?before=``
NextPage = Annotated[
    str | None, msgspec.Meta(description="the cursor of the next page; null: the last page")
]

ChoiceMove = Mark | FreeThrow | Pass
ChoiceSpecialsMove = Mark | FreeThrow | Pass | Fdh | NullCard | Kur | Minus1 | Minus2 | SuppenKasper
ChoptaMove = Place | Swap


# -- CHOICE sheets -----------------------------------------------------------------------------


class FifthDie(msgspec.Struct):
    """One of the (up to three) fifth-die values chosen, and how often it was marked."""

    value: Die
    marks: Annotated[int, msgspec.Meta(ge=0)]


class _Sheet(msgspec.Struct, kw_only=True):
    marks: Annotated[
        dict[SumKey, Annotated[int, msgspec.Meta(ge=0)]],
        msgspec.Meta(description="marks per sum, '2'..'12'"),
    ]
    fifth_dice: Annotated[list[FifthDie], msgspec.Meta(max_length=3)]
    done: Annotated[bool, msgspec.Meta(description="a fifth die reached its last mark")]
    retired: bool
    rounds: Annotated[int, msgspec.Meta(ge=0, description="rounds played")]
    free_throws: Annotated[int, msgspec.Meta(ge=0)]
    score: ChoiceScore


class ChoiceSheet(_Sheet):
    """A CHOICE score sheet: marks per sum, the fifth dice, and what it scores."""


class ChoiceSpecialsSheet(_Sheet):
    """A CHOICE sheet with special cards: also the cards left and the leftovers plate."""

    cards: list[Card]
    plate: Annotated[list[Die], msgspec.Meta(description="the leftovers plate's dice")]


class ChoiceSeatSheet(ChoiceSheet):
    """A seat's committed (public) sheet."""

    seat: Seat
    decided: Annotated[bool, msgspec.Meta(description="the seat has decided this batch")]


class ChoiceSpecialsSeatSheet(ChoiceSpecialsSheet):
    """A seat's committed (public) sheet."""

    seat: Seat
    decided: Annotated[bool, msgspec.Meta(description="the seat has decided this batch")]


Roll = Annotated[list[Die], msgspec.Meta(min_length=5, max_length=5)]


Batch = Annotated[int, msgspec.Meta(ge=0, description="the batch of rolls being decided")]
FirstRoll = Annotated[int, msgspec.Meta(ge=0, description="the game-wide index of rolls[0]")]
Rolls = Annotated[list[Roll], msgspec.Meta(description="this batch's rolls, five dice each")]
EndMarks = Annotated[int, msgspec.Meta(description="a fifth die's marks that end a sheet")]


class _ChoiceBoard(msgspec.Struct, kw_only=True):
    batch: Batch
    first_roll: FirstRoll
    rolls: Rolls
    end_marks: EndMarks
    ranking: Ranking | UnsetType = UNSET


class ChoiceYou(msgspec.Struct):
    """What only this seat sees: its draft sheet and its decisions not yet disclosed."""

    seat: Seat
    roll_index: Annotated[int, msgspec.Meta(ge=0, description="this batch's roll to decide")]
    decisions: list[ChoiceMove]
    sheet: ChoiceSheet


class ChoiceSpecialsYou(msgspec.Struct):
    """What only this seat sees: its draft sheet and its decisions not yet disclosed."""

    seat: Seat
    roll_index: Annotated[int, msgspec.Meta(ge=0, description="this batch's roll to decide")]
    decisions: list[ChoiceSpecialsMove]
    sheet: ChoiceSpecialsSheet


class ChoiceSeatView(_ChoiceBoard, tag_field="ruleset", tag="choice"):
    """A CHOICE seat's view: the board, every committed sheet, and its own (``you``)."""

    options: ChoiceOptions
    finished: bool
    seats: list[ChoiceSeatSheet]
    you: ChoiceYou


class ChoiceSpecialsSeatView(_ChoiceBoard, tag_field="ruleset", tag="choice-specials"):
    """A CHOICE-with-special-cards seat's view."""

    options: ChoiceOptions
    finished: bool
    seats: list[ChoiceSpecialsSeatSheet]
    you: ChoiceSpecialsYou


# -- CHOPTA ------------------------------------------------------------------------------------


class Arrangement(msgspec.Struct):
    """A play area's best arrangement: its groups, the dice left out, the points."""

    points: int
    groups: list[Group]
    unused: list[Die]


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


class _ChoptaBoard(msgspec.Struct, kw_only=True):
    round: Round
    first_seat: Seat
    turn: ToPlay
    played_this_turn: PlayedThisTurn
    ranking: Ranking | UnsetType = UNSET


class ChoptaYou(msgspec.Struct):
    """What only this seat sees: its own pool."""

    seat: Seat
    pool: list[Die]


class ChoptaSeatView(_ChoptaBoard, tag_field="ruleset", tag="chopta"):
    """A CHOPTA seat's view: every play area and pool size, and its own pool (``you``)."""

    options: ChoptaOptions
    finished: bool
    seats: list[ChoptaSeat]
    you: ChoptaYou


SEAT_VIEWS = (ChoiceSeatView, ChoiceSpecialsSeatView, ChoptaSeatView)

# -- the public view ---------------------------------------------------------------------------


class _Sitting(msgspec.Struct, kw_only=True):
    seat: Seat
    name: Annotated[str | None, msgspec.Meta(description="null while the seat is open")]
    claimed: bool
    deadline: (
        Annotated[
            EpochSeconds | None,
            msgspec.Meta(description="when the seat's current decision times out; null: none"),
        ]
        | UnsetType
    ) = UNSET


class ChoicePublicSeat(_Sitting, kw_only=True):
    """Who sits there and, once the game runs (and unless sealed), their sheet."""

    marks: dict[SumKey, int] | UnsetType = UNSET
    fifth_dice: list[FifthDie] | UnsetType = UNSET
    done: bool | UnsetType = UNSET
    retired: bool | UnsetType = UNSET
    rounds: int | UnsetType = UNSET
    free_throws: int | UnsetType = UNSET
    score: ChoiceScore | UnsetType = UNSET
    decided: bool | UnsetType = UNSET


class ChoiceSpecialsPublicSeat(ChoicePublicSeat, kw_only=True):
    """Who sits there and, once the game runs (and unless sealed), their sheet and cards."""

    cards: list[Card] | UnsetType = UNSET
    plate: list[Die] | UnsetType = UNSET


class ChoptaPublicSeat(_Sitting, kw_only=True):
    """Who sits there and, once the game runs (and unless sealed), their play area."""

    pool_size: int | UnsetType = UNSET
    area: list[Die] | UnsetType = UNSET
    retired: bool | UnsetType = UNSET
    total: int | UnsetType = UNSET
    rounds: list[int] | UnsetType = UNSET
    arrangement: Arrangement | UnsetType = UNSET


class _Game(msgspec.Struct, kw_only=True):
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
    chain: Chain | UnsetType | None = UNSET


class _ChoiceGame(_Game, kw_only=True):
    options: ChoiceOptions
    batch: Batch | UnsetType = UNSET
    first_roll: FirstRoll | UnsetType = UNSET
    rolls: Rolls | UnsetType = UNSET
    end_marks: EndMarks | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET


class ChoiceGameView(_ChoiceGame, tag_field="ruleset", tag="choice", kw_only=True):
    """A CHOICE game as anyone sees it; the board fields once it runs, unless sealed."""

    seats: list[ChoicePublicSeat]


class ChoiceSpecialsGameView(_ChoiceGame, tag_field="ruleset", tag="choice-specials", kw_only=True):
    """A CHOICE-with-special-cards game as anyone sees it."""

    seats: list[ChoiceSpecialsPublicSeat]


class ChoptaGameView(_Game, tag_field="ruleset", tag="chopta", kw_only=True):
    """A CHOPTA game as anyone sees it; the board fields once it runs, unless sealed."""

    options: ChoptaOptions
    seats: list[ChoptaPublicSeat]
    round: Round | UnsetType = UNSET
    first_seat: Seat | UnsetType = UNSET
    turn: ToPlay | UnsetType = UNSET
    played_this_turn: PlayedThisTurn | UnsetType = UNSET
    ranking: Ranking | UnsetType = UNSET


GAME_VIEWS = (ChoiceGameView, ChoiceSpecialsGameView, ChoptaGameView)

# -- the record --------------------------------------------------------------------------------


class _Decided(msgspec.Struct, kw_only=True):
    seat: Seat
    seq: Annotated[int, msgspec.Meta(ge=0, description="the seat's seq this decided")]
    timeout: Annotated[bool, msgspec.Meta(description="the deadline chose for the seat")]
    at: EpochSeconds


class ChoiceDecision(_Decided):
    """A decision as the record tells it."""

    moves: list[ChoiceMove]


class ChoiceSpecialsDecision(_Decided):
    """A decision as the record tells it."""

    moves: list[ChoiceSpecialsMove]


class ChoptaDecision(_Decided):
    """A decision as the record tells it."""

    moves: list[ChoptaMove]


class ChoiceRoll(msgspec.Struct):
    """A roll of the game, by its game-wide index."""

    roll: Annotated[int, msgspec.Meta(ge=0)]
    dice: Roll


class ChoptaPool(msgspec.Struct):
    """A seat's pool as rolled at the start of a round."""

    round: Annotated[int, msgspec.Meta(ge=0)]
    seat: Seat
    dice: list[Die]


class _Record(msgspec.Struct, kw_only=True):
    seats: Annotated[list[str], msgspec.Meta(description="names, in seat order")]
    commitment: Commitment
    client_seeds: Annotated[
        list[str], msgspec.Meta(description="the seeds the seats mixed into the dice")
    ]
    totals: Annotated[list[int], msgspec.Meta(description="empty until the game is over")]
    ranking: Annotated[
        list[Placing], msgspec.Meta(description=RANKING + "; empty until the game is over")
    ]
    finished: bool
    chain: Annotated[
        Chain | None,
        msgspec.Meta(description="null while the record holds back an undisclosed decision"),
    ]
    seed: Annotated[Seed | None, msgspec.Meta(description="null until the game is over")]


class ChoiceRecord(_Record, tag_field="ruleset", tag="choice", kw_only=True):
    """A CHOICE game's record: what its view and events disclosed; once over, every die."""

    options: ChoiceOptions
    decisions: list[ChoiceDecision]
    dice: Annotated[list[ChoiceRoll], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoiceSeatSheet], msgspec.Meta(description="empty until over")]


class ChoiceSpecialsRecord(_Record, tag_field="ruleset", tag="choice-specials", kw_only=True):
    """A CHOICE-with-special-cards game's record."""

    options: ChoiceOptions
    decisions: list[ChoiceSpecialsDecision]
    dice: Annotated[list[ChoiceRoll], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoiceSpecialsSeatSheet], msgspec.Meta(description="empty until over")]


class ChoptaRecord(_Record, tag_field="ruleset", tag="chopta", kw_only=True):
    """A CHOPTA game's record."""

    options: ChoptaOptions
    decisions: list[ChoptaDecision]
    dice: Annotated[list[ChoptaPool], msgspec.Meta(description="empty until the game is over")]
    final: Annotated[list[ChoptaSeat], msgspec.Meta(description="empty until over")]


RECORDS = (ChoiceRecord, ChoiceSpecialsRecord, ChoptaRecord)
