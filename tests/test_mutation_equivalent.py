"""Each mutant `benchmarks/mutation.py` counts as equivalent still names a line of its module
as it is now: an entry left behind by a rewrite would let that mutant count as a survivor,
and lower the mutation score with no hint why. Pure: reads the sources as text."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from mutation_equivalent import EQUIVALENT  # noqa: E402  (benchmarks/ is not a package)


def test_every_equivalent_mutant_names_a_line_of_its_module():
    stale = []
    for module, before, after in EQUIVALENT:
        lines = {line.strip() for line in (ROOT / module).read_text().splitlines()}
        if before not in lines:
            stale.append((module, before))
        assert after != before, (module, before)
    assert stale == [], f"equivalent mutants whose line is gone: {stale}"
