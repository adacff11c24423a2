"""``choice-specials``: CHOICE with special cards (engine; the house bots are CHOICE's, which
read the cards from the legal moves; rules: RULES.md here)."""

from __future__ import annotations

from pathlib import Path

from ..choice.bots import greedy_bot, random_bot, strong_bot
from ..choice.report import SheetReport
from ..choice.shapes import scorer
from .engine import ChoiceSpecialsRuleset

__all__ = ["ChoiceSpecialsRuleset"]

ChoiceSpecialsRuleset.bots = {"random": random_bot, "greedy": greedy_bot, "strong": strong_bot}
ChoiceSpecialsRuleset.scorer = scorer(
    "CHOICE-with-special-cards",
    "What a CHOICE-with-special-cards sheet with these marks scores.",
)
ChoiceSpecialsRuleset.report = SheetReport(specials=True)
ChoiceSpecialsRuleset.page_script = Path(__file__).parent / "page.js"
ChoiceSpecialsRuleset.rules_help = Path(__file__).parent / "help.md"
