"""CHOICE's score calculator: its body and the function that answers it (``POST
/v1/rulesets/choice/score``; ``choice_specials`` has its own route on the same). The views'
Structs are the engine's own (``views.py``, ``ChoiceRuleset.views``)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from ...games._common import Scorer
from .sheet import ChoiceScore, score_marks
from .views import SumKey

__all__ = ["MarksRequest", "scorer"]


class MarksRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A CHOICE sheet's marks, by sum (a sum left out has none)."""

    marks: dict[SumKey, Annotated[int, msgspec.Meta(ge=0, le=1000)]]


def score_sheet(request: MarksRequest) -> ChoiceScore:
    """A sheet's figures from its marks."""
    return score_marks({int(k): v for k, v in request.marks.items()})


def scorer(title: str, description: str) -> Scorer:
    """A CHOICE ruleset's calculator (both score sheets alike; each has its own route, as the
    contract states one body per route)."""
    return Scorer(
        MarksRequest,
        ChoiceScore,
        score_sheet,
        f"Score a {title} sheet from its marks",
        description,
    )
