"""Reference bots: always a legal move, for every ruleset; stronger bots score better."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import msgspec
import pytest

from referee.bots import bot_names, get_bot
from referee.games import RULESETS, get_ruleset
from referee.games._common import plain

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from bots import play


@pytest.mark.parametrize(
    ("ruleset_id", "seats", "options"),
    [("choice", 2, {}), ("choice-specials", 2, {"schedule": [1]}), ("chopta", 3, {"target": 20})],
)
@pytest.mark.parametrize("bot_name", ["random", "greedy", "strong"])
def test_bots_always_choose_a_listed_move(ruleset_id, seats, options, bot_name):
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create(options, seats, b"bots-test")
    bots = [get_bot(ruleset_id, bot_name, seat) for seat in range(seats)]
    while not ruleset.finished(state):
        for seat in ruleset.to_decide(state):
            legal = msgspec.to_builtins(ruleset.legal_moves(state, seat))
            move = bots[seat]({"legal_moves": legal, "view": plain(ruleset.view(state, seat))})
            assert move in legal
            ruleset.decide(state, seat, [msgspec.convert(move, ruleset.Move)])


def test_every_ruleset_has_the_three_reference_bots():
    assert {name: set(bot_names(name)) for name in RULESETS} == {
        r: {"random", "greedy", "strong"} for r in ("choice", "choice-specials", "chopta")
    }


def test_stronger_choice_bots_score_better_on_the_same_seeds():
    means = {
        name: statistics.fmean(play("choice", name, seed) for seed in range(120))
        for name in ("random", "greedy", "strong")
    }
    assert means["random"] < means["greedy"] < means["strong"], means
