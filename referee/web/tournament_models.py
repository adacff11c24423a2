"""The tournaments' bodies of the HTTP contract: a new tournament per ruleset (its options,
tagged with its id, as ``models.ruleset_body`` makes a new game's), an entrant's registration,
and an entrant's (or a bot's) next decision across its games."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import msgspec

from ..core.pairing import TournamentPlan, TournamentSpec
from ..games import RULESETS
from .league_models import Challenge
from .models import InviteCode, Name, Turn, ruleset_body
from .tournament_views import TournamentStatus
from .views import Commitment

__all__ = [
    "CREATE_TOURNAMENTS",
    "CreateTournament",
    "NextDecision",
    "Register",
    "Registered",
    "TournamentCreated",
    "next_decision",
]


class TournamentCreated(msgspec.Struct):
    """A tournament just created, open for registration."""

    id: str
    status: TournamentStatus
    commitment: Commitment

    @property
    def location(self) -> str:
        """Where the tournament is read (the 201's Location)."""
        return f"/v1/tournaments/{self.id}"


class Register(msgspec.Struct, forbid_unknown_fields=True):
    """An entrant registering under a name."""

    name: Name
    invite_code: InviteCode | None = None


class _NewTournament(TournamentPlan, frozen=True, tag_field="ruleset", kw_only=True):
    """A tournament's plan, its ruleset (the tag) and options, and the invite code its
    entrants must give, if any."""

    invite_code: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=128,
                description="entrants register only with this code (kept as a hash)",
            ),
        ]
        | None
    ) = None

    rated: Annotated[
        bool,
        msgspec.Meta(
            description="each game updates its entrants' lifetime league ratings: only bot "
            "accounts enter, with their bot tokens"
        ),
    ] = False

    def spec(self) -> TournamentSpec:
        fields = msgspec.structs.asdict(self)
        del fields["invite_code"], fields["rated"]
        fields["options"] = msgspec.to_builtins(fields["options"])
        ruleset = self.__struct_config__.tag
        assert isinstance(ruleset, str)  # every subclass is tagged with its ruleset's id
        return TournamentSpec(ruleset=ruleset, **fields)


def _create_tournament(ruleset: Any) -> type[_NewTournament]:
    doc = f"A tournament of {ruleset.title}."
    made: type[_NewTournament] = ruleset_body(
        ruleset, "Tournament", [], _NewTournament, doc, frozen=True
    )
    return made


#: A new tournament per ruleset, told apart by ``ruleset``.
CREATE_TOURNAMENTS = tuple(_create_tournament(ruleset) for ruleset in RULESETS.values())
if TYPE_CHECKING:
    CreateTournament = _NewTournament
else:
    CreateTournament = Union[CREATE_TOURNAMENTS]  # noqa: UP007  (made at run time)


class Registered(msgspec.Struct):
    """The entrant's number and token (shown once; its seats answer to it)."""

    tournament_id: str
    entrant: int
    name: str
    token: str

    @property
    def location(self) -> str:
        """Where the entrant plays, with its token (the 201's Location)."""
        return "/v1/me/next"


class NextDecision(msgspec.Struct):
    """An entrant's next decision across its games: post ``turn``'s move to ``game_id`` with
    ``seat_token``."""

    status: Annotated[
        Literal["your_turn", "waiting", "finished", "challenged"],
        msgspec.Meta(
            description="your_turn: post turn's decision to game_id with seat_token; waiting: "
            "nothing to decide before the wait ran out; finished: the tournament is over; "
            "challenged (a bot): challenges await its answer"
        ),
    ]
    tournament_id: str | None = None  # none for a bot
    game_id: str | None = None
    seat_token: str | None = None
    turn: Turn | None = None
    challenges: list[Challenge] | None = None  # a bot's open challenges


def next_decision(
    turn: dict[str, Any] | None = None,
    challenges: list[dict[str, Any]] | None = None,
    **answer: Any,
) -> NextDecision:
    """A next decision's answer from the service's (a tournament's or the league's)."""
    return NextDecision(
        **answer,
        turn=None if turn is None else Turn(**turn),
        challenges=None if challenges is None else [Challenge(**c) for c in challenges],
    )
