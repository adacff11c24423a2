"""A game step by step, replayed from its record with its seed on the referee's side: the
frames of a finished game's replay, and the turn report of the rounds that are over.

Every frame is the public view the game had at that step (``GameViews.public_view_of``), so
neither shows a spectator more than the public view showed then: a pool stays a count, an
undecided roll's decision stays ``decided``. A running game's report holds only the rounds
that are over, and of each only what the view showed once it was over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from ..games import Decision, Record, verify
from .refusals import Refusal
from .views import GameViews

__all__ = ["check_over", "postal_report", "replay", "walk"]

_copy_encoder = msgspec.json.Encoder()


def walk(
    game: GameViews, decisions: list[bytes], seen: Callable[[Any, Decision | None], None]
) -> Any:
    """Replay the game from its record, calling ``seen(view, decision)`` with the public view
    after every decision (the first: before any; the view may share the engine's state,
    which changes in place: use it at once) and the decision that led to it; ``verify``'s
    report of the replay."""
    doc = game.doc
    # a running game's record holds the decisions disclosed, with the chain as far as they
    # go: the hidden steps of a round under way are not replayed (the time a report took
    # would count them)
    record = msgspec.json.decode(_copy_encoder.encode(game.record(decisions)), type=Record)
    if doc.status != "finished":  # the seed stays here: only frames of rounds over are shown
        record.seed = doc.seed.hex()

    def step(ruleset: Any, state: Any, decision: Decision | None) -> None:
        status = "finished" if ruleset.finished(state) else "running"
        seen(game.public_view_of(state, status), decision)

    return verify(record, step=step)


def _frames(game: GameViews, decisions: list[bytes]) -> tuple[list[dict[str, Any]], Any]:
    """The public view after every decision (the first: before any), each with the decision
    that led to it, and ``verify``'s report of the replay."""
    frames: list[dict[str, Any]] = []

    def seen(view: Any, decision: Decision | None) -> None:
        frames.append(
            {
                # the engine changes its state in place: each frame is a copy
                "view": msgspec.json.decode(_copy_encoder.encode(view)),
                "decision": msgspec.to_builtins(decision) if decision is not None else None,
            }
        )

    return frames, walk(game, decisions, seen)


def check_over(game: GameViews) -> None:
    """Refused unless the game is over: a replay shows its seed."""
    if game.doc.status != "finished":
        raise Refusal(
            "game-not-over",
            "a game is replayed once it is over: until then its record holds only what is "
            "disclosed (getRecord) and its seed stays secret",
        )


def replay(game: GameViews, decisions: list[bytes]) -> dict[str, Any]:
    """A finished game's every step, and whether its record replays to exactly what the
    referee published (``verified``, with ``problems`` when not)."""
    doc = game.doc
    check_over(game)
    frames, report = _frames(game, decisions)
    return {
        "id": doc.id,
        "ruleset": doc.ruleset,
        "verified": report.ok,
        "problems": report.problems,
        "frames": frames,
    }


def postal_report(game: GameViews, decisions: list[bytes]) -> dict[str, Any]:
    """The turn report of every round that is over: what was dealt as it began (the ruleset's
    ``round_dealt`` fields of its view), then every seat as it ended. A round is the span in
    which the view's ``round_field`` stays the same (a CHOICE game's postal rounds, its
    ``batch``; a CHOPTA game's ``round``); a ruleset whose view has none plays the whole
    game as one round, reported once the game is over (numbered 0, as a first round is)."""
    doc = game.doc
    key = getattr(game.ruleset, "round_field", "round")
    dealt = getattr(game.ruleset, "round_dealt", ())
    rounds: list[dict[str, Any]] = []
    if game.state is not None:
        frames, _ = _frames(game, decisions)
        start = frames[0]["view"]
        if key not in start:
            end = frames[-1]["view"]
            if end["status"] == "finished":
                rounds.append(_round_over(key, dealt, {**start, key: 0}, end))
        for frame in frames[1:] if key in start else ():
            view = frame["view"]
            if view[key] != start[key] or view["status"] == "finished":
                rounds.append(_round_over(key, dealt, start, view))
                start = view
    return {
        "id": doc.id,
        "ruleset": doc.ruleset,
        "status": doc.status,
        "seats": [s.name for s in doc.seats],
        "rounds": rounds,
    }


def _round_over(
    key: str, dealt: tuple[str, ...], start: dict[str, Any], end: dict[str, Any]
) -> dict[str, Any]:
    """One round of the report: what was dealt at its start and every seat at its end."""
    seats = [{k: v for k, v in s.items() if k not in ("decided", "deadline")} for s in end["seats"]]
    entry: dict[str, Any] = {
        key: start[key],
        "seats": seats,
        "finished": end["status"] == "finished",
    }
    entry.update((name, start[name]) for name in dealt)
    return entry
