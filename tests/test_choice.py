"""CHOICE rules: a named case for every rule and option, and every checked example of RULES.md."""

from __future__ import annotations

import msgspec
import pytest
from choice_helpers import force_rolls

from referee.games import InvalidOption, RuleViolation
from referee.rulesets.choice.postal import batch_size
from referee.rulesets.choice.rounds import round_moves
from referee.rulesets.choice.sheet import FreeThrow, Mark, Pass, score_marks

KEY = b"choice-test-key"


def new(ruleset, seats=1, **options):
    return ruleset.create(options, seats, KEY)


def snapshot(state):
    return msgspec.msgpack.encode(state)


# --- scoring (RULES.md CHOICE §5 and the checked examples of §7)


@pytest.mark.parametrize(
    ("case", "marks", "total"),
    [
        ("8 marked 9 times scores +160", {8: 9}, 160),
        ("9 marked 7 times scores +100", {9: 7}, 100),
        ("6 marked 6 times scores +40", {6: 6}, 40),
        ("7 marks on 4 score 120 (the table beats the English misprint)", {4: 7}, 120),
        ("10 marked 9 times scores 240 (points 60, not the German figure's 80)", {10: 9}, 240),
        ("1..4 marks cost 200", {7: 1}, -200),
        ("4 marks cost 200", {3: 4}, -200),
        ("exactly 5 marks score 0", {12: 5}, 0),
        ("no marks score 0", {}, 0),
        ("marks past the 10th score nothing more", {2: 14}, 500),
        ("10 marks on 2 score the maximum 500", {2: 10}, 500),
        ("a negative total is a total", {2: 1, 12: 3}, -400),
    ],
)
def test_scoring_table(case, marks, total):
    assert score_marks(marks).total == total, case


def test_finished_german_sheet_figure_4_scores_plus_400():
    score = score_marks({2: 4, 4: 6, 5: 5, 6: 6, 8: 9, 9: 7, 10: 9})
    assert (score.plus, score.minus, score.total) == (600, 200, 400)
    points = {s.sum: s.points for s in score.sums}
    assert points == {
        2: -200,
        3: 0,
        4: 60,
        5: 0,
        6: 40,
        7: 0,
        8: 160,
        9: 100,
        10: 240,
        11: 0,
        12: 0,
    }


PAIR_FOR = {2: (1, 1), 4: (1, 3), 5: (1, 4), 6: (1, 5), 8: (2, 6), 9: (3, 6), 10: (4, 6)}


def test_figure_4_game_played_through_the_engine(choice):
    """23 rolls, one of them a free throw: fifth dice 4 x8, 2 x7, 5 x7, final +400."""
    sums = [2] * 4 + [4] * 6 + [5] * 5 + [6] * 6 + [8] * 9 + [9] * 7 + [10] * 9
    sums.remove(4)
    sums.remove(9)  # the free throw marks 4 and 9
    fifths = [4, 2, 5] + [4] * 6 + [2] * 6 + [5] * 6 + [4]
    state = new(choice)
    moves = []
    for i, fifth in enumerate(fifths):
        if i == 3:
            moves.append(FreeThrow(6, ((1, 3), (3, 6))))
        moves.append(Mark(fifth, (PAIR_FOR[sums[2 * i]], PAIR_FOR[sums[2 * i + 1]])))
    assert len(moves) == 23
    for n, move in enumerate(moves):
        assert not state.finished, f"ended early at move {n}"
        dice = [*move.pairs[0], *move.pairs[1], getattr(move, "fifth", None) or move.set_aside]
        force_rolls(state, dice)
        assert move in choice.legal_moves(state, 0)
        choice.decide(state, 0, [move])
    assert state.finished
    sheet = state.sheets[0]
    assert dict(zip(sheet.fifth_values, sheet.fifth_counts, strict=True)) == {4: 8, 2: 7, 5: 7}
    assert (sheet.rounds, sheet.free_throws) == (23, 1)
    score = choice.scores(state)[0]
    assert (score.plus, score.minus, score.total) == (600, 200, 400)
    assert choice.ranking(state) == [1]


# --- moves (§2, §3)


def test_first_move_example_roll_1_3_4_4_6(choice):
    state = new(choice)
    force_rolls(state, (1, 3, 4, 4, 6))
    move = Mark(4, ((1, 3), (4, 6)))
    assert move in choice.legal_moves(state, 0)
    choice.decide(state, 0, [move])
    sheet = state.sheets[0]
    assert sheet.marks[4 - 2] == 1 and sheet.marks[10 - 2] == 1
    assert (sheet.fifth_values, sheet.fifth_counts) == ([4], [1])


def test_third_roll_example_adds_a_third_fifth_value(choice):
    state = new(choice)
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [4, 2], [1, 1]
    force_rolls(state, (1, 2, 2, 4, 5))
    choice.decide(state, 0, [Mark(5, ((2, 2), (1, 4)))])
    assert state.sheets[0].fifth_values == [4, 2, 5]


def test_free_throw_example_roll_1_3_3_6_6_with_values_2_4_5(choice):
    state = new(choice)
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [4, 2, 5], [1, 1, 1]
    force_rolls(state, (1, 3, 3, 6, 6))
    legal = choice.legal_moves(state, 0)
    assert legal and all(isinstance(m, FreeThrow) for m in legal)
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [Mark(6, ((1, 3), (3, 6)))])
    assert refused.value.code == "fifth-die-must-match"
    choice.decide(state, 0, [FreeThrow(6, ((1, 3), (3, 6)))])
    sheet = state.sheets[0]
    assert sheet.marks[4 - 2] == 1 and sheet.marks[9 - 2] == 1
    assert sheet.fifth_counts == [1, 1, 1] and sheet.free_throws == 1


def test_five_distinct_dice_give_fifteen_partitions(choice):
    state = new(choice)
    force_rolls(state, (1, 2, 3, 4, 5))
    assert len(choice.legal_moves(state, 0)) == 15


def test_five_equal_dice_give_one_partition(choice):
    assert round_moves((3, 3, 3, 3, 3), None) == (Mark(3, ((3, 3), (3, 3))),)


def test_same_sum_twice_gets_two_marks(choice):
    state = new(choice)
    force_rolls(state, (3, 3, 3, 3, 3))
    choice.decide(state, 0, [Mark(3, ((3, 3), (3, 3)))])
    assert state.sheets[0].marks[6 - 2] == 2


def test_pairs_in_any_order_are_accepted(choice):
    state = new(choice)
    force_rolls(state, (1, 3, 4, 4, 6))
    choice.decide(state, 0, [Mark(4, ((6, 4), (3, 1)))])
    assert state.sheets[0].marks[10 - 2] == 1


def test_any_die_may_be_fifth_while_fewer_than_three_values(choice):
    state = new(choice)
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [6, 1], [2, 2]
    force_rolls(state, (2, 3, 4, 5, 6))
    assert {m.fifth for m in choice.legal_moves(state, 0)} == {2, 3, 4, 5, 6}


def test_with_three_values_the_fifth_die_must_match(choice):
    state = new(choice)
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [2, 4, 6], [1, 1, 1]
    force_rolls(state, (1, 2, 3, 4, 5))
    assert {m.fifth for m in choice.legal_moves(state, 0)} == {2, 4}
    before = snapshot(state)
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [Mark(5, ((1, 2), (3, 4)))])
    assert refused.value.code == "fifth-die-must-match"
    assert snapshot(state) == before


def test_free_throw_needs_three_values(choice):
    state = new(choice)
    force_rolls(state, (1, 2, 3, 4, 5))
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [FreeThrow(5, ((1, 2), (3, 4)))])
    assert refused.value.code == "free-throw-not-allowed"


def test_free_throw_refused_when_a_value_shows(choice):
    state = new(choice)
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [2, 4, 6], [1, 1, 1]
    force_rolls(state, (1, 1, 3, 5, 6))
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [FreeThrow(5, ((1, 1), (3, 6)))])
    assert refused.value.code == "free-throw-not-allowed"


def test_dice_not_in_roll_are_refused(choice):
    state = new(choice)
    force_rolls(state, (1, 3, 4, 4, 6))
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [Mark(4, ((1, 3), (5, 6)))])
    assert refused.value.code == "dice-not-in-roll"


# --- end (§4)


def test_eighth_mark_ends_the_player_and_its_sums_count(choice):
    state = new(choice, seats=2)
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [1, 2, 3], [7, 0, 0]
    force_rolls(state, (1, 6, 6, 5, 5))
    choice.decide(state, 0, [Mark(1, ((5, 5), (6, 6)))])
    choice.decide(state, 1, [Mark(1, ((5, 5), (6, 6)))])
    assert state.sheets[0].done and not state.sheets[1].done
    assert state.sheets[0].marks[12 - 2] == 1
    assert choice.to_decide(state) == [1]
    assert not state.finished
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, choice.legal_moves(state, 1)[:1])
    assert refused.value.code == "not-your-turn"


def test_game_ends_when_every_player_is_done(choice):
    state = new(choice, seats=2)
    for sheet in state.sheets:
        sheet.fifth_values, sheet.fifth_counts = [1], [7]
    force_rolls(state, (1, 2, 2, 2, 2))
    choice.decide(state, 0, [Mark(1, ((2, 2), (2, 2)))])
    assert not state.finished
    events = choice.decide(state, 1, [Mark(2, ((1, 2), (2, 2)))])
    assert not state.finished and not state.sheets[1].done
    assert [e["type"] for e in events] == ["rolls_decided", "seat_done", "rolls"]
    assert events[1] == {"type": "seat_done", "seat": 0, "retired": False}  # the done one


@pytest.mark.parametrize("schedule", [[1], [3]])
def test_a_finished_game_deals_no_more_rolls_and_logs_only_those_dealt(choice, schedule):
    """At the end no roll is left to decide (the view's ``rolls`` is empty), and the dice
    log, which the record carries, holds exactly the rolls the batches dealt."""
    state = new(choice, seats=2, schedule=schedule)
    dealt = len(state.rolls)
    while not state.finished:
        for seat in choice.to_decide(state):
            events = choice.decide(state, seat, choice.default_moves(state, seat))
            dealt += sum(len(e["rolls"]) for e in events if e["type"] == "rolls")
    assert state.rolls == [] and choice.view(state).rolls == []
    log = choice.dice_log(state)
    assert [r.roll for r in log] == list(range(dealt)) and state.first_roll == dealt


def test_marks_past_ten_are_allowed(choice):
    state = new(choice)
    state.sheets[0].marks[12 - 2] = 10
    force_rolls(state, (6, 6, 6, 6, 1))
    choice.decide(state, 0, [Mark(1, ((6, 6), (6, 6)))])
    assert state.sheets[0].marks[12 - 2] == 12
    assert choice.scores(state)[0].total == 500


# --- shared rolls and hidden decisions (§1)


def test_decisions_stay_hidden_until_every_active_seat_decided(choice):
    state = new(choice, seats=3)
    force_rolls(state, (1, 3, 4, 4, 6))
    choice.decide(state, 0, [Mark(4, ((1, 3), (4, 6)))])
    public = choice.view(state)
    other = choice.view(state, 1)
    assert all(sum(seat.marks.values()) == 0 for seat in public.seats)
    assert not hasattr(public, "you") and other.you.decisions == []
    assert choice.view(state, 0).you.decisions == [Mark(4, ((1, 3), (4, 6)))]
    assert [s.decided for s in public.seats] == [True, False, False]
    assert choice.to_decide(state) == [1, 2]
    choice.decide(state, 1, [choice.legal_moves(state, 1)[0]])
    events = choice.decide(state, 2, [choice.legal_moves(state, 2)[-1]])
    assert events[0]["type"] == "rolls_decided" and set(events[0]["decisions"]) == {"0", "1", "2"}
    assert sum(choice.view(state).seats[0].marks.values()) == 2


def test_every_seat_sees_the_same_roll(choice):
    state = new(choice, seats=4)
    rolls = {tuple(map(tuple, choice.view(state, s).rolls)) for s in range(4)}
    assert len(rolls) == 1


def test_a_seat_cannot_decide_twice(choice):
    state = new(choice, seats=2)
    choice.decide(state, 0, choice.legal_moves(state, 0)[:1])
    before = snapshot(state)
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [Mark(1, ((1, 1), (1, 1)))])
    assert refused.value.code == "not-your-turn"
    assert snapshot(state) == before


# --- postal batching


@pytest.mark.parametrize(
    ("schedule", "sizes"),
    [
        ((1,), [1, 1, 1, 1, 1]),
        ((2,), [2, 2, 2, 2, 2]),
        ((4, 4, 4, 3, 3, 3, 2, 2, 2, 1), [4, 4, 4, 3, 3, 3, 2, 2, 2, 1, 1, 1]),
    ],
)
def test_postal_schedules(choice, schedule, sizes):
    state = new(choice, seats=2, schedule=list(schedule))
    assert [len(state.rolls)] == sizes[:1]
    for seat in (0, 1):
        choice.decide(state, seat, choice.default_moves(state, seat))
    assert state.first_roll == sizes[0] and len(state.rolls) == sizes[1]
    for batch, size in enumerate(sizes):
        state.batch = batch
        assert batch_size(state) == size


def test_postal_round_accepts_a_whole_batch_in_one_submission(choice):
    state = new(choice, schedule=[2])
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    first = state.first_roll
    choice.decide(state, 0, [Mark(1, ((2, 3), (4, 5))), Mark(6, ((2, 2), (3, 3)))])
    assert state.first_roll == first + 2 and state.seqs[0] == 1
    assert state.sheets[0].fifth_values == [1, 6]


def test_postal_round_accepts_one_roll_at_a_time(choice):
    state = new(choice, schedule=[2])
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    choice.decide(state, 0, [Mark(1, ((2, 3), (4, 5)))])
    assert sum(choice.view(state).seats[0].marks.values()) == 0, "revealed too early"
    assert choice.view(state, 0).you.sheet.marks["5"] == 1
    assert choice.legal_moves(state, 0)[0] == Mark(2, ((2, 3), (3, 6)))
    choice.decide(state, 0, [Mark(6, ((2, 2), (3, 3)))])
    assert state.batch == 1
    assert sum(choice.view(state).seats[0].marks.values()) == 4


def test_batch_is_all_or_nothing_and_names_the_bad_move(choice):
    state = new(choice, schedule=[2])
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    before = snapshot(state)
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [Mark(1, ((2, 3), (4, 5))), Mark(6, ((2, 2), (3, 4)))])
    assert refused.value.code == "dice-not-in-roll" and refused.value.field == "moves[1]"
    assert snapshot(state) == before


def test_too_many_moves_for_the_batch(choice):
    state = new(choice, schedule=[2])
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    moves = [Mark(1, ((2, 3), (4, 5))), Mark(6, ((2, 2), (3, 3))), Mark(6, ((2, 2), (3, 3)))]
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, moves)
    assert refused.value.code == "batch-complete"


def test_player_finishing_inside_a_batch_submits_no_more(choice):
    state = new(choice, schedule=[3])
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [1], [7]
    force_rolls(state, (1, 2, 2, 2, 2), (1, 2, 2, 2, 2), (1, 2, 2, 2, 2))
    move = Mark(1, ((2, 2), (2, 2)))
    before = snapshot(state)
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [move, move])
    assert refused.value.code == "player-finished" and refused.value.field == "moves[1]"
    assert snapshot(state) == before
    choice.decide(state, 0, [move])
    # the sheet completed inside the round: the round stays open, in public as for any step,
    # until the seat passes the rest of it (docs/RULES.md "Postal rounds")
    assert not state.finished and choice.to_decide(state) == [0]
    assert choice.view(state).seats[0].decided is False
    assert choice.legal_moves(state, 0) == [Pass()]
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [move])
    assert refused.value.code == "player-finished" and "pass" in refused.value.message
    choice.decide(state, 0, [Pass()])
    assert state.finished


def test_a_complete_sheet_passes_in_the_same_submission(choice):
    state = new(choice, schedule=[3])
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [1], [7]
    force_rolls(state, (1, 2, 2, 2, 2), (1, 2, 2, 2, 2), (1, 2, 2, 2, 2))
    move = Mark(1, ((2, 2), (2, 2)))
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [move, Pass(), Pass()])
    assert refused.value.code == "batch-complete" and refused.value.field == "moves[2]"
    choice.decide(state, 0, [move, Pass()])
    assert state.finished
    assert state.sheets[0].fifth_counts == [8] and state.sheets[0].done


def test_pass_is_refused_while_the_sheet_is_open(choice):
    state = new(choice, schedule=[2])
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    before = snapshot(state)
    with pytest.raises(RuleViolation) as refused:
        choice.decide(state, 0, [Pass()])
    assert refused.value.code == "illegal-move" and "complete" in refused.value.message
    assert snapshot(state) == before
    assert Pass() not in choice.legal_moves(state, 0)


def test_a_timeout_after_the_sheet_completed_passes(choice):
    state = new(choice, seats=2, schedule=[3])
    state.sheets[0].fifth_values, state.sheets[0].fifth_counts = [1], [7]
    force_rolls(state, (1, 2, 2, 2, 2), (1, 2, 2, 2, 2), (1, 2, 2, 2, 2))
    choice.decide(state, 0, [Mark(1, ((2, 2), (2, 2)))])
    assert choice.default_moves(state, 0) == [Pass()]
    assert choice.public_seq(state, 0) == 0
    choice.timeout(state, 0)
    assert choice.public_seq(state, 0) == 1 and choice.to_decide(state) == [1]


# --- options and seats


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"schedule": []}, "options.schedule"),
        ({"schedule": [0]}, "options.schedule[0]"),
        ({"schedule": [1, "x"]}, "options.schedule[1]"),
        ({"shedule": [1]}, "options.shedule"),
        ({"schedule": 2}, "options.schedule"),
    ],
)
def test_bad_options_name_the_option(choice, options, field):
    with pytest.raises(InvalidOption) as refused:
        choice.create(options, 1, KEY)
    assert refused.value.code == "invalid-option" and refused.value.field == field


@pytest.mark.parametrize("seats", [0, 65])
def test_seat_counts(choice, seats):
    with pytest.raises(InvalidOption) as refused:
        choice.create({}, seats, KEY)
    assert refused.value.code == "invalid-seat-count"


def test_sixty_four_seats_share_rolls(choice):
    state = choice.create({}, 64, KEY)
    assert len(choice.to_decide(state)) == 64


# --- deadlines


def test_timeout_applies_the_first_legal_move(choice):
    state = new(choice, seats=2)
    expected = choice.legal_moves(state, 1)[0]
    assert choice.default_moves(state, 1) == [expected]
    choice.timeout(state, 1)
    assert state.pending[1] == [expected] and state.timeouts[1] == 1


def test_three_timeouts_in_a_row_retire_a_seat_and_freeze_its_sheet(choice):
    state = new(choice, seats=2)
    for _ in range(2):
        choice.decide(state, 0, choice.legal_moves(state, 0)[:1])
        choice.timeout(state, 1)
    assert not state.sheets[1].done
    choice.decide(state, 0, choice.legal_moves(state, 0)[:1])
    choice.timeout(state, 1)
    assert state.sheets[1].retired and state.sheets[1].done
    frozen = list(state.sheets[1].marks)
    choice.decide(state, 0, choice.legal_moves(state, 0)[:1])
    assert state.sheets[1].marks == frozen and choice.to_decide(state) == [0]


def test_a_decision_resets_the_timeout_streak(choice):
    state = new(choice, seats=1)
    choice.timeout(state, 0)
    choice.timeout(state, 0)
    choice.decide(state, 0, choice.legal_moves(state, 0)[:1])
    choice.timeout(state, 0)
    assert state.timeouts[0] == 1 and not state.sheets[0].retired


# --- ranking


def test_equal_totals_share_the_place(choice):
    from referee.games import places

    assert places([100, -50, 100, 20]) == [1, 4, 1, 3]
    assert places([-300, -100]) == [2, 1]


def test_state_round_trips_through_bytes(choice):
    state = new(choice, seats=3, schedule=[2, 1])
    choice.decide(state, 0, choice.legal_moves(state, 0)[:1])
    data = msgspec.msgpack.encode(state)
    again = msgspec.msgpack.decode(data, type=choice.State)
    assert again == state and msgspec.msgpack.encode(again) == data


def test_the_last_seat_to_decide_reveals_every_sheet_once(choice):
    state = new(choice, seats=2)
    force_rolls(state, (1, 3, 4, 4, 6))
    choice.decide(state, 1, [Mark(4, ((1, 3), (4, 6)))])
    assert sum(state.sheets[1].marks) == 0 and state.drafts[1] is not None
    choice.decide(state, 0, [Mark(1, ((3, 4), (4, 6)))])
    assert [sum(sheet.marks) for sheet in state.sheets] == [2, 2]
    assert state.drafts == [None, None] and state.pending == [[], []]
    assert state.sheets[0].fifth_values == [1] and state.sheets[1].fifth_values == [4]


@pytest.mark.parametrize("ruleset_id", ["choice", "choice-specials"])
def test_warmed_round_caches_hold_every_round_play_can_meet(ruleset_id):
    """``warm_caches`` fills the round caches whole: after it, random play (both CHOICE
    rulesets, every seat count) asks for no round it did not hold."""
    import random

    from referee.games import get_ruleset, warm_caches
    from referee.rulesets.choice.rounds import _round_move_set

    round_moves.cache_clear()
    _round_move_set.cache_clear()
    warm_caches()
    held = (round_moves.cache_info().currsize, _round_move_set.cache_info().currsize)
    assert held == (252 * 21, 252 * 21)
    ruleset, pick = get_ruleset(ruleset_id), random.Random(7)
    for game in range(40):
        state = ruleset.create({}, 1 + game % 4, KEY + bytes([game]))
        while not ruleset.finished(state):
            seat = ruleset.to_decide(state)[0]
            ruleset.decide(state, seat, [pick.choice(ruleset.legal_moves(state, seat))])
    assert (round_moves.cache_info().currsize, _round_move_set.cache_info().currsize) == held


def test_every_sheet_in_a_view_shows_its_score_as_score_marks_gives_it(choice):
    state = new(choice, seats=2)
    force_rolls(state, (1, 3, 4, 4, 6))
    choice.decide(state, 0, [Mark(4, ((1, 3), (4, 6)))])
    choice.decide(state, 1, [Mark(1, ((3, 4), (4, 6)))])
    view = msgspec.json.decode(msgspec.json.encode(choice.view(state, 0)))
    for sheet, shown in zip(state.sheets, view["seats"], strict=True):
        assert shown["score"] == msgspec.json.decode(msgspec.json.encode(score_marks(sheet.marks)))
    assert view["seats"][0]["score"]["minus"] == 400  # 4 and 10 marked once each
    assert view["you"]["sheet"]["score"] == view["seats"][0]["score"]
