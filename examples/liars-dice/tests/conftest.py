"""The rules' tests, run from the referee's checkout (its pytest ``testpaths`` names this
folder) or from this distribution's own: the package is imported from beside this folder when
it is not installed, and a test that needs the referee's registry (``verify`` finds a ruleset
there by id) gets it registered for that test only."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("referee_liars_dice") is None:  # not installed: the source beside
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee_liars_dice import LiarsDiceRuleset

from referee.games import ORIGINS, RULESETS, register


@pytest.fixture
def liars() -> LiarsDiceRuleset:
    return LiarsDiceRuleset()


@pytest.fixture
def registered(liars):
    """The ruleset in the referee's registry, as an installed plug-in's entry point puts it
    there (``referee.plugins``); afterwards the registry as it was."""
    rulesets, origins = dict(RULESETS), dict(ORIGINS)
    register(liars, "referee-liars-dice", "test")
    yield liars
    RULESETS.clear()
    RULESETS.update(rulesets)
    ORIGINS.clear()
    ORIGINS.update(origins)
