"""Each ruleset's views (its ``views``, in its package) are what its engine returns: every seat
view of games played by its house bots is an instance of its ``seat_view`` Struct, and its JSON
decodes strictly back into that Struct (bounds and patterns checked, which building a Struct in
Python does not). Run over the registry, so a plug-in that declares views is held to them too
(``tests/service/test_typed_views.py`` checks the public views, records and replays over HTTP
against the contract built from them)."""

from __future__ import annotations

import msgspec
import pytest

from referee.bots import get_bot
from referee.core import LoadedGame, new_game
from referee.core.documents import next_version
from referee.games import RULESETS, verify
from referee.games._common import plain
from referee.web.views import VIEWS


@pytest.mark.parametrize("ruleset_id", sorted(VIEWS))
def test_every_seat_view_of_a_played_game_is_its_declared_struct(ruleset_id):
    ruleset, shapes = RULESETS[ruleset_id], VIEWS[ruleset_id]
    seats = max(2, ruleset.min_seats)
    bots = [get_bot(ruleset_id, sorted(ruleset.bots)[0], seat) for seat in range(seats)]
    state = ruleset.create({}, seats, b"view-shapes".ljust(32, b"."))
    checked = 0
    while not ruleset.finished(state) and checked < 400:
        for seat in range(seats):
            view = ruleset.view(state, seat)
            assert type(view) is shapes.seat_view
            shown = msgspec.json.encode(view)
            assert msgspec.json.encode(msgspec.json.decode(shown, type=shapes.seat_view)) == shown
            assert msgspec.json.decode(shown)["ruleset"] == ruleset_id
            checked += 1
        seat = ruleset.to_decide(state)[0]
        legal = msgspec.to_builtins(ruleset.legal_moves(state, seat))
        move = bots[seat]({"legal_moves": legal, "view": plain(ruleset.view(state, seat))})
        ruleset.decide(state, seat, [msgspec.convert(move, ruleset.Move)])
    assert checked > seats
    over = ruleset.dice_log(state) + ruleset.view(state).seats
    assert over and all(isinstance(part, msgspec.Struct) for part in over)


@pytest.mark.parametrize("ruleset_id", sorted(VIEWS))
def test_a_finished_games_record_is_its_declared_struct_and_verifies(ruleset_id):
    """A whole game played in the core (each seat its first legal move) gives a record of its
    ``record`` Struct, which decodes strictly back to the same values, holds every seat's
    final sheet or area (``final``: the board's seats once it is over) and the dice, and
    verifies."""
    ruleset, shapes = RULESETS[ruleset_id], VIEWS[ruleset_id]
    seed, now = bytes(range(32)), 1_000_000.0
    game, _ = new_game(ruleset_id, {}, [{"name": "a"}, {"name": "b"}], 0, seed, now)
    decisions: list[bytes] = []
    for _ in range(2_000):
        if game.doc.status == "finished":
            break
        seat = ruleset.to_decide(game.state)[0]
        move = ruleset.legal_moves(game.state, seat)[0]
        game.decide(seat, game.current_seq(seat), [move], now)
        decisions += game.change.decisions
        game = LoadedGame.read(next_version(game.version), game.encoded(), "1-0", now)
    assert game.doc.status == "finished"
    record = game.record(decisions)
    assert type(record) is shapes.record
    sent = msgspec.json.encode(record)
    told = msgspec.json.decode(sent)  # (its decisions are sent as stored: compared as values)
    strict = msgspec.json.decode(sent, type=shapes.record)
    assert msgspec.json.decode(msgspec.json.encode(strict)) == told
    board = msgspec.json.decode(msgspec.json.encode(ruleset.view(game.state).seats))
    assert told["final"] == board and len(board) == 2
    assert told["dice"] == msgspec.json.decode(msgspec.json.encode(ruleset.dice_log(game.state)))
    assert told["dice"]
    assert len(told["decisions"]) == len(decisions)
    report = verify(sent)
    assert report.ok, report.problems
