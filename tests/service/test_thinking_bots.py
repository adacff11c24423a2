"""`benchmarks/thinking_bots.py` (the figures docs/CAPACITY.md plans bots that think with) runs
against the code as it is, and reports what a decision costs while the bots play: the referee's
CPU, Redis's and the commands sent, each for the decisions made (the figures themselves are
not asserted beyond being measured)."""

from __future__ import annotations

from helpers import referee_leftovers, run_benchmark


def test_bots_that_think_report_what_a_decision_costs(short_tmp):
    think = ["--think", "0.05", "0.2", "--seconds", "3"]
    args = ["--waiting", "20", "--wake-rate", "200", "--games", "10", *think]
    figures = run_benchmark("thinking_bots.py", args, short_tmp)
    assert figures["errors"] == 0 and figures["woken_to_their_turn"] == 20
    assert figures["thinking_errors"] == 0 and figures["thinking_decisions_per_s"] > 0
    assert figures["thinking_referee_cpu_us_per_decision"] > 0
    assert figures["thinking_redis_cpu_us_per_decision"] > 0
    # a commit at least, and fewer than a handful: the figure counts per decision
    assert 1 <= figures["thinking_redis_round_trips_per_decision"] < 5
    assert referee_leftovers(short_tmp) == []
