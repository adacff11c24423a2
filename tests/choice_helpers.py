"""Helpers for the CHOICE rules tests."""

from __future__ import annotations


def force_rolls(state, *rolls):
    """Replace the current batch's rolls (dice come from the seed; tests pick their own)."""
    state.rolls = [tuple(sorted(r)) for r in rolls]
