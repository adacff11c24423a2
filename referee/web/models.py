"""The bodies of the HTTP contract, requests and responses, as msgspec Structs; a request's
body refuses fields it does not know.

Where a body depends on the ruleset (a move, a new game's or tournament's options and seats),
its shapes are built here once, at import, from the registry made whole first
(``load_plugins``): every registered ruleset's ``Move`` Structs make ``AnyMove``, and each
ruleset's ``Options`` and seat limits a ``Create<Ruleset>Game`` tagged with its id
(``ruleset_body``; a tournament's, and an entrant's next decision, in ``tournament_models``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import msgspec

from ..core.documents import NAME_PATTERN
from ..core.refusals import Refusal
from ..games import RULESETS, Ruleset
from ..plugins import load_plugins
from .codes import PROBLEM_CODES, RULESET_CODES
from .views import (
    SEAT_VIEWS,
    Commitment,
    EpochSeconds,
    GameStatus,
    RulesetId,
    TurnStatus,
    shape_name,
)

__all__ = [
    "CREATE_GAMES",
    "MOVES",
    "AnyMove",
    "ClaimSeat",
    "Claimed",
    "CreateGame",
    "GameCreated",
    "InviteCode",
    "MoveAccepted",
    "MoveSubmission",
    "Name",
    "OneMove",
    "PostalMoves",
    "Problem",
    "RulesetCode",
    "RulesetInfo",
    "SeatSpec",
    "SeatToken",
    "Turn",
    "WebhookSeat",
    "move_accepted",
    "ruleset_body",
]

load_plugins()  # the registry whole before the shapes below are built from it


def _moves() -> tuple[type, ...]:
    """Every registered ruleset's move Structs, each once, in the registry's order."""
    found: list[type] = []
    for ruleset in RULESETS.values():
        for move in getattr(ruleset.Move, "__args__", (ruleset.Move,)):
            if move not in found:
                found.append(move)
    return tuple(found)


#: Every move of every ruleset, told apart by ``type`` (the contract's ``AnyMove``).
MOVES = _moves()
if TYPE_CHECKING:  # a union built from the registry at run time
    AnyMove = Any
else:
    AnyMove = Union[MOVES]  # noqa: UP007  (a union of a tuple of types made at run time)

Name = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=64,
        description="shown to everyone, so it passes RFC 8266's Nickname profile: no control, "
        "line-break, format, invisible or bidi characters, nor blank ones (U+2800), not blank "
        "(else 422 invalid-name); stored and shown normalised (spaces trimmed and collapsed, "
        "NFKC), at most 64 characters then",
        # the contract states what a pattern can of check_name; the server refuses with its code
        extra_json_schema={"pattern": NAME_PATTERN},
    ),
]
ClientSeed = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
InviteCode = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=128,
        description="the organizer's invite code (403 invite-code-refused when it does not match)",
    ),
]


HouseBot = Annotated[
    Literal["random", "greedy", "strong"],
    msgspec.Meta(
        description="a reference bot the referee plays this seat with, to practise against: "
        "at most 3 in a game, and at least one seat that is not a house bot (else 422 "
        "house-bot-limit); it decides as soon as its seat must, seeing only that seat's view"
    ),
]


class WebhookSeat(msgspec.Struct, forbid_unknown_fields=True):
    """A bot the referee calls with each of the seat's turns (docs/CONNECTING.md)."""

    url: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=2048,
            description="http or https; an address that is not globally routable is refused "
            "(422 webhook-url-refused) unless the operator allows it (REFEREE_WEBHOOK_ALLOW)",
        ),
    ]


class SeatSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A seat: named (its token is returned now), open (``name`` omitted; a bot claims it),
    a house bot (``bot``; no token), a webhook bot (``webhook``; the referee calls it with
    each turn, and returns the secret it signs with instead of a token), or a bot account
    (``account``; no token: the bot plays it from its league)."""

    name: Name | None = None
    client_seed: ClientSeed | None = None
    bot: HouseBot | None = None
    webhook: WebhookSeat | None = None
    account: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=256,
                description="a bot account's name (docs/LEAGUE.md): the organizer who created "
                "it seats it; the game reaches it as its league games do, and no token is "
                "shown (403 not-bot-owner, 403 bot-not-active)",
            ),
        ]
        | None
    ) = None


#: what the contract says of a game's seats beyond their count, in words: JSON Schema's
#: ``contains``/``maxContains`` would say it exactly, but mainstream client generators fail
#: on them; the server checks it (422 house-bot-limit)
_HOUSE_LIMITS = (
    "At most 3 seats are house bots (`bot`), and at least one seat is not (else 422 "
    "house-bot-limit)."
)
Seats = Annotated[
    list[SeatSpec],
    msgspec.Meta(min_length=1, max_length=64, description="the seats, 1 to 64. " + _HOUSE_LIMITS),
]


class _NewGame(msgspec.Struct, forbid_unknown_fields=True, tag_field="ruleset", kw_only=True):
    """A new game: its ruleset (the tag), seats, options, and seconds per decision."""

    deadline_s: Annotated[
        float, msgspec.Meta(ge=0, le=3600, description="seconds per decision; 0 = none")
    ] = 10.0
    invite_code: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=128,
                description="open seats are claimed only with this code (kept as a hash)",
            ),
        ]
        | None
    ) = None

    @property
    def ruleset(self) -> str:
        # every request body of this kind is tagged with its ruleset's id: a str
        return self.__struct_config__.tag  # type: ignore[return-value]


def _create_game(ruleset: Ruleset) -> type[_NewGame]:
    """A new game of one ruleset: its seats within its limits, its options."""
    low, high = ruleset.min_seats, ruleset.max_seats
    seats = Annotated[
        list[SeatSpec],
        msgspec.Meta(
            min_length=low,
            max_length=high,
            description=f"the seats, {low} to {high}. " + _HOUSE_LIMITS,
        ),
    ]
    doc = f"A game of {ruleset.title}: {low} to {high} seats."
    creation: type[_NewGame] = ruleset_body(ruleset, "Game", [("seats", seats)], _NewGame, doc)
    return creation


def ruleset_body(
    ruleset: Ruleset, kind: str, fields: list[Any], base: type, doc: str, **config: Any
) -> Any:
    """A creation's body for one ruleset: ``fields`` and the ruleset's options over ``base``,
    tagged by ``ruleset``, strict."""
    made: Any = msgspec.defstruct(
        f"Create{shape_name(ruleset.id)}{kind}",
        [*fields, ("options", ruleset.Options, ruleset.Options())],
        bases=(base,),
        module=__name__,
        tag=ruleset.id,
        tag_field="ruleset",
        forbid_unknown_fields=True,
        kw_only=True,
        **config,
    )
    made.__doc__ = doc
    return made


#: A new game per ruleset, told apart by ``ruleset``; each has its own options and seat limits.
CREATE_GAMES = tuple(_create_game(ruleset) for ruleset in RULESETS.values())
if TYPE_CHECKING:
    CreateGame = _NewGame
else:
    CreateGame = Union[CREATE_GAMES]  # noqa: UP007  (made at run time)


class SeatToken(msgspec.Struct):
    """A seat of a created game and its token (shown once; None for an open seat)."""

    seat: int
    name: str | None
    token: str | None  # shown once; None for an open seat
    webhook_secret: (
        Annotated[
            str,
            msgspec.Meta(
                description="a webhook seat's signing secret (Standard Webhooks), shown once"
            ),
        ]
        | None
    ) = None


class GameCreated(msgspec.Struct):
    """A game just created: its id, the commitment to its seed, and its seats."""

    id: str
    ruleset: RulesetId
    status: GameStatus
    commitment: Commitment
    seats: list[SeatToken]

    @property
    def location(self) -> str:
        """Where the game is read (the 201's Location)."""
        return f"/v1/games/{self.id}"


class ClaimSeat(msgspec.Struct, forbid_unknown_fields=True):
    """A player taking an open seat, with a seed of its own to mix into the dice."""

    name: Name
    client_seed: ClientSeed | None = None
    invite_code: InviteCode | None = None


class Claimed(msgspec.Struct):
    """The seat taken and its token (shown once)."""

    game_id: str
    seat: int
    name: str
    token: str

    @property
    def location(self) -> str:
        """Where the seat plays, with its token (the 201's Location)."""
        return f"/v1/games/{self.game_id}/turn"


Seq = Annotated[int, msgspec.Meta(ge=0, description="the seat's seq this decides")]
PostalRound = Annotated[list[AnyMove], msgspec.Meta(min_length=1, max_length=64)]


class MoveSubmission(msgspec.Struct, forbid_unknown_fields=True):
    """One decision (``move``) or a postal round's decisions (``moves``), for seat seq ``seq``;
    the contract states it as ``OneMove`` or ``PostalMoves``."""

    seq: Seq
    move: AnyMove | msgspec.UnsetType = msgspec.UNSET
    moves: PostalRound | msgspec.UnsetType = msgspec.UNSET

    def decided(self) -> list[AnyMove]:
        """The decision's moves; exactly one of ``move`` and ``moves`` must be sent."""
        if self.moves is msgspec.UNSET and self.move is not msgspec.UNSET:
            return [self.move]
        if self.move is msgspec.UNSET and self.moves is not msgspec.UNSET:
            return self.moves
        raise Refusal("move-or-moves", "send exactly one of 'move' and 'moves'", field="move")


class OneMove(msgspec.Struct, forbid_unknown_fields=True):
    """A decision of one move (an element of the turn's ``legal_moves``)."""

    seq: Seq
    move: AnyMove


class PostalMoves(msgspec.Struct, forbid_unknown_fields=True):
    """A postal round's decisions, in order."""

    seq: Seq
    moves: PostalRound


class MoveAccepted(msgspec.Struct, omit_defaults=True):
    """A decision accepted: the seq it decided, the next seq, and the game's status; asked
    with ``?wait=``, also the seat's next turn (one request per decision)."""

    accepted: bool
    seat: int
    seq: int
    next_seq: int
    moves: list[AnyMove]
    game_status: GameStatus
    turn: Turn | None = None


#: A seat's view of its game, told apart by ``ruleset``; null while the game waits for its
#: seats.
if TYPE_CHECKING:
    SeatView = Any
else:
    SeatView = Union[SEAT_VIEWS]  # noqa: UP007  (a tuple of types)


class Turn(msgspec.Struct):
    """What a seat must decide now, and its private view of the game."""

    ruleset: Annotated[
        RulesetId,
        msgspec.Meta(description="the game's ruleset: which moves and view to expect"),
    ]
    status: TurnStatus
    game_status: GameStatus
    seat: int
    seq: Annotated[int, msgspec.Meta(ge=0, description="send it with the decision")]
    legal_moves: Annotated[
        list[AnyMove], msgspec.Meta(description="every move the seat may make now")
    ]
    deadline: Annotated[
        EpochSeconds | None,
        msgspec.Meta(
            description="when the referee decides for the seat (its first legal move), in "
            "seconds since the Unix epoch; null: no deadline"
        ),
    ]
    view: SeatView | None


class RulesetOption(msgspec.Struct):
    """An option of a ruleset: its name, default and JSON Schema."""

    name: str
    default: Any
    schema: dict[str, Any]


class RulesetCode(msgspec.Struct):
    """A refusal code of a ruleset's own: its status and what it means."""

    code: str
    status: Annotated[
        int, msgspec.Meta(description="the HTTP status it is answered with: 422, or 409")
    ]
    meaning: str


class RulesetInfo(msgspec.Struct):
    """A ruleset: its seats, options and move types, and the distribution it comes from (the
    referee's own, or a plug-in's: ``referee.plugins``)."""

    id: str
    title: str
    min_seats: int
    max_seats: int
    options: list[RulesetOption]
    move_types: list[str]
    distribution: Annotated[str, msgspec.Meta(description="the installed package it comes from")]
    version: Annotated[str, msgspec.Meta(description="that package's version")]
    codes: Annotated[
        list[RulesetCode],
        msgspec.Meta(
            description="the refusal codes of its own, besides the referee's (the README "
            "lists those): a problem's code and the end of its type"
        ),
    ]


if TYPE_CHECKING:  # a Literal built from PROBLEM_CODES at run time: statically, a str
    ProblemCode = str
else:
    ProblemCode = Annotated[
        Literal[(*PROBLEM_CODES, *RULESET_CODES)],
        msgspec.Meta(
            description="a stable code: the README lists the referee's with their meaning, "
            "GET /v1/rulesets each ruleset's own (its codes)"
        ),
    ]


class Problem(msgspec.Struct, omit_defaults=True):
    """RFC 9457 problem details; ``type`` ends in a stable code."""

    type: str
    title: str
    status: int
    detail: str
    code: ProblemCode
    field: str | None = None
    current_seq: int | None = None
    instance: str | None = None


def move_accepted(turn: dict[str, Any] | None = None, **answer: Any) -> MoveAccepted:
    """A decision's answer from the service's, with the next turn if it was asked for."""
    return MoveAccepted(**answer, turn=None if turn is None else Turn(**turn))
