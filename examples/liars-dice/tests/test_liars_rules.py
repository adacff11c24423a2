"""Liar's dice, rule by rule (RULES.md beside the package): named cases of the bidding order,
the wild sixes, the call resolved both ways, and every refusal with its stable code."""

from __future__ import annotations

import json
import random
import tomllib
from pathlib import Path

import msgspec
import pytest
from msgspec import UNSET
from referee_liars_dice import Bid, Liar, bid_rank
from referee_liars_dice.rules import PublicBid, RolledDice, SeatDice

from referee.games import InvalidOption, RuleViolation, roll
from referee.plugins import SURFACE

KEY = b"liars-dice-rules-test-key"
HERE = Path(__file__).resolve().parents[1]


def game(liars, seats=2, bids=(), dice=None, **options):
    """A game where the given bids were made in turn from seat 0 (and, if given, these dice)."""
    state = liars.create(options, seats, KEY)
    if dice is not None:
        state.dice = [sorted(d) for d in dice]
    for quantity, face in bids:
        liars.decide(state, state.turn, [Bid(quantity, face)])
    return state


def refused(liars, state, seat, moves):
    before = msgspec.msgpack.encode(state)
    with pytest.raises(RuleViolation) as refusal:
        liars.decide(state, seat, moves)
    assert msgspec.msgpack.encode(state) == before, "a refused decision changed the state"
    return refusal.value


def test_the_ruleset_has_the_whole_surface_and_its_entry_point_names_it(liars):
    assert [name for name in SURFACE if not hasattr(liars, name)] == []
    project = tomllib.loads((HERE / "pyproject.toml").read_text())
    points = project["project"]["entry-points"]["referee.rulesets"]
    assert points == {"liars-dice": "referee_liars_dice:LiarsDiceRuleset"}
    assert "referee" in project["project"]["dependencies"]
    assert set(liars.bots) == {"random", "greedy", "strong"}


def test_options_default_to_five_dice_and_reset_face_and_refuse_the_unknown(liars):
    assert msgspec.to_builtins(liars.options(None)) == {
        "dice_per_seat": 5,
        "bidding_rule": "reset-face",
    }
    for bad in ({"dice_per_seat": 0}, {"dice_per_seat": 11}, {"bidding_rule": "x"}, {"sides": 4}):
        with pytest.raises(InvalidOption) as refusal:
            liars.create(bad, 2, KEY)
        assert refusal.value.code == "invalid-option"
    for seats in (1, 9):
        with pytest.raises(InvalidOption) as refusal:
            liars.create({}, seats, KEY)
        assert refusal.value.code == "invalid-seat-count"


def test_the_dice_are_the_referees_seeded_dice_at_their_positions(liars):
    state = liars.create({"dice_per_seat": 3}, 4, KEY)
    for seat in range(4):
        rolled = roll(KEY, f"round/0/seat/{seat}", 3)
        assert state.dice[seat] == sorted(rolled)
        assert liars.dice_log(state)[seat] == RolledDice(0, seat, list(rolled))


# bids in order: (last bid, next bid, allowed), 2 seats of 5 dice (10 dice in the game)
RESET_FACE = {
    "a higher quantity of a lower face": ((2, 5), (3, 1), True),
    "the same quantity of a higher face": ((2, 5), (2, 6), True),
    "the same quantity of a lower face": ((2, 5), (2, 4), False),
    "the same bid again": ((2, 5), (2, 5), False),
    "a lower quantity of a higher face": ((3, 1), (2, 6), False),
    "sixes are a face like the others in the order": ((1, 6), (2, 1), True),
}
RESET_QUANTITY = {
    "a higher face of a lower quantity": ((4, 2), (1, 3), True),
    "the same face with a higher quantity": ((4, 2), (5, 2), True),
    "a higher quantity of a lower face": ((4, 2), (9, 1), False),
    "the same bid again": ((4, 2), (4, 2), False),
    "the top quantity of a face, then the next face": ((10, 2), (1, 3), True),
}


@pytest.mark.parametrize(
    ("rule", "case"),
    [("reset-face", name) for name in RESET_FACE]
    + [("reset-quantity", name) for name in RESET_QUANTITY],
)
def test_a_bid_must_beat_the_last_in_the_bidding_rules_order(liars, rule, case):
    last, bid, allowed = (RESET_FACE if rule == "reset-face" else RESET_QUANTITY)[case]
    state = game(liars, bids=[last], bidding_rule=rule)
    if allowed:
        liars.decide(state, 1, [Bid(*bid)])
        assert state.bids[-1] == PublicBid(1, *bid)
    else:
        assert refused(liars, state, 1, [Bid(*bid)]).code == "bid-not-higher"
        assert Bid(*bid) not in liars.legal_moves(state, 1)


def test_the_rank_is_openspiels_action_id():
    assert [bid_rank(q, f, 2, "reset-face") for q, f in [(1, 1), (1, 6), (2, 1), (2, 6)]] == [
        0,
        5,
        6,
        11,
    ]
    assert [bid_rank(q, f, 2, "reset-quantity") for q, f in [(1, 1), (2, 1), (1, 2), (2, 6)]] == [
        0,
        1,
        2,
        11,
    ]


@pytest.mark.parametrize(
    ("bid", "dice", "matches", "bidder_wins"),
    [
        ((3, 4), [[4, 4, 1], [4, 2, 2]], 3, True),  # exactly enough
        ((4, 4), [[4, 4, 1], [4, 2, 2]], 3, False),  # one short
        ((4, 4), [[4, 6, 1], [4, 6, 2]], 4, True),  # sixes are wild: they count as fours
        ((3, 6), [[4, 6, 1], [4, 6, 2]], 2, False),  # a bid on sixes counts only sixes
        ((1, 2), [[1, 1, 1], [3, 3, 5]], 0, False),  # not one
    ],
)
def test_a_call_is_won_by_the_bidder_exactly_when_enough_dice_match(
    liars, bid, dice, matches, bidder_wins
):
    state = game(liars, seats=3, bids=[(1, 1), bid], dice=[*dice, [5, 5, 5]], dice_per_seat=3)
    assert state.turn == 2
    events = liars.decide(state, 2, [Liar()])
    call = state.call
    assert (call.caller, call.bidder, call.matches) == (2, 1, matches)
    winner, loser = (1, 2) if bidder_wins else (2, 1)
    assert (call.winner, call.loser) == (winner, loser)
    # only the seats of the call score: OpenSpiel's returns
    expected = [0, 0, 0]
    expected[winner], expected[loser] = 1, -1
    assert liars.totals(state) == expected
    assert liars.ranking(state) == [2 if s == 0 else (1 if s == winner else 3) for s in range(3)]
    assert liars.finished(state) and liars.to_decide(state) == []
    assert events[-1]["type"] == "round_over" and events[-1]["totals"] == expected


def test_refusals_have_stable_codes_and_change_nothing(liars):
    state = game(liars)  # 10 dice, seat 0 to open
    assert refused(liars, state, 0, [Liar()]).code == "no-bid-to-call"
    assert refused(liars, state, 1, [Bid(1, 1)]).code == "not-your-turn"
    assert refused(liars, state, 0, [Bid(11, 2)]).code == "quantity-out-of-range"
    assert refused(liars, state, 0, [Bid(0, 2)]).code == "quantity-out-of-range"
    assert refused(liars, state, 0, [Bid(1, 7)]).code == "face-out-of-range"
    assert refused(liars, state, 0, [Bid(1, 1), Bid(2, 1)]).code == "one-move-per-decision"
    assert refused(liars, state, 0, []).code == "one-move-per-decision"
    assert refused(liars, state, 0, [PublicBid(0, 1, 1)]).code == "unknown-move"
    assert refused(liars, state, 5, [Bid(1, 1)]).code == "no-such-seat"
    liars.decide(state, 0, [Bid(3, 3)])
    refusal = refused(liars, state, 1, [Bid(3, 2)])
    assert refusal.code == "bid-not-higher" and refusal.field == "quantity"
    liars.decide(state, 1, [Liar()])
    assert refused(liars, state, 0, [Bid(4, 4)]).code == "game-over"
    assert set(liars.codes) >= {"bid-not-higher", "quantity-out-of-range", "no-bid-to-call"}


def test_moves_decode_strictly_from_json(liars):
    decode = msgspec.json.Decoder(liars.Move).decode
    assert decode(b'{"type": "bid", "quantity": 2, "face": 3}') == Bid(2, 3)
    assert decode(b'{"type": "liar"}') == Liar()
    for bad in (
        b'{"type": "bid", "quantity": 2, "face": 3, "extra": 1}',
        b'{"type": "bid", "quantity": 2, "face": 7}',
        b'{"type": "bid", "quantity": 0, "face": 3}',
        b'{"type": "doubt"}',
    ):
        with pytest.raises(msgspec.ValidationError):
            decode(bad)
    assert json.loads(msgspec.json.encode(Bid(2, 3))) == {"type": "bid", "quantity": 2, "face": 3}


def test_legal_moves_put_the_default_first(liars):
    state = game(liars, dice_per_seat=1)  # 2 dice: 12 bids
    opening = liars.legal_moves(state, 0)
    assert opening[0] == Bid(1, 1) and opening[-1] == Bid(2, 6) and len(opening) == 12
    assert liars.legal_moves(state, 1) == []
    liars.decide(state, 0, [Bid(1, 4)])
    assert liars.legal_moves(state, 1)[:3] == [Liar(), Bid(1, 5), Bid(1, 6)]
    assert liars.default_moves(state, 1) == [Liar()]
    liars.decide(state, 1, [Bid(2, 6)])  # the top bid: only a call is left
    assert liars.legal_moves(state, 0) == [Liar()]


def test_a_missed_deadline_opens_with_the_lowest_bid_then_calls(liars):
    state = game(liars)
    events = liars.timeout(state, 0)
    assert events[0] == {"type": "timeout", "seat": 0}
    assert events[1] == {
        "type": "played",
        "seat": 0,
        "move": {"type": "bid", "quantity": 1, "face": 1},
    }
    events = liars.timeout(state, 1)
    assert events[1]["move"] == {"type": "liar"} and liars.finished(state)
    assert [s.timeouts for s in liars.view(state).seats] == [1, 1]
    assert liars.seq(state, 0) == liars.seq(state, 1) == 1
    with pytest.raises(RuleViolation) as refusal:
        liars.default_moves(state, 0)
    assert refusal.value.code == "not-your-turn"


def test_each_seat_sees_its_own_dice_and_everyone_sees_all_once_it_is_over(liars):
    state = game(liars, seats=3, bids=[(2, 3)], dice=[[1, 2], [3, 4], [5, 6]], dice_per_seat=2)
    public = liars.view(state)
    assert not hasattr(public, "you")
    assert [s.dice for s in public.seats] == [UNSET, UNSET, UNSET]  # absent until the call
    assert [s.dice_count for s in public.seats] == [2, 2, 2]
    assert public.bid == PublicBid(0, 2, 3) and public.turn == 1
    for seat in range(3):
        view = liars.view(state, seat)
        assert view.you == SeatDice(seat, state.dice[seat])
        assert msgspec.structs.asdict(view) == {
            **msgspec.structs.asdict(public),
            "you": liars.seat_view(state, seat),
        }
    liars.decide(state, 1, [Liar()])
    over = liars.view(state)
    assert [s.dice for s in over.seats] == [[1, 2], [3, 4], [5, 6]]
    assert over.turn is UNSET and over.ranking == liars.ranking(state)
    assert over.call is not None and over.call.matches == 2  # the 3 and the 6


def _turn(liars, state, seat):
    """The turn as a bot receives it over HTTP: JSON, not the engine's Structs."""
    return json.loads(
        msgspec.json.encode(
            {"legal_moves": liars.legal_moves(state, seat), "view": liars.view(state, seat)}
        )
    )


def play(liars, players, seed, seats=2, **options):
    state = liars.create(options, seats, seed.to_bytes(8, "big"))
    while not liars.finished(state):
        (seat,) = liars.to_decide(state)
        turn = _turn(liars, state, seat)
        move = players[seat](turn)
        assert move in turn["legal_moves"]
        liars.decide(state, seat, [msgspec.convert(move, liars.Move)])
    return state


@pytest.mark.parametrize("name", ["random", "greedy", "strong"])
def test_every_bot_plays_legal_moves_from_the_json_it_receives(liars, name):
    rnd = random.Random(7)
    for game_no in range(30):
        seats = rnd.randint(2, 8)
        players = [liars.bots[name](game_no * 10 + s) for s in range(seats)]
        play(liars, players, game_no, seats, dice_per_seat=rnd.randint(1, 5))


@pytest.mark.parametrize(
    ("better", "worse", "at_least"),
    [("greedy", "random", 150), ("strong", "random", 150), ("strong", "greedy", 101)],
)
def test_each_bot_beats_the_one_below_it_heads_up(liars, better, worse, at_least):
    """Over 200 seeded games (the same every run), seats swapped every other game."""
    wins = 0
    for seed in range(200):
        first = seed % 2
        players = [liars.bots[worse](seed), liars.bots[worse](seed)]
        players[first] = liars.bots[better](seed)
        state = play(liars, players, seed)
        wins += state.call.winner == first
    assert wins >= at_least, f"{better} won {wins} of 200 against {worse}"


def test_a_seat_not_on_turn_has_no_legal_move_before_or_after_the_one_that_is(liars):
    state = game(liars, seats=3, bids=[(1, 2)])  # seat 1 to bid
    assert liars.legal_moves(state, 1)
    assert liars.legal_moves(state, 0) == [] and liars.legal_moves(state, 2) == []


@pytest.mark.parametrize(
    ("rule", "how"),
    [
        ("reset-face", "a higher quantity, or as many of a higher face"),
        ("reset-quantity", "a higher face, or more of the same face"),
    ],
)
def test_a_bid_too_low_says_what_beats_it_under_its_rule(liars, rule, how):
    state = game(liars, bids=[(3, 3)], bidding_rule=rule)
    refusal = refused(liars, state, 1, [Bid(2, 2)])
    assert refusal.code == "bid-not-higher" and f"({rule}: bid {how})" in refusal.message


def test_the_options_are_a_frozen_value(liars):
    options = liars.options({})
    with pytest.raises(AttributeError):
        options.dice_per_seat = 1


def test_the_call_ends_round_zero_of_the_one_round_game(liars):
    state = game(liars, bids=[(1, 2)])
    (over, *_) = [e for e in liars.decide(state, 1, [Liar()]) if e["type"] == "round_over"]
    assert over["round"] == 0 and len(over["dice"]) == 2
