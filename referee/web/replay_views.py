"""The shapes of a game listing (``listGames``) and of a finished game's replay
(``getReplay``): each replay a union told apart by ``ruleset``, each frame the public view
the game had at that step."""

from __future__ import annotations

from typing import Annotated

import msgspec

from .views import (
    ChoiceDecision,
    ChoiceGameView,
    ChoiceSpecialsDecision,
    ChoiceSpecialsGameView,
    ChoptaDecision,
    ChoptaGameView,
    EpochSeconds,
    GameStatus,
    NextPage,
    RulesetId,
)

__all__ = [
    "REPLAYS",
    "ChoiceReplay",
    "ChoiceSpecialsReplay",
    "ChoptaReplay",
    "GamePage",
    "GameSummary",
]


class GameSummary(msgspec.Struct):
    """A game as the listing shows it: no more than its sealed view (``getGame`` has the
    rest)."""

    id: str
    ruleset: RulesetId
    status: GameStatus
    seats: Annotated[list[str | None], msgspec.Meta(description="names; null: an open seat")]
    deadline_s: Annotated[float, msgspec.Meta(ge=0, description="seconds per decision; 0: none")]
    tournament: Annotated[bool, msgspec.Meta(description="a table of a tournament")]
    tournament_id: Annotated[
        str | None,
        msgspec.Meta(
            description="the tournament whose table it is (null: none, or a table created "
            "before the referee kept it)"
        ),
    ]
    created: EpochSeconds


class GamePage(msgspec.Struct):
    """A page of games, newest first; ask for the next with ``?before=next``."""

    games: list[GameSummary]
    next: NextPage


_Problems = Annotated[
    list[str], msgspec.Meta(description="where the replay differs from the record; empty when ok")
]
_Verified = Annotated[
    bool,
    msgspec.Meta(
        description="the record replays from the revealed seed to exactly the dice, chain and "
        "totals the referee published (what `referee verify` checks)"
    ),
]


class ChoiceFrame(msgspec.Struct):
    """One step: the decision that led to it (null: the game's start) and the view after it."""

    decision: ChoiceDecision | None
    view: ChoiceGameView


class ChoiceSpecialsFrame(msgspec.Struct):
    """One step: the decision that led to it (null: the game's start) and the view after it."""

    decision: ChoiceSpecialsDecision | None
    view: ChoiceSpecialsGameView


class ChoptaFrame(msgspec.Struct):
    """One step: the decision that led to it (null: the game's start) and the view after it."""

    decision: ChoptaDecision | None
    view: ChoptaGameView


class ChoiceReplay(msgspec.Struct, tag_field="ruleset", tag="choice"):
    """A finished CHOICE game, step by step."""

    id: str
    verified: _Verified
    problems: _Problems
    frames: list[ChoiceFrame]


class ChoiceSpecialsReplay(msgspec.Struct, tag_field="ruleset", tag="choice-specials"):
    """A finished CHOICE-with-special-cards game, step by step."""

    id: str
    verified: _Verified
    problems: _Problems
    frames: list[ChoiceSpecialsFrame]


class ChoptaReplay(msgspec.Struct, tag_field="ruleset", tag="chopta"):
    """A finished CHOPTA game, step by step."""

    id: str
    verified: _Verified
    problems: _Problems
    frames: list[ChoptaFrame]


REPLAYS = (ChoiceReplay, ChoiceSpecialsReplay, ChoptaReplay)
