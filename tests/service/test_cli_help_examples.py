"""The example ``referee tournament --help`` gives works as given: its ``--options`` example
runs a (small) local tournament with the default ruleset (the help names no other: the command
line knows the rulesets from the registry, and GET /v1/rulesets lists each one's options)."""

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


def test_the_options_example_of_referee_tournament_plays(tmp_path):
    examples = re.findall(r"'(\{[^']*\})'", _options_help())
    assert len(examples) == 1, _options_help()
    result = subprocess.run(
        [sys.executable, "-m", "referee.cli", "tournament", *_SMALL, examples[0]],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, (examples, result.stdout[-2000:], result.stderr[-2000:])
    standings = json.loads(result.stdout.splitlines()[-1])["standings"]
    assert len(standings) == 2 and sum(s["games"] for s in standings) == 2, standings
