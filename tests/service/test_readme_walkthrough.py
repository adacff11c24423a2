"""The README's walkthrough, its shell blocks word for word, plays a whole game against a
running referee and ends with `referee verify` saying ok (it needs curl and jq; .ci/run
installs jq)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).parents[2] / "README.md"


@pytest.mark.skipif(
    shutil.which("jq") is None or shutil.which("curl") is None, reason="needs curl and jq"
)
def test_the_readme_walkthrough_plays_a_game_to_a_verified_record(server, tmp_path):
    text = README.read_text()
    start = text.index("## A whole CHOICE game, by hand")
    blocks = re.findall(r"```sh\n(.*?)```", text[start:], re.S)[:2]
    script = "\n".join(blocks)
    assert "referee verify RECORD.json" in script
    script = script.replace("URL=http://127.0.0.1:8000", f"URL={server.url}")
    # the event stream of a finished game ends by itself; referee is this checkout's
    script = script.replace("referee verify", f"{sys.executable} -m referee.cli verify")
    result = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert '"status": "finished"' in result.stdout
    assert result.stdout.rstrip().endswith("figures match")
