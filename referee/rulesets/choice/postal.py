"""CHOICE's postal rounds (RULES.md "CHOICE", option ``schedule``): each deals a batch of
rolls that every active seat decides in secret, and once all have, every decision is revealed
together and the next batch is rolled."""

from __future__ import annotations

from typing import Any

from .rounds import roll_dice
from .sheet import ChoiceState

__all__ = ["batch_size", "reveal", "roll_batch"]


def batch_size(state: ChoiceState[Any]) -> int:
    """How many rolls the postal round ``state.batch`` deals (option ``schedule``)."""
    schedule = state.options.schedule
    return schedule[state.batch] if state.batch < len(schedule) else schedule[-1]


def roll_batch(state: ChoiceState[Any]) -> list[tuple[int, ...]]:
    """The rolls of the postal round ``state.batch``, each one's dice sorted."""
    first, key = state.first_roll, state.key
    size = batch_size(state)
    if size == 1:  # the common schedule
        return [tuple(sorted(roll_dice(key, first)))]
    return [tuple(sorted(roll_dice(key, n))) for n in range(first, first + size)]


def reveal(state: ChoiceState[Any]) -> list[dict[str, Any]]:
    """Every active seat decided the batch: reveal all decisions, roll the next batch.

    The game's end is not an event here: the service announces it with the ranking.
    """
    sheets, pending = state.sheets, state.pending
    decisions: dict[str, list[Any]] = {}  # moves stay Structs: events are encoded as sent
    events: list[dict[str, Any]] = [
        {  # the rolls themselves were announced by the batch's "rolls" event
            "type": "rolls_decided",
            "batch": state.batch,
            "first_roll": state.first_roll,
            "decisions": decisions,
        }
    ]
    playing = False
    for seat, draft in enumerate(state.drafts):
        if draft is not None:
            decisions[str(seat)] = pending[seat]
            pending[seat] = []  # the list now belongs to the event
            if draft.done:
                events.append({"type": "seat_done", "seat": seat, "retired": draft.retired})
            sheets[seat] = draft
        playing = playing or not sheets[seat].done
    seats = len(sheets)
    state.revealed = list(state.seqs)
    state.first_roll += len(state.rolls)
    state.batch += 1
    state.drafts = [None] * seats
    state.progress = [0] * seats
    if not playing:
        state.finished = True
        state.rolls = []
        return events
    state.rolls = roll_batch(state)
    events.append(
        {
            "type": "rolls",
            "batch": state.batch,
            "first_roll": state.first_roll,
            "rolls": state.rolls,
        }
    )
    return events
