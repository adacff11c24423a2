"""``chopta``: CHOPTA (engine, house bots, rules: RULES.md here)."""

from __future__ import annotations

from pathlib import Path

from .bots import greedy_bot, random_bot, strong_bot
from .engine import ChoptaRuleset
from .report import AreaReport
from .shapes import scorer

__all__ = ["ChoptaRuleset"]

ChoptaRuleset.bots = {"random": random_bot, "greedy": greedy_bot, "strong": strong_bot}
ChoptaRuleset.scorer = scorer
ChoptaRuleset.report = AreaReport()
ChoptaRuleset.page_script = Path(__file__).parent / "page.js"
ChoptaRuleset.rules_help = Path(__file__).parent / "help.md"
