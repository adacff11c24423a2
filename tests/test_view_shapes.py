"""Each ruleset's declared view shapes (its ``views``, in its package) are what its engine
shows: every seat view of games played by its house bots converts to its ``seat_view`` Struct,
and names no field the Struct does not declare. Run over the registry, so a plug-in that
declares views is held to them too (``tests/service/test_typed_views.py`` checks the public
views, records and replays over HTTP against the contract built from them)."""

from __future__ import annotations

import msgspec
import pytest

from referee.bots import bot_names, get_bot
from referee.games import RULESETS
from referee.web.views import VIEWS


def _fields(struct: type) -> set[str]:
    config = struct.__struct_config__  # type: ignore[attr-defined]
    return {f.encode_name for f in msgspec.structs.fields(struct)} | {config.tag_field}


@pytest.mark.parametrize("ruleset_id", sorted(VIEWS))
def test_every_seat_view_of_a_played_game_is_its_declared_shape(ruleset_id):
    ruleset, shapes = RULESETS[ruleset_id], VIEWS[ruleset_id]
    seats = max(2, ruleset.min_seats)
    bots = [get_bot(ruleset_id, bot_names(ruleset_id)[0], seat) for seat in range(seats)]
    declared = _fields(shapes.seat_view)
    state = ruleset.create({}, seats, b"view-shapes".ljust(32, b"."))
    checked = 0
    while not ruleset.finished(state) and checked < 400:
        for seat in range(seats):
            view = msgspec.json.decode(msgspec.json.encode(ruleset.view(state, seat)))
            assert view["ruleset"] == ruleset_id
            assert set(view) <= declared, set(view) - declared
            msgspec.convert(view, shapes.seat_view)
            checked += 1
        seat = ruleset.to_decide(state)[0]
        legal = msgspec.to_builtins(ruleset.legal_moves(state, seat))
        move = bots[seat]({"legal_moves": legal, "view": ruleset.view(state, seat)})
        ruleset.decide(state, seat, [msgspec.convert(move, ruleset.Move)])
    assert checked > seats
