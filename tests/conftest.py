"""Shared helpers for the rules tests."""

from __future__ import annotations

import pytest

from referee.games import get_ruleset


@pytest.fixture
def choice():
    return get_ruleset("choice")


@pytest.fixture
def specials():
    return get_ruleset("choice-specials")


@pytest.fixture
def chopta():
    return get_ruleset("chopta")


def force_rolls(state, *rolls):
    """Replace the current batch's rolls (dice come from the seed; tests pick their own)."""
    state.rolls = [tuple(sorted(r)) for r in rolls]
