"""``referee new-bot`` writes a starter that passes its own test (a game of every ruleset
against a house bot, on a local referee of its own), in each style and language it offers
here; the stdin starters are the examples of ``examples/bots/``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.cli import main
from referee.tools.new_bot import KINDS, STARTERS

ROOT = Path(__file__).parents[2]
NEEDS = {"node": "node", "go": "go", "shell": "jq"}


#: every starter whose bot no other test plays: the stdin starters other than Python's are the
#: examples, which tests/service/test_stdin_bots.py plays (each starter's own test starts a
#: referee of its own, which costs seconds)
PLAYED_HERE = [k for k in sorted(KINDS) if k[1] != "stdin" or k[0] == "python"]


@pytest.mark.parametrize(
    ("language", "style"), PLAYED_HERE, ids=[f"{a}-{b}" for a, b in PLAYED_HERE]
)
def test_a_starter_passes_its_own_test(language, style, tmp_path):
    tool = NEEDS.get(language)
    if tool is not None and shutil.which(tool) is None:
        pytest.skip(f"needs {tool}")
    folder = tmp_path / "my-bot"
    assert main(["new-bot", "--lang", language, "--style", style, str(folder)]) == 0
    assert (folder / "test_bot.py").exists() and (folder / "README.md").exists()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_bot.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout


def test_new_bot_refuses_a_folder_in_use_and_a_style_it_lacks(tmp_path, capsys):
    (tmp_path / "taken.txt").write_text("mine")
    assert main(["new-bot", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert main(["new-bot", "--lang", "go", "--style", "webhook", str(tmp_path / "x")]) == 2
    assert "no webhook starter in go" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("starter", "example"),
    [
        ("stdin.py", "python/bot.py"),
        ("stdin.js", "node/bot.js"),
        ("stdin.sh", "shell/bot.sh"),
        ("stdin.go", "go/main.go"),
        ("go.mod", "go/go.mod"),
    ],
)
def test_the_stdin_starters_are_the_examples(starter, example):
    assert (STARTERS / starter).read_bytes() == (ROOT / "examples" / "bots" / example).read_bytes()
