"""The shapes of what the referee shows of a game, as the contract states them: each
ruleset's seat view (``Turn.view``), public view (``getGame``) and record (``getRecord``),
each a union told apart by ``ruleset`` (a tournament's: ``tournament_views``).

Each ruleset declares its own (its ``views``: ``referee.games.shapes.ViewShapes``, the
Structs its engine returns); the unions are joined here once, at import, from the registry
made whole first (``load_plugins``). The service builds the views as those Structs (the
engine's seat view, and the public view and record ``referee.core.views`` composes of the
engine's parts) and encodes them as they are; the suite checks every body a played game shows
against the committed contract (``tests/service/test_typed_views.py``). A field that is
absent while the game waits for its seats or is sealed is optional, and never null.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from ..games import RULESETS
from ..games.shapes import (
    RANKING,
    Commitment,
    EpochSeconds,
    GameStatus,
    Placing,
    Seed,
    TurnStatus,
    ViewShapes,
    own_views,
)
from ..plugins import load_plugins

__all__ = [
    "DECISIONS",
    "GAME_VIEWS",
    "RANKING",
    "RECORDS",
    "SEAT_VIEWS",
    "VIEWS",
    "Commitment",
    "EpochSeconds",
    "GameStatus",
    "NextPage",
    "Placing",
    "RulesetId",
    "Seed",
    "TurnStatus",
    "shape_name",
]

load_plugins()  # the registry whole before the unions below are joined from it

if TYPE_CHECKING:  # a Literal of the registered ids, made at run time: statically, a str
    RulesetId = str
else:
    RulesetId = Literal[tuple(RULESETS)]

#: a listing page's ``next``: the cursor to send as ``?before=``
NextPage = Annotated[
    str | None, msgspec.Meta(description="the cursor of the next page; null: the last page")
]


def shape_name(ruleset_id: str) -> str:
    """A ruleset's id as a component's name: each part capitalised (``a-b`` -> ``AB``)."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", ruleset_id))


#: every registered ruleset that states its own views, with them
VIEWS: dict[str, ViewShapes] = {
    ruleset.id: shapes for ruleset in RULESETS.values() if (shapes := own_views(ruleset))
}
SEAT_VIEWS: tuple[Any, ...] = tuple(v.seat_view for v in VIEWS.values())
GAME_VIEWS: tuple[Any, ...] = tuple(v.game_view for v in VIEWS.values())
DECISIONS: tuple[Any, ...] = tuple(v.decision for v in VIEWS.values())
RECORDS: tuple[Any, ...] = tuple(v.record for v in VIEWS.values())
