"""Shared helpers for the rules tests."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from referee.games import get_ruleset

# a line per HTTP request drowns a failing test's own message in its captured output
logging.getLogger("httpx").setLevel(logging.WARNING)


@pytest.fixture
def choice():
    return get_ruleset("choice")


@pytest.fixture
def specials():
    return get_ruleset("choice-specials")


@pytest.fixture
def chopta():
    return get_ruleset("chopta")


@pytest.fixture
def short_tmp():
    """A temporary directory with a short path, for a test whose Valkey makes its Unix socket
    in it: the socket's path must fit in 108 bytes, which a path under ``tmp_path`` may not
    leave room for (pytest-xdist puts each worker's under ``popen-gwN/``)."""
    path = Path(tempfile.mkdtemp(prefix="rf-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


_STARTED = time.time()


def pytest_terminal_summary(terminalreporter):
    """Where this run's screenshots of the spectator pages are (test_pages_browser.py)."""
    folder = Path(os.environ.get("REFEREE_SCREENSHOTS", "test-output/screenshots"))
    shots = sorted(p for p in folder.glob("*.png") if p.stat().st_mtime >= _STARTED)
    if shots:
        terminalreporter.write_sep("-", f"screenshots of the spectator pages, in {folder}/")
        for shot in shots:
            terminalreporter.write_line(str(shot))
