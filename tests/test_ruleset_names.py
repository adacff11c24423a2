"""Outside its package (``referee/rulesets/<ruleset>/``) and the registry that registers it
(``referee/games/__init__.py``), no file of the referee names a ruleset: generic code iterates
the registry (issue 35). A name counts where it is used as one: quoted, joined by a hyphen, or as
a module's or a file's ("chopta", 'chopta-turn', rulesets.chopta), not the English word."""

from __future__ import annotations

import re
from pathlib import Path

import referee
from referee.games import RULESETS

ROOT = Path(referee.__file__).parent
ALLOWED = {ROOT / "games" / "__init__.py"}


def _pattern() -> re.Pattern[str]:
    forms = {form for id_ in RULESETS for form in (id_, id_.replace("-", "_"))}
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
    for line in ('x == "chopta"', "from ..rulesets.choice import X", "el('p', 'chopta-turn')"):
        assert pattern.search(line), line
    for line in ("a choice of moves", "choices=list(RULESETS)", "random.choice(seats)"):
        assert not pattern.search(line), line
