"""The shapes of a game listing (``listGames``) and of a finished game's replay
(``getReplay``): each replay a union told apart by ``ruleset``, each frame the public view
the game had at that step."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from ..games import RULESETS
from .views import VIEWS, EpochSeconds, GameStatus, NextPage, RulesetId, shape_name

__all__ = [
    "REPLAYS",
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


def _replay(ruleset_id: str) -> Any:
    """A ruleset's replay: its frames, each its decision and its public view."""
    shapes, name = VIEWS[ruleset_id], shape_name(ruleset_id)
    frame: Any = msgspec.defstruct(
        f"{name}Frame",
        [("decision", shapes.decision | None), ("view", shapes.game_view)],
        module=__name__,
    )
    frame.__doc__ = (
        "One step: the decision that led to it (null: the game's start) and the view after it."
    )
    replay: Any = msgspec.defstruct(
        f"{name}Replay",
        [("id", str), ("verified", _Verified), ("problems", _Problems), ("frames", list[frame])],
        module=__name__,
        tag=ruleset_id,
        tag_field="ruleset",
    )
    replay.__doc__ = f"A finished {RULESETS[ruleset_id].title} game, step by step."
    return replay


#: each ruleset's replay, joined from the registry
REPLAYS: tuple[Any, ...] = tuple(_replay(ruleset_id) for ruleset_id in VIEWS)
