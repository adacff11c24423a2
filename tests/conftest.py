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
