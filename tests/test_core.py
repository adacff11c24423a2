"""The core decides without Redis: a game's start, decisions, deadlines, turns, views and
record, and a tournament's rounds and view, all from plain values."""

from __future__ import annotations

import msgspec
import pytest

from referee.core import LoadedGame, Refusal, new_game, token_hash
from referee.core import views as views_module
from referee.core.documents import decode_doc, next_version, version_number
from referee.core.game import Change
from referee.core.pairing import GameResult, TournamentSpec, next_round
from referee.core.replay import postal_report, walk
from referee.core.tournament import (
    EntrantDoc,
    TableDoc,
    new_tournament,
    round_games,
    tournament_view,
)
from referee.games import verify
from referee.games.shapes import own_views, public_seat

SEED = bytes(range(32))
NOW = 1_000_000.0


def _game(seats: int = 2, deadline_s: float = 0, **options) -> tuple[LoadedGame, list]:
    names = [{"name": f"p{i}"} for i in range(seats)]
    return new_game("choice", options, names, deadline_s, SEED, NOW)


def _stored(game: LoadedGame) -> LoadedGame:
    """The game as a commit would store it and a read would load it."""
    return LoadedGame.read(next_version(game.version), game.encoded(), "1-0", NOW)


def test_a_game_with_every_seat_named_starts_and_tells_it():
    game, tokens = _game()
    assert game.doc.status == "running" and game.state is not None
    assert all(tokens) and [s.token_hash for s in game.doc.seats] == [token_hash(t) for t in tokens]
    told = [msgspec.json.decode(e)["type"] for e in game.change.events]
    assert told == ["game_created", "game_started"]


def test_an_open_seat_waits_until_claimed():
    game, tokens = new_game("choice", {}, [{"name": "a"}, {}], 0, SEED, NOW)
    assert game.doc.status == "waiting" and tokens[1] is None
    with pytest.raises(Refusal) as refused:
        game.current_seq(0)
    assert refused.value.code == "game-not-started"
    seat, token = game.claim_seat("b", None, NOW)
    assert seat == 1 and game.seat_of(token) == 1 and game.doc.status == "running"
    with pytest.raises(Refusal) as refused:
        game.claim_seat("c", None, NOW)
    assert refused.value.code == "no-open-seat"


@pytest.mark.parametrize(("token", "code"), [(None, "unauthorized"), ("x.y", "forbidden")])
def test_a_token_that_holds_no_seat_is_refused(token, code):
    game, _ = _game()
    with pytest.raises(Refusal) as refused:
        game.seat_of(token)
    assert refused.value.code == code


def test_a_bad_ruleset_or_seat_count_is_a_refusal_with_the_rules_code():
    with pytest.raises(Refusal) as refused:
        new_game("poker", {}, [{"name": "a"}], 0, SEED, NOW)
    assert refused.value.code == "unknown-ruleset" and refused.value.field == "ruleset"
    with pytest.raises(Refusal):
        new_game("chopta", {}, [{"name": "a"}] * 9, 0, SEED, NOW)


def test_a_decision_is_applied_recorded_and_answered():
    game, _ = _game()
    turn = game.turn(0)
    assert turn["status"] == "your_turn" and turn["seq"] == 0 and turn["deadline"] is None
    game = _stored(game)
    answer = game.decide(0, 0, [game.ruleset.normalize(turn["legal_moves"][0])], NOW)
    assert answer["accepted"] and answer["next_seq"] == 1 and answer["game_status"] == "running"
    assert len(game.change.decisions) == 1 and game.dirty
    assert game.turn(0)["status"] == "waiting"  # seat 1 still decides this roll


def test_a_broken_rule_is_refused_with_its_code_and_the_seq_to_decide():
    game, _ = _game()
    move = game.ruleset.legal_moves(game.state, 0)[0]
    moves = [msgspec.structs.replace(move, fifth=7)]
    with pytest.raises(Refusal) as refused:
        game.decide(0, 0, moves, NOW)
    assert refused.value.code == "dice-not-in-roll" and refused.value.extra == {"current_seq": 0}
    assert game.change.decisions == []


def test_a_passed_deadline_is_resolved_on_reading_as_a_timeout():
    game, _ = _game(deadline_s=5)
    assert [d.at for d in game.doc.deadlines] == [NOW + 5, NOW + 5]
    late = LoadedGame.read("1.x", game.encoded(), "1-0", NOW + 6)
    assert late.dirty and [msgspec.json.decode(d)["timeout"] for d in late.change.decisions] == [
        True,
        True,
    ]
    assert late.turn(0)["seq"] == 1 and late.turn(0)["deadline"] == NOW + 6 + 5
    early = LoadedGame.read("1.x", game.encoded(), "1-0", NOW + 4)
    assert not early.dirty


def test_a_retry_of_a_decided_seq_is_answered_from_the_record_and_nothing_else_is():
    game, _ = _game()
    legal = game.ruleset.legal_moves(game.state, 0)
    move, other = legal[0], legal[-1]
    assert move != other
    answer = game.decide(0, 0, [move], NOW)
    record = list(game.change.decisions)
    as_sent = msgspec.json.encode  # answers compare as the client reads them
    assert as_sent(game.retried(0, 0, [move], record)) == as_sent(answer)
    assert game.retried(0, 0, [other], record) is None
    assert game.retried(1, 0, [move], record) is None


def test_a_whole_game_played_in_the_core_gives_a_record_that_verifies():
    game, _ = _game(seats=2)
    decisions: list[bytes] = []
    while game.doc.status != "finished":
        for seat in game.ruleset.to_decide(game.state):
            if game.doc.status == "finished":
                break
            move = game.ruleset.legal_moves(game.state, seat)[0]
            game.decide(seat, game.current_seq(seat), [move], NOW)
        decisions += game.change.decisions
        game = _stored(game)
    record = game.record(decisions)
    assert record.finished and record.seed == SEED.hex()
    report = verify(msgspec.json.encode(record))
    assert report.ok, report.problems
    assert game.public_view().seed == SEED.hex()
    # the turn report: each postal round's rolls as dealt (CHOICE's round_dealt), each in turn
    rounds = postal_report(game, decisions)["rounds"]
    assert rounds and [r["first_roll"] for r in rounds] == list(range(len(rounds)))
    assert all(len(r["rolls"]) == 1 and len(r["rolls"][0]) == 5 for r in rounds)
    assert rounds[-1]["finished"] and not rounds[0]["finished"]


def test_a_running_games_report_replays_no_hidden_step():
    """The turn report of a running game replays what its record discloses, nothing more:
    the time it took grew with the hidden steps of the round under way (a spectator timing
    ``/games/{id}/report`` counted a seat's progress through its round). Two games alike in
    all that is public, one with a seat two steps into its round: the same frames, as many."""

    def played(steps: int) -> tuple[LoadedGame, list[bytes]]:
        seats = [{"name": "p0"}, {"name": "p1"}]
        game, _ = new_game("choice", {"schedule": [3]}, seats, 0, SEED, NOW, game_id="alike")
        decisions: list[bytes] = []
        for seat in (0, 1):  # the first round, decided whole: revealed
            moves, scratch = [], _stored(game)
            for _ in range(3):
                move = scratch.ruleset.legal_moves(scratch.state, seat)[0]
                scratch.ruleset.decide(scratch.state, seat, [move])
                moves.append(move)
            game.decide(seat, game.current_seq(seat), moves, NOW)
        for _ in range(steps):  # seat 0's steps in the second round, one roll at a time
            move = game.ruleset.legal_moves(game.state, 0)[0]
            game.decide(0, game.current_seq(0), [move], NOW)
        decisions += game.change.decisions
        return _stored(game), decisions

    frames = []
    for steps in (0, 2):
        game, decisions = played(steps)
        assert len(decisions) == 2 + steps
        seen: list[bytes] = []
        walk(game, decisions, lambda view, _, seen=seen: seen.append(msgspec.json.encode(view)))
        frames.append(seen)
        assert postal_report(game, decisions)["rounds"][0]["batch"] == 0
    assert frames[0] == frames[1] and len(frames[0]) == 3


def test_a_choice_state_is_stored_as_an_array():
    """Games already stored decode as the fields' order says, with no names: the layout is
    part of what a stored game is (array_like)."""
    game, _ = _game(seats=1)
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(game.state))[0] == "choice"


def test_a_running_games_record_and_view_hold_no_seed_or_dice():
    game, _ = _game()
    record = game.record([])
    assert record.seed is None and record.dice == [] and not record.finished
    assert "seed" not in msgspec.json.decode(msgspec.json.encode(game.public_view()))
    sealed = game.sealed_view()
    assert sealed.sealed and sealed.to_decide == [] and len(sealed.seats) == len(game.doc.seats)
    assert game.game_over_event(sealed=True)["seed"] is None


@pytest.mark.parametrize("ruleset_id", ["choice", "choice-specials", "chopta"])
def test_a_public_view_is_the_same_built_from_positions_or_by_name(ruleset_id, monkeypatch):
    """Each built-in ruleset's public seat is built from positions (the fast way); a ruleset
    whose public seat does not follow its board seat's order is built by name, to the same
    view."""
    game, _ = new_game(ruleset_id, {}, [{"name": "a"}, {"name": "b"}], 30, SEED, NOW)
    shapes = own_views(game.ruleset)
    board_seat = type(game.ruleset.view(game.state).seats[0])
    assert views_module._seat_position(public_seat(shapes.game_view), board_seat) is not None
    fast = msgspec.json.encode(game.public_view())
    monkeypatch.setattr(views_module, "_seat_position", lambda *_: None)
    assert msgspec.json.encode(game.public_view()) == fast
    seats = msgspec.json.decode(fast)["seats"]
    assert [s["name"] for s in seats] == ["a", "b"] and any("deadline" in s for s in seats)


def test_versions_count_commits_and_never_repeat():
    first, second = next_version(""), next_version("")
    assert version_number(first) == version_number(second) == 1 and first != second
    assert version_number(next_version(first)) == 2
    game, _ = _game()
    assert decode_doc(game.encoded()).id == game.doc.id


def test_a_rounds_tables_share_a_seed_per_dice_group_and_know_each_other():
    spec = TournamentSpec("choice", entrants=4, deadline_s=0, seed="ab" * 32)
    doc = new_tournament(spec, NOW)
    doc.entrants = [EntrantDoc(f"e{i}", token_hash(f"t{i}")) for i in range(4)]
    tables = next_round(spec, [], 0)
    games = round_games(doc, 0, tables)
    assert len(games) == 2 and games[0].seed == games[1].seed
    assert games[0].group == [games[1].game_id] and games[1].group == [games[0].game_id]
    assert round_games(doc, 0, tables) == games  # the same games on every attempt
    assert round_games(doc, 1, next_round(spec, [], 1))[0].seed != games[0].seed


def test_a_tables_result_shows_only_once_its_dice_group_is_over():
    spec = TournamentSpec("choice", entrants=4, deadline_s=0)
    doc = new_tournament(spec, NOW)
    doc.entrants = [EntrantDoc(f"e{i}", token_hash(f"t{i}")) for i in range(4)]
    doc.status = "running"
    result = GameResult(0, [0, 1], [10, 5], [1, 2])
    doc.rounds = [[TableDoc("a" * 16, [0, 1], [], result), TableDoc("b" * 16, [2, 3], [])]]
    shown = tournament_view(doc)
    assert [t["result"] for t in shown["rounds"][0]] == [None, None] and shown["seed"] is None
    doc.rounds[0][1].result = GameResult(0, [2, 3], [3, 4], [2, 1])
    assert all(t["result"] for t in tournament_view(doc)["rounds"][0])


def test_a_tournament_spec_that_does_not_fit_its_ruleset_is_refused():
    with pytest.raises(Refusal) as refused:
        new_tournament(TournamentSpec("choice", entrants=2, table_size=3), NOW)
    assert refused.value.code == "invalid-tournament" and refused.value.field == "table_size"


@pytest.mark.parametrize(
    ("events", "written", "untold"),
    [
        pytest.param([b'{"type":"step"}'], [b'{"type":"step"}'], True, id="a hidden step alone"),
        pytest.param([b'{"type":"roll"}'], [b'{"type":"roll"}'], False, id="told events alone"),
        pytest.param(
            [b'{"type":"decision"}', b'{"type":"step"}', b'{"type":"roll"}'],
            [b'{"type":"decision"}', b'{"type":"roll"}'],
            False,
            id="a hidden step among told events is not written",
        ),
    ],
)
def test_a_change_writes_a_hidden_step_only_where_it_tells_nothing(events, written, untold):
    change = Change()
    change.events = list(events)
    change.untold = events.count(b'{"type":"step"}')
    assert change.written() == (written, untold)
