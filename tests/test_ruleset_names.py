"""Outside its package (``referee/rulesets/<ruleset>/``) and the registry that registers it
(``referee/games/__init__.py``), no file of the referee names a ruleset: generic code iterates
the registry (issue 35). A name counts where it is used as one: quoted, joined by a hyphen, or as
a module's or a file's ("chopta", 'chopta-turn', rulesets.chopta), not the English word. The
names are the registry's and the example plug-ins' (examples/*/pyproject.toml: Liar's dice)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import referee
from referee.games import RULESETS
from referee.plugins import GROUP

ROOT = Path(referee.__file__).parent
ALLOWED = {ROOT / "games" / "__init__.py"}
EXAMPLES = ROOT.parent / "examples"


def _plugin_ids() -> set[str]:
    """The rulesets of the example distributions (Liar's dice): their entry points' names."""
    found: set[str] = set()
    for project in EXAMPLES.glob("*/pyproject.toml"):
        points = tomllib.loads(project.read_text())["project"].get("entry-points", {})
        found.update(points.get(GROUP, {}))
    return found


def _pattern() -> re.Pattern[str]:
    ids = {*RULESETS, *_plugin_ids()}
    forms = {form for id_ in ids for form in (id_, id_.replace("-", "_"))}
    names = "|".join(sorted(map(re.escape, forms), key=len, reverse=True))
    return re.compile(
        rf"(?<![\w-])(?:{names})(?=[\"'`-])|(?<=[\"'`])(?:{names})(?!\w)|rulesets[./](?:{names})"
    )


def _hits() -> dict[str, list[str]]:
    pattern = _pattern()
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in {".py", ".js", ".html", ".css"} or path in ALLOWED:
            continue
        if (ROOT / "rulesets") in path.parents:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                found.setdefault(str(path.relative_to(ROOT)), []).append(f"{number}: {line}")
    return found


def test_no_file_outside_the_packages_and_the_registry_names_a_ruleset():
    hits = _hits()
    assert not hits, hits


def test_the_search_sees_a_name_used_as_one_and_not_the_word():
    pattern = _pattern()
    assert "liars-dice" in _plugin_ids()
    lines = ('x == "chopta"', "from ..rulesets.choice import X", "el('p', 'chopta-turn')")
    for line in (*lines, 'ruleset == "liars-dice"'):
        assert pattern.search(line), line
    for line in ("a choice of moves", "choices=list(RULESETS)", "random.choice(seats)"):
        assert not pattern.search(line), line
