"""A finished game's replay in a compact form for the pages (and a live game's view as
patches too, ``LiveViews``): the first frame's view whole,
then per step only what changed (a patch), instead of a whole public view per step.

A 64-seat CHOICE game's replay is tens of megabytes as ``getReplay`` gives it (every frame
repeats 64 sheets); as patches it is a small fraction of that, and compressed on the wire
smaller still. The patches are computed here from the very frames ``getReplay`` serves
(``core.replay``), so the page shows exactly what the replay shows.

A patch is a list of operations ``[path, value]`` (set the value at ``path``, a list of keys
and indices) or ``[path]`` (delete what is at ``path``). A list whose length changed is set
whole. ``static/spectator.js`` applies them (``applyPatch``), sharing what did not change.
Besides the steps, the answer carries what a finished game's page shows beside the board:
the totals and ranking of the record, the tournament the game belongs to, and the chain
and seed a reader passes to ``referee verify``.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import msgspec

__all__ = ["LiveViews", "Patches", "compact_steps", "diff", "replay_deltas"]


def diff(before: Any, after: Any, path: list[Any] | None = None) -> list[list[Any]]:
    """The operations that turn ``before`` into ``after`` (both plain JSON values)."""
    path = path or []
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[list[Any]] = []
        for key, value in after.items():
            if key not in before:
                ops.append([[*path, key], value])
            else:
                ops += diff(before[key], value, [*path, key])
        ops += [[[*path, key]] for key in before if key not in after]
        return ops
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        ops = []
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            ops += diff(old, new, [*path, index])
        return ops
    return [[path, after]]


_RAW_OBJECT = dict[str, msgspec.Raw]
_RAW_LIST = list[msgspec.Raw]


class Patches:
    """``diff`` of each view from the one before, as a replay walks them, without making
    each view whole as objects: each view is encoded once, and only the parts whose JSON
    changed (a top-level field, or one item of a top-level list, e.g. one seat of 64) are
    decoded and compared, so that a step costs what it changed, not the board's size. The
    patches are the very ones ``diff`` gives for the whole views."""

    def __init__(self) -> None:
        self._encoder = msgspec.json.Encoder()
        self._before: dict[str, msgspec.Raw] = {}
        self._lists: dict[str, list[msgspec.Raw]] = {}

    def first(self, view: Any) -> Any:
        """The first view, whole (as plain JSON values)."""
        encoded = self._encoder.encode(view)
        self._keep(encoded)
        return msgspec.json.decode(encoded)

    def next(self, view: Any) -> list[list[Any]]:
        """The patch from the view before to ``view``."""
        before, lists_before = self._before, self._lists
        after = self._keep(self._encoder.encode(view))
        lists = self._lists
        ops: list[list[Any]] = []
        for key, raw in after.items():
            old = before.get(key)
            if old is None:
                ops.append([[key], msgspec.json.decode(raw)])
            elif bytes(old) == bytes(raw):
                continue
            elif key in lists and len(lists[key]) == len(lists_before.get(key, ())):
                for index, (was, now) in enumerate(zip(lists_before[key], lists[key], strict=True)):
                    if bytes(was) != bytes(now):
                        ops += diff(_plain(was), _plain(now), [key, index])
            else:
                ops += diff(_plain(old), _plain(raw), [key])
        ops += [[[key]] for key in before if key not in after]
        return ops

    def _keep(self, encoded: bytes) -> dict[str, msgspec.Raw]:
        """The view's top-level fields, and the items of those that are lists, as JSON."""
        after = msgspec.json.decode(encoded, type=_RAW_OBJECT)
        self._lists = {
            key: msgspec.json.decode(raw, type=_RAW_LIST)
            for key, raw in after.items()
            if bytes(raw).startswith(b"[")
        }
        self._before = after
        return after


def _plain(raw: msgspec.Raw) -> Any:
    return msgspec.json.decode(raw)


def compact_steps(
    walk: Any, game: Any, decisions: list[bytes]
) -> tuple[Any, list[dict[str, Any]], Any]:
    """The first view, each step's decision and patch, and ``walk``'s report: a replay
    (``core.replay.walk``) made compact as it goes."""
    patches = Patches()
    start: list[Any] = []
    steps: list[dict[str, Any]] = []

    def seen(view: Any, decision: Any) -> None:
        if not start:
            start.append(patches.first(view))
            return
        steps.append({"decision": msgspec.to_builtins(decision), "patch": patches.next(view)})

    report = walk(game, decisions, seen)
    return (start[0] if start else None), steps, report


def replay_deltas(
    compact: dict[str, Any], record: dict[str, Any], tournament_id: str | None
) -> dict[str, Any]:
    """A replay as a first view and patches (``id``, ``ruleset``, and ``compact_steps``'s
    ``start``, ``steps``, ``verified``, ``problems``), with the record's outcome."""
    return {
        "id": compact["id"],
        "ruleset": compact["ruleset"],
        "verified": compact["verified"],
        "problems": compact["problems"],
        "tournament_id": tournament_id,
        "seats": record["seats"],
        "totals": record["totals"],
        "ranking": record["ranking"],
        "commitment": record["commitment"],
        "seed": record.get("seed"),
        "chain": record.get("chain"),
        "start": compact["start"],
        "steps": compact["steps"],
    }


class LiveViews:
    """A live game's public view as the pages follow it: each answer names its version (a
    hash of the view), and a page that names the version it holds gets only what changed
    since. The last few versions of the last games asked about are kept per process, encoded
    (a 64-seat view is some 40 kB so, several times that as objects); a version not kept
    (another replica's, or an old one) gets the whole view."""

    def __init__(self, games: int = 128, versions: int = 3) -> None:
        self.games, self.versions = games, versions
        self._kept: OrderedDict[str, OrderedDict[str, bytes]] = OrderedDict()
        self._encoder = msgspec.json.Encoder()

    def answer(self, game_id: str, view: Any, since: str | None) -> dict[str, Any]:
        """``{"version", "view"}`` or, from a version kept, ``{"version", "since", "patch"}``."""
        encoded = self._encoder.encode(view)  # (a view may hold parts encoded already)
        version = hashlib.blake2b(encoded, digest_size=12).hexdigest()
        kept = self._kept.setdefault(game_id, OrderedDict())
        self._kept.move_to_end(game_id)
        while len(self._kept) > self.games:
            self._kept.popitem(last=False)
        before = kept.get(since) if since else None
        kept[version] = encoded
        kept.move_to_end(version)
        while len(kept) > self.versions:
            kept.popitem(last=False)
        now = msgspec.json.decode(encoded)
        if before is None:
            return {"version": version, "view": now}
        return {"version": version, "since": since, "patch": diff(msgspec.json.decode(before), now)}
