"""The examples ``referee tournament --help`` gives work as given: each ``--options`` example
runs a (small) local tournament with the ruleset its help names, the default one first."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

from referee.cli import build_parser

#: two random bots, one game, the standings as JSON; the example comes last
_SMALL = ("--bots", "random", "random", "--games-per-pairing", "1", "--json", "--options")


def _options_help() -> str:
    parser = build_parser()
    (group,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    (action,) = [a for a in group.choices["tournament"]._actions if a.dest == "options"]
    return action.help


def test_each_options_example_of_referee_tournament_plays(tmp_path):
    examples = re.findall(r"'(\{[^']*\})'", _options_help())
    assert len(examples) == 2, _options_help()
    # the first goes with the default ruleset, the second with the one its help names
    for rulesets, example in zip(([], ["--ruleset", "chopta"]), examples, strict=True):
        result = subprocess.run(
            [sys.executable, "-m", "referee.cli", "tournament", *rulesets, *_SMALL, example],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert result.returncode == 0, (example, result.stdout[-2000:], result.stderr[-2000:])
        standings = json.loads(result.stdout.splitlines()[-1])["standings"]
        assert len(standings) == 2 and sum(s["games"] for s in standings) == 2, standings
