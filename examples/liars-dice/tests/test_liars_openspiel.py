"""OpenSpiel's ``liars_dice`` as the oracle: the same dice and the same decisions give the same
legal moves, whose turn, what each player knows (its information state) and the same returns.
OpenSpiel's game is registered for 2 players, so the oracle covers 2 seats; the engine's own
tests cover 3..8."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from referee_liars_dice import Bid, Liar, LiarsDiceRuleset, bid_rank

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel's wheel (open-spiel, the test extra) is not installed"
)


def action(move, total, rule):
    """The OpenSpiel action of a move: its bid's rank, or ``total * 6`` for liar."""
    return total * 6 if isinstance(move, Liar) else bid_rank(move.quantity, move.face, total, rule)


def information_state(liars, state, seat):
    """OpenSpiel's information state string, from what the referee shows the seat: its own
    dice (``you``) and the public bids (and the call)."""
    view = liars.view(state, seat)
    text = "".join(str(d) for d in view.you.dice)
    text += "".join(f" {bid.quantity}-{bid.face}" for bid in view.bids)
    return text + (" Liar" if view.call else "")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dice=st.integers(1, 5),
    rule=st.sampled_from(["reset-face", "reset-quantity"]),
    key=st.binary(min_size=1, max_size=16),
    rnd=st.randoms(use_true_random=False),
)
def test_the_engine_plays_as_openspiel(dice, rule, key, rnd):
    liars = LiarsDiceRuleset()
    state = liars.create({"dice_per_seat": dice, "bidding_rule": rule}, 2, key)
    total = 2 * dice
    game = pyspiel.load_game("liars_dice", {"numdice": dice, "bidding_rule": rule})
    oracle = game.new_initial_state()
    for rolled in liars.dice_log(state):  # the referee's dice, as chance outcomes
        for face in rolled.dice:
            assert oracle.is_chance_node()
            oracle.apply_action(face - 1)
    while not oracle.is_terminal():
        seat = oracle.current_player()
        assert liars.to_decide(state) == [seat]
        legal = liars.legal_moves(state, seat)
        assert sorted(action(m, total, rule) for m in legal) == oracle.legal_actions()
        for player in (0, 1):
            assert information_state(liars, state, player) == oracle.information_state_string(
                player
            )
        bids = [m for m in legal if isinstance(m, Bid)]
        move = legal[0] if not bids or rnd.random() < 0.15 else rnd.choice(bids[:8])
        liars.decide(state, seat, [move])
        oracle.apply_action(action(move, total, rule))
    assert liars.finished(state)
    assert liars.totals(state) == [int(r) for r in oracle.returns()]
    for player in (0, 1):
        assert information_state(liars, state, player) == oracle.information_state_string(player)
