"""Properties of Liar's dice under random legal play (hypothesis), as the referee's own
rulesets are checked (its tests/test_properties.py): play ends, the legal list is exactly what
``decide`` accepts, views keep each seat's dice to itself, and records verify."""

from __future__ import annotations

import json

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import UNSET
from referee_liars_dice import Bid, Liar, LiarsDiceRuleset, bid_rank
from referee_liars_dice.rules import SeatDice

from referee.games import GameError, Recorder, verify

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

options = st.fixed_dictionaries(
    {
        "dice_per_seat": st.integers(1, 5),
        "bidding_rule": st.sampled_from(["reset-face", "reset-quantity"]),
    }
)
games = st.tuples(st.integers(2, 8), options, st.binary(min_size=1, max_size=16))


def copy(liars, state):
    return msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=liars.State)


def random_play(liars, state, rnd, on_step=None, call=0.1):
    """Random legal play, a call ``call`` of the time when one is legal (else a random raise:
    a uniform pick among hundreds of bids would race to the top bid)."""
    for _ in range(1 + len(state.seqs) * state.options.dice_per_seat * 6):
        seats = liars.to_decide(state)
        assert [s for s in range(len(state.seqs)) if liars.must_decide(state, s)] == seats
        if not seats:
            return
        (seat,) = seats
        legal = liars.legal_moves(state, seat)
        if on_step:
            on_step(state, seat, legal)
        bids = [m for m in legal if isinstance(m, Bid)]
        if rnd.random() < 0.05:
            liars.timeout(state, seat)
        elif not bids or rnd.random() < call:
            liars.decide(state, seat, [legal[0]])
        else:
            liars.decide(state, seat, [rnd.choice(bids[:12])])
    raise AssertionError("play went on past the top bid")


@PROPERTY
@given(game=games, rnd=st.randoms(use_true_random=False))
def test_play_ends_with_one_winner_and_one_loser(game, rnd):
    liars = LiarsDiceRuleset()
    seats, opts, key = game
    state = liars.create(opts, seats, key)
    random_play(liars, state, rnd)
    assert liars.finished(state) and liars.to_decide(state) == []
    totals = liars.totals(state)
    assert sorted(totals) == [-1] + [0] * (seats - 2) + [1]
    call = state.call
    assert call.caller == (call.bidder + 1) % seats  # the next seat calls
    matching = sum(d in (call.face, 6) for dice in state.dice for d in dice)
    assert call.matches == matching
    assert (totals[call.bidder] == 1) == (matching >= call.quantity)
    ranking = liars.ranking(state)
    assert all(
        ranking[a] < ranking[b] for a in range(seats) for b in range(seats) if totals[a] > totals[b]
    )


@PROPERTY
@given(game=games, rnd=st.randoms(use_true_random=False), data=st.data())
def test_the_legal_list_is_exactly_what_decide_accepts(game, rnd, data):
    liars = LiarsDiceRuleset()
    seats, opts, key = game
    state = liars.create(opts, seats, key)
    total = seats * opts["dice_per_seat"]
    candidates = [Liar()] + [Bid(q, f) for q in range(0, total + 2) for f in range(0, 8)]

    def check(state, seat, legal):
        if rnd.random() > 0.3:
            return
        assert legal and len(set(legal)) == len(legal)
        assert all(isinstance(m, Bid) for m in legal[1:]), "liar, if legal, comes first"
        ranks = [bid_rank(m.quantity, m.face, total, opts["bidding_rule"]) for m in legal[1:]]
        assert ranks == sorted(set(ranks)), "bids from the lowest up"
        before = msgspec.msgpack.encode(state)
        for move in [*candidates, *data.draw(st.lists(st.sampled_from(candidates), max_size=3))]:
            listed = liars.normalize(move) in legal
            try:
                liars.decide(copy(liars, state), seat, [move])
                accepted = True
            except GameError:
                accepted = False
            assert accepted == listed, f"{move}: listed={listed} accepted={accepted}"
        for other in range(seats):
            if other != seat:
                try:
                    liars.decide(state, other, legal[:1])
                except GameError as refusal:
                    assert refusal.code == "not-your-turn"
                else:
                    raise AssertionError("a seat decided out of turn")
        assert msgspec.msgpack.encode(state) == before, "a refused decision changed the state"

    random_play(liars, state, rnd, check)


@PROPERTY
@given(game=games, rnd=st.randoms(use_true_random=False))
def test_no_view_shows_another_seats_dice_before_the_call(game, rnd):
    liars = LiarsDiceRuleset()
    seats, opts, key = game
    state = liars.create(opts, seats, key)

    def check(state, seat, legal):
        public = liars.view(state)
        assert all(s.dice is UNSET for s in public.seats)  # absent until the call
        for viewer in range(seats):
            view = liars.view(state, viewer)
            fields = msgspec.structs.asdict(view)
            assert fields == {
                **msgspec.structs.asdict(public),
                "you": liars.seat_view(state, viewer),
            }
            assert view.you == SeatDice(viewer, state.dice[viewer])
            assert msgspec.json.encode(view).count(b'"dice":[') == 1

    random_play(liars, state, rnd, check)


@settings(PROPERTY, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(game=games, rnd=st.randoms(use_true_random=False), seed=st.binary(min_size=32, max_size=32))
def test_a_record_verifies_and_an_edited_one_does_not(registered, game, rnd, seed):
    """``verify`` finds the ruleset in the registry by id (the fixture puts it there once for
    every example, which is all it does)."""
    liars = registered
    seats, opts, _ = game
    recorder = Recorder(liars, opts, [f"p{s}" for s in range(seats)], seed, ["a client seed"])
    while not liars.finished(recorder.state):
        (seat,) = liars.to_decide(recorder.state)
        if rnd.random() < 0.1:
            recorder.timeout(seat, at=1.0)
        else:
            legal = liars.legal_moves(recorder.state, seat)
            bids = [m for m in legal if isinstance(m, Bid)]
            move = legal[0] if not bids or rnd.random() < 0.15 else rnd.choice(bids[:12])
            recorder.decide(seat, [move], at=2.0)
    record = json.loads(msgspec.json.encode(recorder.record))
    report = verify(record)
    assert report.ok, report.problems
    assert [d["dice"] for d in record["dice"]] == [
        list(d) for d in (liars.dice_log(recorder.state)[s].dice for s in range(seats))
    ]
    edited = json.loads(json.dumps(record))
    edited["dice"][0]["dice"][0] = edited["dice"][0]["dice"][0] % 6 + 1
    assert not verify(edited).ok
    if len(record["decisions"]) > 1:
        edited = json.loads(json.dumps(record))
        edited["decisions"][0]["at"] = 3.0
        assert not verify(edited).ok
