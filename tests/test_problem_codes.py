"""Every problem code the referee can answer with is in one table (``referee/web/codes.py``)
with its meaning: the contract's enum on ``Problem.code`` and the README's list come from it.
The source is read as a tree, so a code added anywhere without a meaning fails here."""

from __future__ import annotations

import ast
from pathlib import Path

from referee.web import problems
from referee.web.codes import PROBLEM_CODES
from referee.web.models import Problem

ROOT = Path(__file__).parents[1]
RAISERS = {"RuleViolation", "InvalidOption", "GameError", "Refusal"}


def _raised() -> set[str]:
    """The codes the source names where it refuses: the first argument of every refusal it
    builds (``f"{kind}-not-found"`` stands for a game's and a tournament's), the framework's
    codes by status, and the rules' codes for a body's fields."""
    codes = {"game-not-found", "tournament-not-found"}
    for path in (ROOT / "referee").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name not in RAISERS:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant):
                codes.add(first.value)
            else:
                assert ast.unparse(first) in {"code", "error.code", "f'{kind}-not-found'"}, (
                    f"{path}: a refusal whose code is not written out: {ast.unparse(first)}"
                )
    codes |= set(problems.STATUS) | set(problems.CODES.values())
    codes |= {problems._rule_code(f) for f in ("ruleset", "seats", "options", "options.x")}
    return codes


def test_every_code_raised_has_a_meaning_and_every_meaning_is_raised():
    raised = _raised()
    assert raised - set(PROBLEM_CODES) == set(), "add these to referee/web/codes.py"
    assert set(PROBLEM_CODES) - raised == set(), "no longer raised: remove from the table"


def test_the_contract_enumerates_the_codes():
    import msgspec

    schema = msgspec.json.schema(Problem)["$defs"]["Problem"]["properties"]["code"]
    assert sorted(schema["enum"]) == sorted(PROBLEM_CODES)


def readme_table() -> str:
    """The README's table of problem codes, as the code states it."""
    rows = ["| code | status | meaning |", "|---|---|---|"]
    for code, meaning in sorted(PROBLEM_CODES.items(), key=lambda i: problems.status_of(i[0])):
        rows.append(f"| `{code}` | {problems.status_of(code)} | {meaning} |")
    return "\n".join(rows)


def test_the_readme_lists_every_code_with_its_status_and_meaning():
    table = readme_table()
    assert table in (ROOT / "README.md").read_text(), (
        "the README's table of problem codes differs from referee/web/codes.py; it is:\n" + table
    )
