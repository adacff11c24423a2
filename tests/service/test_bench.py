"""`referee bench` runs end to end and reports every figure (speed is not asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_bench_reports_every_figure():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "bench",
            "--seconds",
            "3",
            "--bots",
            "4",
            "--live-games",
            "5",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=Path(__file__).parents[2],
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    for name in (
        "ceiling_rps",
        "ceiling_rps_before",
        "ceiling_rps_after",
        "decisions_per_s",
        "ratio",
        "p50_ms",
        "p99_ms",
        "redis_round_trips_per_decision",
        "redis_calls_per_decision",
        "referee_cores_ceiling",
        "referee_cores_games",
        "referee_cpu_us_per_healthz",
        "referee_cpu_us_per_game_request",
        "cpu_ratio",
        "redis_bytes_per_game",
    ):
        assert isinstance(figures[name], (int, float)), name
    assert figures["decisions_per_s"] > 0 and figures["errors"] == 0
    # the ceiling is the mean of its two halves, taken before and after the games
    halves = sorted((figures["ceiling_rps_before"], figures["ceiling_rps_after"]))
    assert halves[0] * 0.99 <= figures["ceiling_rps"] <= halves[1] * 1.01
    # a decision takes a commit at least; the commit script's own calls come on top
    assert 1 <= figures["redis_round_trips_per_decision"] < figures["redis_calls_per_decision"]
    # the referee worked in both phases, and a game request costs it more than /healthz
    assert figures["referee_cores_ceiling"] > 0 and figures["referee_cores_games"] > 0
    assert 0 < figures["cpu_ratio"] < 1
    assert figures["redis_bytes_per_game"] > 1000
    assert figures["redis_bytes_per_game_max"] >= figures["redis_bytes_per_game"]
    assert 0 < figures["redis_bytes_per_game_retained"] < figures["redis_bytes_per_game"]
