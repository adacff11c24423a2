"""Properties of every ruleset under random legal play (hypothesis)."""

from __future__ import annotations

import json
from functools import cache
from itertools import combinations, permutations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import GameError, get_ruleset
from referee.games._common import plain
from referee.rulesets.choice.sheet import POINTS, FreeThrow, Mark
from referee.rulesets.choice_specials.engine import Fdh, Kur, Minus1, Minus2, NullCard, SuppenKasper
from referee.rulesets.chopta.scoring import score_area
from referee.rulesets.chopta.state import Place, Swap

MAX_DECISIONS = 20_000
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

die = st.integers(1, 6)
pair = st.tuples(die, die)
pairs = st.tuples(pair, pair)
choice_moves = st.one_of(
    st.builds(Mark, die, pairs),
    st.builds(FreeThrow, die, pairs),
)
card_moves = st.one_of(
    st.builds(Fdh, pair, pair, st.none() | die, st.none() | die),
    st.builds(NullCard, pairs, die),
    st.builds(Kur, die),
    st.just(Minus1()),
    st.builds(Minus2, die),
    st.builds(
        SuppenKasper,
        st.tuples(die, die, die, die, die),
        st.one_of(choice_moves, st.builds(Kur, die), st.just(Minus1())),
    ),
)
chopta_moves = st.one_of(st.builds(Place, die), st.builds(Swap, die, st.integers(0, 7), die))

games = st.one_of(
    st.tuples(
        st.just("choice"),
        st.integers(1, 4),
        st.sampled_from([{}, {"schedule": [2]}, {"schedule": [4, 4, 4, 3, 3, 3, 2, 2, 2, 1]}]),
    ),
    st.tuples(
        st.just("choice-specials"),
        st.integers(1, 3),
        st.sampled_from([{}, {"schedule": [2]}, {"schedule": [3, 1]}]),
    ),
    st.tuples(
        st.just("chopta"),
        st.integers(2, 5),
        st.fixed_dictionaries(
            {
                "bonus": st.booleans(),
                "face_value": st.booleans(),
                "dice_per_turn": st.integers(1, 2),
                "target": st.integers(10, 60),
            }
        ),
    ),
)


def copy(ruleset, state):
    return msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=ruleset.State)


def moves_from(dice, cards):
    """Every way to write a move (legal or not) that uses exactly these dice."""
    out = set()
    for p in set(permutations(dice)):
        pairs = ((p[1], p[2]), (p[3], p[4]))
        out |= {Mark(p[0], pairs), FreeThrow(p[0], pairs)}
        if cards:
            out |= {
                Fdh((p[0], p[1]), (p[2], p[3]), fifth=p[4]),
                Fdh((p[0], p[1]), (p[2], p[3]), set_aside=p[4]),
                NullCard(((p[0], p[1]), (p[2], p[3])), p[4]),
            }
    if cards:
        out |= {Kur(v) for v in range(1, 7)} | {Minus2(v) for v in range(1, 7)} | {Minus1()}
    return out


def exhaustive_candidates(ruleset, state, seat):
    """Near-legal candidates around the seat's actual position, where rule checks matter."""
    if ruleset.id == "chopta":
        return {Place(v) for v in range(1, 7)} | {
            Swap(v, o, w) for v in range(1, 7) for o in range(8) for w in range(1, 7)
        }
    cards = ruleset.id == "choice-specials"
    out = moves_from(state.rolls[state.progress[seat]], cards)
    if cards:
        draft = state.drafts[seat] or state.sheets[seat]
        for eat in sorted(set(combinations(sorted(draft.plate), 5)))[:3]:
            out |= {SuppenKasper(eat, m) for m in moves_from(eat, False)}
    return out


def score_by_hand(marks):
    """The CHOICE score written out from RULES.md §5 once more, independently of the engine."""
    total = 0
    for s, n in zip(range(2, 13), marks, strict=True):
        if 1 <= n <= 4:
            total -= 200
        elif n >= 6:
            total += (min(n, 10) - 5) * POINTS[s]
    return total


def random_play(ruleset, state, rnd, on_step=None):
    for _ in range(MAX_DECISIONS):
        seats = ruleset.to_decide(state)
        everyone = range(len(state.seqs))
        assert [s for s in everyone if ruleset.must_decide(state, s)] == seats
        if not seats:
            return
        seat = rnd.choice(seats)
        legal = ruleset.legal_moves(state, seat)
        if on_step:
            on_step(state, seat, legal)
        if rnd.random() < 0.03:
            ruleset.timeout(state, seat)
        else:
            ruleset.decide(state, seat, [rnd.choice(legal)])
    raise AssertionError("random legal play did not finish")


@PROPERTY
@given(game=games, seed=st.binary(min_size=1, max_size=16), rnd=st.randoms(use_true_random=False))
def test_random_legal_play_terminates_and_scores_equal_recomputation(game, seed, rnd):
    ruleset_id, seats, options = game
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create(options, seats, seed)
    random_play(ruleset, state, rnd)
    assert ruleset.finished(state) and ruleset.to_decide(state) == []
    totals = ruleset.totals(state)
    if ruleset_id == "chopta":
        assert totals == [sum(r[s] for r in state.history) for s in range(seats)]
        assert max(totals) >= options["target"] or len(state.history) == 100
    else:
        assert totals == [score_by_hand(sheet.marks) for sheet in state.sheets]
        end = 8 if ruleset_id == "choice" else 7
        for sheet in state.sheets:
            assert sheet.retired or max(sheet.fifth_counts) == end
            assert len(sheet.fifth_values) <= 3
    ranking = ruleset.ranking(state)
    assert all(
        ranking[a] < ranking[b] for a in range(seats) for b in range(seats) if totals[a] > totals[b]
    )


@PROPERTY
@given(
    game=games,
    seed=st.binary(min_size=1, max_size=16),
    rnd=st.randoms(use_true_random=False),
    data=st.data(),
)
def test_the_legal_list_is_exactly_what_decide_accepts(game, seed, rnd, data):
    ruleset_id, seats, options = game
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create(options, seats, seed)
    if ruleset_id == "chopta":
        candidates = chopta_moves
    elif ruleset_id == "choice":
        candidates = choice_moves
    else:
        candidates = st.one_of(choice_moves, card_moves)
    checks = {"n": 0}

    def check(state, seat, legal):
        if checks["n"] >= 4 or rnd.random() > 0.2:
            return
        checks["n"] += 1
        assert legal, "a seat asked to decide must have a legal move"
        assert len(set(legal)) == len(legal), "the legal list has duplicates"
        for move in legal:
            assert ruleset.normalize(move) == move, "listed moves are canonical"
            ruleset.decide(copy(ruleset, state), seat, [move])
        before = msgspec.msgpack.encode(state)
        drawn = data.draw(st.lists(candidates, min_size=5, max_size=15))
        for move in [*exhaustive_candidates(ruleset, state, seat), *drawn]:
            listed = ruleset.normalize(move) in legal
            try:
                ruleset.decide(copy(ruleset, state), seat, [move])
                accepted = True
            except GameError as refused:
                accepted = False
                assert refused.code != "illegal-move", f"no rule named for {move}"
            assert accepted == listed, f"{move}: listed={listed} accepted={accepted}"
        for other in range(seats):
            if other not in ruleset.to_decide(state):
                try:
                    ruleset.decide(state, other, legal[:1])
                except GameError as refused:
                    assert refused.code in {"not-your-turn"}
                else:
                    raise AssertionError("a seat decided out of turn")
        assert msgspec.msgpack.encode(state) == before, "a refused decision changed the state"

    random_play(ruleset, state, rnd, check)


@PROPERTY
@given(
    seats=st.integers(2, 6),
    seed=st.binary(min_size=1, max_size=16),
    rnd=st.randoms(use_true_random=False),
)
def test_no_seat_view_contains_another_seats_pool(seats, seed, rnd):
    ruleset = get_ruleset("chopta")
    state = ruleset.create({}, seats, seed)

    def check(state, seat, legal):
        public = plain(ruleset.view(state))
        assert "you" not in public
        assert all("pool" not in s for s in public["seats"])
        for viewer in range(seats):
            view = plain(ruleset.view(state, viewer))
            assert all("pool" not in s for s in view["seats"])
            pool = view["you"]["pool"]
            assert view["you"]["seat"] == viewer
            assert sorted(pool) == sorted(
                v for v in range(1, 7) for _ in range(state.pools[viewer][v])
            )
            assert json.dumps(view).count('"pool"') == 1

    random_play(ruleset, state, rnd, check)


@PROPERTY
@given(
    seats=st.integers(2, 4),
    ruleset_id=st.sampled_from(["choice", "choice-specials"]),
    seed=st.binary(min_size=1, max_size=16),
    rnd=st.randoms(use_true_random=False),
)
def test_choice_decisions_stay_hidden_until_the_roll_is_decided_by_all(
    seats, ruleset_id, seed, rnd
):
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create({}, seats, seed)

    def check(state, seat, legal):
        committed = [list(sheet.marks) for sheet in state.sheets]
        for viewer in [None, *range(seats)]:
            view = plain(ruleset.view(state, viewer))
            shown = [[s["marks"][str(k)] for k in range(2, 13)] for s in view["seats"]]
            assert shown == committed
            if viewer is not None:
                assert view["you"]["decisions"] == json.loads(
                    msgspec.json.encode(state.pending[viewer])
                )

    random_play(ruleset, state, rnd, check)


@cache
def best_sets(count, value, bonus, face):
    """Best score of ``count`` dice of one value split into sets of 3+ or left out."""
    best = 0
    for size in range(3, count + 1):
        worth = size * (value if face else 1) + (size - 3 if bonus else 0)
        best = max(best, worth + best_sets(count - size, value, bonus, face))
    return best


CHAINS = [(a, b) for a in range(1, 7) for b in range(a + 3, 7)]


def brute_force(area, bonus, face):
    counts = [area.count(v) for v in range(7)]
    best = 0

    def search(index, counts, points):
        nonlocal best
        if index == len(CHAINS):
            rest = sum(best_sets(counts[v], v, bonus, face) for v in range(1, 7))
            best = max(best, points + rest)
            return
        search(index + 1, counts, points)
        a, b = CHAINS[index]
        values = range(a, b + 1)
        if all(counts[v] for v in values):
            after = list(counts)
            for v in values:
                after[v] -= 1
            worth = (sum(values) if face else len(values)) + (len(values) - 4 if bonus else 0)
            search(index, after, points + worth)

    search(0, counts, 0)
    return best


@settings(max_examples=300, deadline=None)
@given(area=st.lists(die, max_size=30), bonus=st.booleans(), face=st.booleans())
def test_chopta_arrangement_equals_brute_force_optimum(area, bonus, face):
    score = score_area(area, bonus=bonus, face_value=face)
    assert score.points == brute_force(area, bonus, face)
    used = sorted([d for g in score.groups for d in g.dice] + score.unused)
    assert used == sorted(area)
    for group in score.groups:
        if group.kind == "set":
            assert len(group.dice) >= 3 and len(set(group.dice)) == 1
        else:
            assert len(group.dice) >= 4 and group.dice == list(
                range(group.dice[0], group.dice[-1] + 1)
            )
    assert sum(g.points for g in score.groups) == score.points


@PROPERTY
@given(
    ruleset_id=st.sampled_from(["choice", "choice-specials", "chopta"]),
    seats=st.integers(2, 4),
    seed=st.binary(min_size=1, max_size=16),
    rnd=st.randoms(use_true_random=False),
)
def test_a_seats_view_is_the_public_view_and_its_seat_view(ruleset_id, seats, seed, rnd):
    """The service builds the public part once for every seat reading the same form."""
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create({}, seats, seed)

    def check(state, seat, legal):
        public = plain(ruleset.view(state))
        for viewer in range(seats):
            assert plain(ruleset.view(state, viewer)) == {
                "ruleset": ruleset_id,
                **public,
                "you": plain(ruleset.seat_view(state, viewer)),
            }
        assert plain(ruleset.view(state)) == public, "a seat's view changed the public one"

    random_play(ruleset, state, rnd, check)
