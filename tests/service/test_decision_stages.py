"""`benchmarks/decision_stages.py` (the per-stage profile in benchmarks/results) runs against
the code as it is: every stage it times is still where it looks for it, and each one is
reached by a game's requests (the times themselves are not asserted)."""

from __future__ import annotations

from helpers import referee_leftovers, run_benchmark


def test_every_stage_is_timed(short_tmp):
    figures = run_benchmark("decision_stages.py", ["--games", "1", "--json"], short_tmp)
    assert figures["decisions"] > 0
    assert figures["turns_per_decision"] >= 1  # the bench's loop asks its turn, then moves
    timed = figures["stages_us_per_decision"]
    missed = [stage for stage, micros in timed.items() if not micros > 0]
    assert missed == [], f"stages never reached: {missed}"
    assert referee_leftovers(short_tmp) == []
