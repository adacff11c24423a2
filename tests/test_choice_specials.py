"""CHOICE with special cards: every card, the plate, Suppen-Kasper placements, the 7-mark end."""

from __future__ import annotations

import msgspec
import pytest
from choice_helpers import force_rolls

from referee.games import RuleViolation
from referee.rulesets.choice.sheet import FreeThrow, Mark
from referee.rulesets.choice.views import FifthDie
from referee.rulesets.choice_specials.engine import (
    CARDS,
    Fdh,
    Kur,
    Minus1,
    Minus2,
    NullCard,
    SuppenKasper,
)

KEY = b"specials-test-key"


def new(ruleset, seats=1, **options):
    return ruleset.create(options, seats, KEY)


def sheet_with(state, values=(), counts=(), plate=(), cards=CARDS):
    sheet = state.sheets[0]
    sheet.fifth_values, sheet.fifth_counts = list(values), list(counts)
    sheet.plate, sheet.cards = sorted(plate), list(cards)
    return sheet


def refused(ruleset, state, moves, code, seat=0):
    before = msgspec.msgpack.encode(state)
    with pytest.raises(RuleViolation) as caught:
        ruleset.decide(state, seat, moves)
    assert caught.value.code == code, caught.value
    assert msgspec.msgpack.encode(state) == before, "a refused decision changed the state"
    return caught.value


def test_every_seat_starts_with_six_cards_and_an_empty_plate(specials):
    state = new(specials, seats=2)
    for seat in specials.view(state).seats:
        assert seat.cards == list(CARDS) and seat.plate == []


def test_seventh_mark_ends_the_player(specials):
    state = new(specials)
    sheet_with(state, [3], [6])
    force_rolls(state, (3, 1, 1, 2, 2))
    specials.decide(state, 0, [Mark(3, ((1, 1), (2, 2)))])
    assert state.finished and state.sheets[0].fifth_counts == [7]


def test_card_moves_are_listed_after_the_normal_moves(specials):
    state = new(specials)
    sheet_with(state, [1], [1], plate=[1, 2, 3, 4, 5])
    force_rolls(state, (1, 2, 3, 4, 5))
    legal = specials.legal_moves(state, 0)
    kinds = [type(m).__name__ for m in legal]
    first_card = kinds.index("Fdh")
    assert set(kinds[:first_card]) == {"Mark"}
    order = ["Fdh", "NullCard", "Kur", "Minus1", "Minus2", "SuppenKasper"]
    assert [
        k for i, k in enumerate(kinds) if i >= first_card and (i == 0 or kinds[i - 1] != k)
    ] == order


def test_fdh_removes_two_marks_one_pair_and_a_fifth_die(specials):
    state = new(specials)
    sheet_with(state)
    force_rolls(state, (1, 2, 3, 5, 6))
    specials.decide(state, 0, [Fdh((1, 2), (5, 6), fifth=3)])
    sheet = state.sheets[0]
    assert sheet.plate == [1, 2] and sheet.marks[11 - 2] == 1 and sum(sheet.marks) == 1
    assert sheet.fifth_values == [3] and "fdh" not in sheet.cards


def test_fdh_fifth_die_rule_binds_with_three_values(specials):
    state = new(specials)
    sheet_with(state, [4, 5, 6], [1, 1, 1])
    force_rolls(state, (1, 2, 3, 4, 6))
    refused(specials, state, [Fdh((4, 6), (1, 2), fifth=3)], "fifth-die-must-match")
    refused(specials, state, [Fdh((1, 2), (3, 6), set_aside=4)], "free-throw-not-allowed")
    specials.decide(state, 0, [Fdh((1, 2), (3, 6), fifth=4)])


def test_fdh_sets_aside_when_none_of_the_three_is_a_value(specials):
    state = new(specials)
    sheet_with(state, [4, 5, 6], [1, 1, 1])
    force_rolls(state, (1, 2, 3, 4, 6))
    legal = [m for m in specials.legal_moves(state, 0) if isinstance(m, Fdh) and m.remove == (4, 6)]
    assert legal and all(m.set_aside is not None for m in legal)
    specials.decide(state, 0, [Fdh((4, 6), (1, 2), set_aside=3)])
    sheet = state.sheets[0]
    assert sheet.plate == [4, 6] and sheet.free_throws == 1 and sheet.fifth_counts == [1, 1, 1]


def test_fdh_names_exactly_one_of_fifth_and_set_aside(specials):
    state = new(specials)
    sheet_with(state)
    force_rolls(state, (1, 2, 3, 5, 6))
    refused(specials, state, [Fdh((1, 2), (5, 6))], "fifth-or-set-aside")


def test_null_marks_two_pairs_and_plates_the_fifth_die(specials):
    state = new(specials)
    sheet_with(state, [4, 5, 6], [1, 1, 1])
    force_rolls(state, (1, 2, 3, 4, 6))
    specials.decide(state, 0, [NullCard(((1, 2), (3, 4)), 6)])
    sheet = state.sheets[0]
    assert sheet.plate == [6] and sheet.fifth_counts == [1, 1, 1]
    assert sheet.marks[3 - 2] == 1 and sheet.marks[7 - 2] == 1


def test_kur_marks_a_fifth_die_and_plates_four(specials):
    state = new(specials)
    sheet_with(state)
    force_rolls(state, (1, 2, 3, 5, 6))
    specials.decide(state, 0, [Kur(5)])
    sheet = state.sheets[0]
    assert sheet.plate == [1, 2, 3, 6] and sum(sheet.marks) == 0 and sheet.fifth_values == [5]


def test_kur_needs_a_legal_fifth_die(specials):
    state = new(specials)
    sheet_with(state, [4, 5, 6], [1, 1, 1])
    force_rolls(state, (1, 1, 2, 3, 3))
    assert not [m for m in specials.legal_moves(state, 0) if isinstance(m, Kur)]
    refused(specials, state, [Kur(1)], "card-needs-fifth-die")


def test_kur_fifth_die_must_match(specials):
    state = new(specials)
    sheet_with(state, [4, 5, 6], [1, 1, 1])
    force_rolls(state, (1, 1, 2, 3, 4))
    refused(specials, state, [Kur(1)], "fifth-die-must-match")


def test_minus1_refuses_the_roll(specials):
    state = new(specials)
    sheet_with(state)
    force_rolls(state, (1, 2, 3, 5, 6))
    specials.decide(state, 0, [Minus1()])
    sheet = state.sheets[0]
    assert sheet.plate == [1, 2, 3, 5, 6] and sum(sheet.marks) == 0 and sheet.rounds == 1


def test_minus2_removes_a_mark_and_the_value_keeps_its_slot(specials):
    state = new(specials)
    sheet_with(state, [2, 5], [1, 3])
    force_rolls(state, (1, 2, 3, 5, 6))
    specials.decide(state, 0, [Minus2(2)])
    sheet = state.sheets[0]
    assert sheet.fifth_values == [2, 5] and sheet.fifth_counts == [0, 3]
    assert sheet.plate == [1, 2, 3, 5, 6]


def test_minus2_needs_a_marked_value(specials):
    state = new(specials)
    sheet_with(state, [2, 5], [0, 3])
    force_rolls(state, (1, 2, 3, 5, 6))
    assert [m for m in specials.legal_moves(state, 0) if isinstance(m, Minus2)] == [Minus2(5)]
    refused(specials, state, [Minus2(2)], "no-mark-to-remove")
    refused(specials, state, [Minus2(6)], "no-mark-to-remove")


def test_each_card_is_played_once(specials):
    state = new(specials)
    sheet_with(state, cards=[c for c in CARDS if c != "minus1"])
    force_rolls(state, (1, 2, 3, 5, 6))
    assert Minus1() not in specials.legal_moves(state, 0)
    refused(specials, state, [Minus1()], "card-already-used")


def test_suppen_kasper_plays_five_plate_values_and_empties_the_plate(specials):
    state = new(specials)
    sheet_with(state, plate=[1, 1, 2, 4, 6, 6, 6])
    force_rolls(state, (2, 3, 4, 5, 6))
    move = SuppenKasper((1, 1, 4, 6, 6), Mark(4, ((1, 1), (6, 6))))
    assert move in specials.legal_moves(state, 0)
    specials.decide(state, 0, [move])
    assert state.sheets[0].plate == [1, 1, 2, 4, 6, 6, 6], "hidden until the roll is decided"
    own = specials.view(state, 0).you.sheet
    assert own.plate == [] and own.marks["2"] == 1 and own.marks["12"] == 1
    assert own.fifth_dice == [FifthDie(4, 1)] and "suppen_kasper" not in own.cards
    # the extra round did not use up the roll: the seat still decides it
    assert specials.to_decide(state) == [0] and state.progress[0] == 0
    specials.decide(state, 0, [Mark(2, ((3, 4), (5, 6)))])
    assert state.sheets[0].rounds == 2


def test_suppen_kasper_needs_five_plate_dice(specials):
    state = new(specials)
    sheet_with(state, plate=[1, 2, 3, 4])
    force_rolls(state, (2, 3, 4, 5, 6))
    move = SuppenKasper((1, 2, 3, 4, 4), Mark(1, ((2, 3), (4, 4))))
    refused(specials, state, [move], "plate-too-small")


def test_suppen_kasper_eats_only_what_is_on_the_plate(specials):
    state = new(specials)
    sheet_with(state, plate=[1, 2, 3, 4, 5])
    force_rolls(state, (2, 3, 4, 5, 6))
    move = SuppenKasper((1, 2, 3, 4, 6), Mark(1, ((2, 3), (4, 6))))
    refused(specials, state, [move], "dice-not-on-plate")


def test_suppen_kasper_round_allows_no_other_card(specials):
    state = new(specials)
    sheet_with(state, plate=[1, 2, 3, 4, 5])
    force_rolls(state, (2, 3, 4, 5, 6))
    refused(specials, state, [SuppenKasper((1, 2, 3, 4, 5), Minus1())], "one-card-per-round")


def test_suppen_kasper_round_follows_the_fifth_die_rule(specials):
    state = new(specials)
    sheet_with(state, [4, 5, 6], [1, 1, 1], plate=[1, 1, 2, 3, 3])
    force_rolls(state, (2, 3, 4, 5, 6))
    legal = [m for m in specials.legal_moves(state, 0) if isinstance(m, SuppenKasper)]
    assert legal and all(isinstance(m.round, FreeThrow) for m in legal)
    refused(
        specials,
        state,
        [SuppenKasper((1, 1, 2, 3, 3), Mark(2, ((1, 1), (3, 3))))],
        "fifth-die-must-match",
    )


@pytest.mark.parametrize("place", [0, 1, 2])
def test_suppen_kasper_at_each_of_the_k_plus_1_places_of_a_postal_round(specials, place):
    state = new(specials, schedule=[2])
    sheet_with(state, plate=[6, 6, 6, 6, 1])
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    moves = [Mark(1, ((2, 3), (4, 5))), Mark(6, ((2, 2), (3, 3)))]
    moves.insert(place, SuppenKasper((1, 6, 6, 6, 6), Mark(1, ((6, 6), (6, 6)))))
    specials.decide(state, 0, moves)
    sheet = state.sheets[0]
    assert state.batch == 1 and sheet.plate == [] and sheet.rounds == 3
    assert dict(zip(sheet.fifth_values, sheet.fifth_counts, strict=True)) == {1: 2, 6: 1}


def test_suppen_kasper_needs_the_plate_at_its_place_in_the_batch(specials):
    state = new(specials, schedule=[2])
    sheet_with(state, plate=[6, 6, 6])
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    sk = SuppenKasper((2, 3, 5, 6, 6), Mark(2, ((3, 5), (6, 6))))
    # before the -1 round the plate holds 3 dice; after it, 8
    refused(specials, state, [sk, Minus1(), Mark(6, ((2, 2), (3, 3)))], "plate-too-small")
    specials.decide(state, 0, [Minus1(), sk, Mark(6, ((2, 2), (3, 3)))])
    assert state.sheets[0].plate == []


def test_second_suppen_kasper_in_a_batch_is_refused(specials):
    state = new(specials, schedule=[2])
    sheet_with(state, plate=[6] * 10)
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    sk = SuppenKasper((6, 6, 6, 6, 6), Mark(6, ((6, 6), (6, 6))))
    refused(specials, state, [sk, sk], "card-already-used")


def test_plates_and_cards_are_public(specials):
    state = new(specials, seats=2)
    force_rolls(state, (1, 2, 3, 5, 6))
    specials.decide(state, 0, [Minus1()])
    specials.decide(state, 1, [specials.legal_moves(state, 1)[0]])
    seat = specials.view(state, 1).seats[0]
    assert seat.plate == [1, 2, 3, 5, 6] and "minus1" not in seat.cards


def test_timeout_default_is_a_normal_move_never_a_card(specials):
    state = new(specials)
    sheet_with(state, plate=[1, 2, 3, 4, 5])
    specials.timeout(state, 0)
    assert state.sheets[0].cards == list(CARDS)


def test_state_round_trips_with_card_moves_pending(specials):
    state = new(specials, seats=2)
    force_rolls(state, (1, 2, 3, 5, 6))
    specials.decide(state, 0, [Fdh((1, 2), (5, 6), fifth=3)])
    data = msgspec.msgpack.encode(state)
    again = msgspec.msgpack.decode(data, type=specials.State)
    assert again == state and msgspec.msgpack.encode(again) == data
