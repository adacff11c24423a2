"""CHOPTA's score calculator: its body, its answer, and the function from one to the other
(``POST /v1/rulesets/chopta/score``). The views' Structs are the engine's own (``views.py``,
``ChoptaRuleset.views``)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from ...games._common import Die, Scorer
from .scoring import Group, score_area

__all__ = ["AreaRequest", "AreaScored", "ScoreOptions", "scorer"]

# -- the score calculator ----------------------------------------------------------------------


class ScoreOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """CHOPTA scoring variants."""

    bonus: bool = False
    face_value: bool = False


class AreaRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A CHOPTA play area's dice, and the scoring variants."""

    area: Annotated[list[Die], msgspec.Meta(max_length=1000)]
    options: ScoreOptions = ScoreOptions()


class AreaScored(msgspec.Struct):
    """A CHOPTA play area's best arrangement: its groups, the dice left out, the points
    (``total`` = ``points``)."""

    total: int
    points: int
    groups: list[Group]
    unused: list[int]


def score_play_area(request: AreaRequest) -> AreaScored:
    """A play area's best arrangement under the variants asked for."""
    options = request.options
    result = score_area(request.area, bonus=options.bonus, face_value=options.face_value)
    return AreaScored(result.points, result.points, result.groups, result.unused)


scorer = Scorer(
    AreaRequest,
    AreaScored,
    score_play_area,
    "Score a CHOPTA play area: its best arrangement",
    "The best arrangement of a CHOPTA play area into sets and chains.",
)
