"""CHOPTA rules: checked examples, swaps, turns, rounds, options, hidden pools."""

from __future__ import annotations

import msgspec
import pytest

from referee.games import InvalidOption, RuleViolation
from referee.games._common import plain
from referee.rulesets.chopta.scoring import score_area
from referee.rulesets.chopta.state import Place, Swap, swap_takes

KEY = b"chopta-test-key"


def counts(*dice):
    out = [0] * 7
    for d in dice:
        out[d] += 1
    return out


def new(chopta, seats=2, **options):
    return chopta.create(options, seats, KEY)


def refused(chopta, state, seat, move, code):
    before = msgspec.msgpack.encode(state)
    with pytest.raises(RuleViolation) as caught:
        chopta.decide(state, seat, [move])
    assert caught.value.code == code, caught.value
    assert msgspec.msgpack.encode(state) == before
    return caught.value


# --- scoring: the checked examples of RULES.md CHOPTA §6 and the options of §5


@pytest.mark.parametrize(
    ("case", "area", "options", "points"),
    [
        ("chain 1-2-3-4 takes one 4, three 4s make a set", [1, 2, 3, 4, 4, 4, 4], {}, 7),
        ("chain 3-4-5-6 beats set 3,3,3", [3, 3, 3, 4, 5, 6], {}, 4),
        ("set of five with bonus: 5 + 2", [2, 2, 2, 2, 2], {"bonus": True}, 7),
        ("two chains", [1, 1, 2, 2, 3, 3, 4, 4], {}, 8),
        ("chain of six with bonus: 6 + 2", [1, 2, 3, 4, 5, 6], {"bonus": True}, 8),
        ("no group scores nothing", [1, 1, 2, 2, 5, 5, 6, 6], {}, 0),
        ("a chain of three is no chain", [1, 2, 3], {}, 0),
        ("no wrap from 6 to 1", [5, 6, 1, 2], {}, 0),
        ("face value: set of three 6s", [6, 6, 6], {"face_value": True}, 18),
        ("face value: chain 3-4-5-6", [3, 4, 5, 6], {"face_value": True}, 18),
        (
            "face value with bonus: set of five 6s is 30 + 2",
            [6] * 5,
            {"face_value": True, "bonus": True},
            32,
        ),
        (
            "face value: chain 3-6 or set of 6s, 18 either way",
            [3, 4, 5, 6, 6, 6],
            {"face_value": True},
            18,
        ),
        ("empty area", [], {}, 0),
    ],
)
def test_area_scores(case, area, options, points):
    assert score_area(area, **options).points == points, case


def test_arrangement_names_the_groups():
    score = score_area([1, 2, 3, 4, 4, 4, 4, 6])
    groups = sorted((g.kind, tuple(g.dice), g.points) for g in score.groups)
    assert groups == [("chain", (1, 2, 3, 4), 4), ("set", (4, 4, 4), 3)]
    assert score.unused == [6]


def test_arrangement_uses_every_die_at_most_once():
    area = [1, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 6, 6, 6, 6]
    score = score_area(area, bonus=True)
    used = sorted([d for g in score.groups for d in g.dice] + score.unused)
    assert used == sorted(area)


# --- swaps (§2)


@pytest.mark.parametrize(
    ("die", "takes"),
    [(6, (1, 2, 3, 4, 5)), (5, (1, 2, 3, 4)), (4, (1, 2, 3)), (3, (1, 2)), (2, (1,)), (1, (6,))],
)
def test_swap_table(die, takes):
    assert swap_takes(die) == takes


def test_swap_moves_dice_between_areas(chopta):
    state = new(chopta)
    state.pools[0] = counts(5, 1)
    state.areas[1] = counts(3, 6)
    chopta.decide(state, 0, [Swap(5, 1, 3)])
    assert state.areas[1] == counts(5, 6) and state.areas[0] == counts(3)
    assert state.pools[0] == counts(1)


def test_a_one_takes_only_a_six(chopta):
    state = new(chopta)
    state.pools[0] = counts(1, 2)
    state.areas[1] = counts(1, 6)
    assert [m for m in chopta.legal_moves(state, 0) if isinstance(m, Swap)] == [
        Swap(1, 1, 6),
        Swap(2, 1, 1),
    ]
    refused(chopta, state, 0, Swap(1, 1, 1), "swap-not-allowed")


def test_the_four_fills_the_pattern(chopta):
    state = new(chopta)
    state.pools[0] = counts(4)
    state.areas[1] = counts(3, 4)
    refused(chopta, state, 0, Swap(4, 1, 4), "swap-not-allowed")
    chopta.decide(state, 0, [Swap(4, 1, 3)])


def test_swap_needs_the_die_in_the_area(chopta):
    state = new(chopta)
    state.pools[0] = counts(6)
    state.areas[1] = counts(6)
    refused(chopta, state, 0, Swap(6, 1, 2), "die-not-in-area")


def test_swap_with_yourself_or_nobody_is_refused(chopta):
    state = new(chopta)
    state.pools[0] = counts(6)
    state.areas[0] = counts(2)
    refused(chopta, state, 0, Swap(6, 0, 2), "invalid-opponent")
    refused(chopta, state, 0, Swap(6, 5, 2), "invalid-opponent")


def test_die_must_be_in_the_pool(chopta):
    state = new(chopta)
    state.pools[0] = counts(1, 1, 2)
    refused(chopta, state, 0, Place(6), "die-not-in-pool")


def test_not_your_turn(chopta):
    state = new(chopta)
    assert chopta.legal_moves(state, 1) == []
    refused(chopta, state, 1, Place(1), "not-your-turn")


def test_one_die_per_decision(chopta):
    state = new(chopta)
    with pytest.raises(RuleViolation) as caught:
        chopta.decide(state, 0, [Place(1), Place(2)])
    assert caught.value.code == "one-move-per-decision"


# --- turns and rounds (§1, §2, §4)


def play_round(chopta, state):
    start = state.round
    while state.round == start and not state.finished:
        seat = chopta.to_decide(state)[0]
        chopta.decide(state, seat, chopta.legal_moves(state, seat)[:1])


def test_turns_go_clockwise(chopta):
    state = new(chopta, seats=3)
    order = []
    for _ in range(6):
        seat = chopta.to_decide(state)[0]
        order.append(seat)
        chopta.decide(state, seat, chopta.legal_moves(state, seat)[:1])
    assert order == [0, 1, 2, 0, 1, 2]


def test_first_seat_rotates_each_round(chopta):
    state = new(chopta, seats=3, target=10_000)
    firsts = []
    for _ in range(4):
        firsts.append(chopta.to_decide(state)[0])
        play_round(chopta, state)
    assert firsts == [0, 1, 2, 0]


def test_empty_pools_are_skipped(chopta):
    state = new(chopta, seats=3)
    state.pools[1] = counts()
    chopta.decide(state, 0, chopta.legal_moves(state, 0)[:1])
    assert chopta.to_decide(state) == [2]


def test_round_ends_when_every_pool_is_empty_and_scores_add_up(chopta):
    state = new(chopta, seats=2, target=10_000)
    state.pools = [counts(1), counts(1)]
    state.areas = [counts(1, 2, 3), counts(5, 5)]
    chopta.decide(state, 0, [Place(1)])
    events = chopta.decide(state, 1, [Place(1)])
    assert state.history == [[0, 0]]  # 1,1,2,3 and 1,5,5 score nothing
    round_over = next(e for e in events if e["type"] == "round_over")
    assert round_over["pools"] and round_over["totals"] == [0, 0]
    assert state.round == 1 and all(sum(p) == 10 for p in state.pools)
    assert all(sum(a) == 0 for a in state.areas)


def test_game_ends_after_the_round_in_which_the_target_is_reached(chopta):
    state = new(chopta, seats=2, target=5)
    state.pools = [counts(4), counts(1)]
    state.areas = [counts(1, 2, 3), counts(6, 6, 6, 6, 6)]
    chopta.decide(state, 0, [Place(4)])
    assert not state.finished
    chopta.decide(state, 1, [Place(1)])
    assert state.finished and state.totals == [4, 5] and chopta.ranking(state) == [2, 1]
    assert chopta.to_decide(state) == []


def test_equal_totals_share_the_place(chopta):
    state2 = new(chopta, seats=3, target=3)
    state2.pools = [counts(2), counts(2), counts(1)]
    state2.areas = [counts(2, 2), counts(2, 2), counts(3, 3)]
    for seat in (0, 1, 2):
        chopta.decide(state2, seat, chopta.legal_moves(state2, seat)[:1])
    assert state2.totals == [3, 3, 0] and chopta.ranking(state2) == [1, 1, 3]


def test_max_rounds_ends_the_game(chopta):
    state = new(chopta, seats=2, target=10_000, max_rounds=2)
    play_round(chopta, state)
    play_round(chopta, state)
    assert state.finished and len(state.history) == 2


def test_two_dice_per_turn(chopta):
    state = new(chopta, seats=2, dice_per_turn=2)
    order = []
    for _ in range(6):
        seat = chopta.to_decide(state)[0]
        order.append(seat)
        chopta.decide(state, seat, chopta.legal_moves(state, seat)[:1])
    assert order == [0, 0, 1, 1, 0, 0]


def test_two_dice_per_turn_with_one_die_left_plays_one(chopta):
    state = new(chopta, seats=2, dice_per_turn=2, target=10_000)
    state.pools = [counts(3), counts(4, 5)]
    chopta.decide(state, 0, [Place(3)])
    assert chopta.to_decide(state) == [1]
    chopta.decide(state, 1, [Place(4)])
    assert chopta.to_decide(state) == [1]


def test_bonus_and_face_value_apply_to_round_scores(chopta):
    state = new(chopta, seats=2, target=10_000, bonus=True, face_value=True)
    state.pools = [counts(6), counts(1)]
    state.areas = [counts(6, 6, 6, 6), counts()]
    chopta.decide(state, 0, [Place(6)])
    chopta.decide(state, 1, [Place(1)])
    assert state.history == [[32, 0]]


# --- hidden pools


def test_a_seat_sees_its_own_pool_and_only_sizes_of_others(chopta):
    state = new(chopta, seats=3)
    public = plain(chopta.view(state))
    assert "you" not in public
    assert [s["pool_size"] for s in public["seats"]] == [10, 10, 10]
    assert not any("pool" in s for s in public["seats"])
    mine = plain(chopta.view(state, 1))
    assert sorted(mine["you"]["pool"]) == sorted(
        d for v in range(1, 7) for d in [v] * state.pools[1][v]
    )
    encoded = msgspec.json.encode(mine)
    assert encoded.count(b'"pool"') == 1


# --- deadlines, options, seats


def test_timeout_places_the_lowest_die(chopta):
    state = new(chopta)
    state.pools[0] = counts(2, 5)
    chopta.timeout(state, 0)
    assert state.areas[0] == counts(2) and state.timeouts[0] == 1


def test_three_timeouts_retire_a_seat_whose_dice_are_then_placed_for_it(chopta):
    state = new(chopta, seats=2, target=10_000)
    for _ in range(3):
        chopta.timeout(state, 0)
        chopta.decide(state, 1, chopta.legal_moves(state, 1)[:1])
    assert state.retired[0]
    # seat 0 never has the turn again: its dice go to its own area automatically
    while state.round == 0:
        assert chopta.to_decide(state) == [1]
        chopta.decide(state, 1, chopta.legal_moves(state, 1)[:1])
    assert chopta.to_decide(state) == [1]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"target": 0}, "options.target"),
        ({"dice_per_turn": 3}, "options.dice_per_turn"),
        ({"bonus": "yes"}, "options.bonus"),
        ({"colour": "red"}, "options.colour"),
        ({"max_rounds": 0}, "options.max_rounds"),
    ],
)
def test_bad_options_name_the_option(chopta, options, field):
    with pytest.raises(InvalidOption) as caught:
        chopta.create(options, 2, KEY)
    assert caught.value.field == field


@pytest.mark.parametrize("seats", [1, 9])
def test_seat_counts(chopta, seats):
    with pytest.raises(InvalidOption) as caught:
        chopta.create({}, seats, KEY)
    assert caught.value.code == "invalid-seat-count"


def test_state_round_trips_through_bytes(chopta):
    state = new(chopta, seats=4, bonus=True)
    chopta.decide(state, 0, chopta.legal_moves(state, 0)[-1:])
    data = msgspec.msgpack.encode(state)
    again = msgspec.msgpack.decode(data, type=chopta.State)
    assert again == state and msgspec.msgpack.encode(again) == data


def test_two_chains_that_leave_a_set_of_fives_behind_score_best():
    """1 2 3 3 4 4 5 5 5 5 6: the chains 1-2-3-4 and 3-4-5-6 beside a set of the three fives
    left are worth 8 + 3 = 11 (one die a point); the best with no five kept out of chains
    scores 9. The search must try the top of the fives' flat part (4 - 3 = 1 five in chains),
    not only as many fives as the chains can take."""
    area = [1, 2, 3, 3, 4, 4, 5, 5, 5, 5, 6]
    assert score_area(area).points == 11
