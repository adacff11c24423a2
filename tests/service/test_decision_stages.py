"""`benchmarks/decision_stages.py` (the per-stage profile in benchmarks/results) runs against
the code as it is: every stage it times is still where it looks for it, and each one is
reached by a game's requests (the times themselves are not asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import referee_leftovers

ROOT = Path(__file__).parents[2]


def test_every_stage_is_timed(short_tmp):
    result = subprocess.run(
        [sys.executable, "benchmarks/decision_stages.py", "--games", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(short_tmp)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["decisions"] > 0
    assert figures["turns_per_decision"] >= 1  # the bench's loop asks its turn, then moves
    timed = figures["stages_us_per_decision"]
    missed = [stage for stage, micros in timed.items() if not micros > 0]
    assert missed == [], f"stages never reached: {missed}"
    assert referee_leftovers(short_tmp) == []
