"""Shared fixtures of the rules tests, and how the tests share the workers (pytest-xdist)."""

from __future__ import annotations

import contextlib
import fcntl
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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Under pytest-xdist (``--dist loadgroup``), the tests that use a module-scoped fixture
    of their module run on one worker, which sets the fixture up once (Schemathesis's run
    over the contract takes minutes; a cluster, a referee of a module's own, seconds); a test
    with an ``xdist_group`` of its own keeps it. The tests marked ``alone`` come last, each
    on its own: when they start, the other workers finish the run's last (short) tests
    rather than, say, the Schemathesis run, which an ``alone`` test would wait for."""
    for item in items:
        if item.get_closest_marker("xdist_group") or item.get_closest_marker("alone"):
            continue
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs.values() if info is not None else ()
        if any(defs and defs[-1].scope == "module" for defs in definitions):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items.sort(key=lambda item: item.get_closest_marker("alone") is not None)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "alone: the test runs while no other test of the run does (the other pytest-xdist "
        "workers wait): it bounds a wall time that their load would stretch",
    )


@contextlib.contextmanager
def _turn(item):
    """Under pytest-xdist, a test marked ``alone`` runs while no other worker runs a test,
    and every other test beside the others: two run-wide locks, a gate and a room. A test
    passes the gate (shared) into the room (shared); an ``alone`` test shuts the gate
    (exclusive), so that no test comes in, and waits for the room to empty (exclusive)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    # each worker's base temporary directory (the tmp_path_factory fixture's) is in the
    # run's own: the locks' place
    run = item.config._tmp_path_factory.getbasetemp().parent
    alone = item.get_closest_marker("alone") is not None
    with (run / "tests.gate").open("a") as gate, (run / "tests.room").open("a") as room:
        fcntl.flock(gate, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        fcntl.flock(room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield  # closing the files lets both locks go


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Every test's setup (its module's and session's fixtures too), call and teardown in its
    ``_turn``."""
    with _turn(item):
        return (yield)


_STARTED = time.time()


def pytest_terminal_summary(terminalreporter):
    """Where this run's screenshots of the spectator pages are (test_pages_browser.py)."""
    folder = Path(os.environ.get("REFEREE_SCREENSHOTS", "test-output/screenshots"))
    shots = sorted(p for p in folder.glob("*.png") if p.stat().st_mtime >= _STARTED)
    if shots:
        terminalreporter.write_sep("-", f"screenshots of the spectator pages, in {folder}/")
        for shot in shots:
            terminalreporter.write_line(str(shot))
