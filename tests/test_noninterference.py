"""Noninterference, in the engines: what one seat decided in secret changes nothing that any
other party can read until the reveal.

Two copies of a game alike in all that is public; in each, one seat (X) makes a different
hidden decision (hypothesis picks them: every kind of move, one roll at a time or several,
cards alone or with a roll's move, ``pass``). Everything the others are shown (the public
view, each other seat's view, legal and default moves, who is to decide, the counts of
decisions they may see) must be byte-identical in both copies, after X's step and after every
decision the others then make alike, until a reveal. Every ruleset in the registry is played;
one whose decisions are all public (CHOPTA) has no hidden step to vary, so it is varied in its
other secret instead: a seat's pool. The same property over HTTP, as a cheating bot sees it:
``tests/service/test_noninterference_http.py``.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import RULESETS, RuleViolation

KEY = b"noninterference-test-key"

#: Options that give each ruleset's hidden phases (a ruleset not named: its defaults).
OPTIONS: dict[str, list[dict[str, Any]]] = {
    "choice": [{"schedule": [1]}, {"schedule": [3]}, {"schedule": [2, 4]}],
    "choice-specials": [{"schedule": [1]}, {"schedule": [3]}, {"schedule": [2]}],
    "chopta": [{}, {"dice_per_turn": 2}],
}

PROFILE = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _clone(ruleset: Any, state: Any) -> Any:
    return msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=ruleset.State)


def _seats(state: Any, ruleset: Any) -> range:
    return range(len(ruleset.totals(state)))


def seen_by_others(ruleset: Any, state: Any, x: int) -> bytes:
    """Everything a party other than seat ``x`` may read of the game (as one JSON)."""
    seats = _seats(state, ruleset)
    others = [s for s in seats if s != x]
    shown: dict[str, Any] = {
        "public": ruleset.view(state),
        "to_decide": ruleset.to_decide(state),
        "finished": ruleset.finished(state),
        "public_seq": [ruleset.public_seq(state, s) for s in seats],
        "disclosed": [ruleset.disclosed(state, s) for s in seats],
        "seats": {
            s: {
                "view": ruleset.view(state, s),
                "seq": ruleset.seq(state, s),
                "must_decide": ruleset.must_decide(state, s),
                "legal": ruleset.legal_moves(state, s),
                "default": (
                    ruleset.default_moves(state, s) if ruleset.must_decide(state, s) else None
                ),
            }
            for s in others
        },
    }
    return msgspec.json.encode(shown)


def draw_submission(data: Any, ruleset: Any, state: Any, seat: int) -> list[Any]:
    """A decision of ``seat``: one move, or several (each legal where it stands in the
    submission, never past the close of the seat's round), as hypothesis picks them."""
    scratch = _clone(ruleset, state)
    public = ruleset.public_seq(scratch, seat)
    moves: list[Any] = []
    while True:
        legal = ruleset.legal_moves(scratch, seat)
        if not legal:
            break
        move = data.draw(st.sampled_from(legal))
        ruleset.decide(scratch, seat, [move])
        moves.append(move)
        if ruleset.public_seq(scratch, seat) != public or not ruleset.must_decide(scratch, seat):
            break
        if not data.draw(st.booleans()):
            break
    return moves


def a_point_of_play(data: Any, ruleset: Any, state: Any, rnd: random.Random) -> Any:
    """The history both copies share: a whole game of random legal decisions (one move each)
    is played, and hypothesis picks a point of it, so that every phase is reached, the last
    rolls of a sheet included."""
    points = []
    for _ in range(5000):
        due = ruleset.to_decide(state)
        if not due:
            break
        points.append(msgspec.msgpack.encode(state))
        seat = rnd.choice(due)
        ruleset.decide(state, seat, [rnd.choice(ruleset.legal_moves(state, seat))])
    last = len(points) - 1  # half the time in the last quarter: where sheets complete
    index = data.draw(st.integers(0, last) | st.integers(last - last // 4, last))
    return msgspec.msgpack.decode(points[index], type=ruleset.State)


def _revealed(ruleset: Any, before: Any, after: Any) -> bool:
    seats = _seats(before, ruleset)
    return ruleset.finished(after) or any(
        ruleset.disclosed(after, s) != ruleset.disclosed(before, s) for s in seats
    )


@pytest.mark.parametrize("ruleset_id", list(RULESETS))
@PROFILE
@given(data=st.data(), seed=st.integers(0, 2**32))
def test_a_hidden_decision_changes_nothing_another_party_sees(ruleset_id, data, seed):
    ruleset = RULESETS[ruleset_id]
    options = data.draw(st.sampled_from(OPTIONS.get(ruleset_id, [{}])))
    seats = data.draw(st.integers(max(2, ruleset.min_seats), min(4, ruleset.max_seats)))
    rnd = random.Random(seed)
    state = a_point_of_play(data, ruleset, ruleset.create(options, seats, KEY), rnd)
    x = data.draw(st.sampled_from(ruleset.to_decide(state)))
    before = seen_by_others(ruleset, state, x)
    copies = []
    for _ in range(2):
        copy = _clone(ruleset, state)
        public = ruleset.public_seq(copy, x)
        events = ruleset.decide(copy, x, draw_submission(data, ruleset, copy, x))
        closed = ruleset.public_seq(copy, x) != public
        if not closed:  # a hidden step: nothing moved for anyone else, nor may it
            assert not events
            assert seen_by_others(ruleset, copy, x) == before
        copies.append((copy, closed, bool(events)))
    (a, a_closed, a_told), (b, b_closed, b_told) = copies
    if a_closed != b_closed or a_told or b_told:
        return  # closed in one copy only (a public fact), or revealed: nothing more to compare
    # then the others decide alike in both copies, X waiting, until a reveal
    for _ in range(60):
        assert seen_by_others(ruleset, a, x) == seen_by_others(ruleset, b, x)
        due = [s for s in ruleset.to_decide(a) if s != x]
        if not due:
            return
        seat = rnd.choice(due)
        moves = [rnd.choice(ruleset.legal_moves(a, seat))]
        previous = _clone(ruleset, a)
        ruleset.decide(a, seat, moves)
        ruleset.decide(b, seat, moves)
        if _revealed(ruleset, previous, a):
            return


def test_the_property_meets_a_sheet_completed_inside_a_round():
    """The case that leaked: a seat whose hidden step completes its sheet before the round's
    last roll looks to the others like a seat whose step did not."""
    choice = RULESETS["choice"]
    state = choice.create({"schedule": [3]}, 2, KEY)
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [1, 2, 3], [7, 0, 0]
    state.rolls = [(1, 2, 2, 2, 2), (1, 2, 2, 2, 2), (1, 2, 2, 2, 2)]
    legal = choice.legal_moves(state, 0)
    ending = next(move for move in legal if getattr(move, "fifth", None) == 1)
    other = next(move for move in legal if getattr(move, "fifth", None) == 2)
    before = seen_by_others(choice, state, 0)
    finished, open_ = _clone(choice, state), _clone(choice, state)
    choice.decide(finished, 0, [ending])
    choice.decide(open_, 0, [other])
    assert finished.drafts[0].done and not open_.drafts[0].done
    assert seen_by_others(choice, finished, 0) == seen_by_others(choice, open_, 0) == before


@PROFILE
@given(data=st.data(), seed=st.integers(0, 2**32))
def test_a_chopta_pool_changes_nothing_another_party_sees(data, seed):
    """CHOPTA's decisions are public; its secret is each seat's pool. Two copies differing in
    one seat's unplayed dice look alike to everyone else, while the others play alike."""
    chopta = RULESETS["chopta"]
    seats = data.draw(st.integers(2, 4))
    rnd = random.Random(seed)
    created = chopta.create(data.draw(st.sampled_from(OPTIONS["chopta"])), seats, KEY)
    state = a_point_of_play(data, chopta, created, rnd)
    x = data.draw(st.sampled_from([s for s in range(seats) if s != state.turn]))
    size = sum(state.pools[x])
    faces = data.draw(st.lists(st.integers(1, 6), min_size=size, max_size=size))
    other = _clone(chopta, state)
    other.pools[x] = [0] * 7
    for face in faces:
        other.pools[x][face] += 1
    for _ in range(40):
        assert seen_by_others(chopta, state, x) == seen_by_others(chopta, other, x)
        due = chopta.to_decide(state)
        if not due or x in due:
            return
        seat = due[0]
        moves = [rnd.choice(chopta.legal_moves(state, seat))]
        round_ = state.round
        chopta.decide(state, seat, moves)
        chopta.decide(other, seat, moves)
        if state.round != round_:
            return  # the round is over: pools are revealed


def test_a_refused_pass_says_why():
    choice = RULESETS["choice"]
    state = choice.create({"schedule": [2]}, 1, KEY)
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [msgspec.convert({"type": "pass"}, choice.Move)])
    assert refused.value.code == "illegal-move"
