"""What the contract shows of CHOICE beside its engine's Structs: the score calculator's body
and the function that answers it (``POST /v1/rulesets/choice/score``)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from ...games._common import Scorer
from .engine import ChoiceScore, score_marks

__all__ = ["MarksRequest", "SumKey", "scorer"]

SumKey = Annotated[str, msgspec.Meta(pattern="^([2-9]|1[0-2])$", description="a sum, 2..12")]


class MarksRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A CHOICE sheet's marks, by sum (a sum left out has none)."""

    marks: dict[SumKey, Annotated[int, msgspec.Meta(ge=0, le=1000)]]


def score_sheet(request: MarksRequest) -> ChoiceScore:
    """A sheet's figures from its marks."""
    return score_marks({int(k): v for k, v in request.marks.items()})


def scorer(operation_id: str, title: str) -> Scorer:
    """A CHOICE ruleset's calculator (both score sheets alike; each has its own route, as the
    contract states one body per route)."""
    return Scorer(
        MarksRequest,
        ChoiceScore,
        score_sheet,
        operation_id,
        f"Score a {title} sheet from its marks",
    )
