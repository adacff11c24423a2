"""``choice``: Sid Sackson's CHOICE (engine, house bots, rules: RULES.md here)."""

from __future__ import annotations

from pathlib import Path

from .bots import greedy_bot, random_bot, strong_bot
from .engine import ChoiceRuleset
from .report import SheetReport
from .shapes import scorer

__all__ = ["ChoiceRuleset"]

ChoiceRuleset.bots = {"random": random_bot, "greedy": greedy_bot, "strong": strong_bot}
ChoiceRuleset.scorer = scorer("CHOICE", "What a CHOICE sheet with these marks scores, row by row.")
ChoiceRuleset.report = SheetReport(specials=False)
ChoiceRuleset.page_script = Path(__file__).parent / "page.js"
ChoiceRuleset.rules_help = Path(__file__).parent / "help.md"
