"""The rules pinned from the rulebook's own numbers, and every refusal a rule can make.

The tables here are read from docs/RULEBOOK.md (or written out from it), never from the
engines' constants, so a slip in a constant fails a test. Every problem code raised in
referee/games/ is asserted below with its message's key facts and its field
(``test_every_code_a_rule_raises_is_asserted_here`` finds the codes in the source).
Issue 40: the mutation score of benchmarks/mutation.py.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import importlib
import json
import random
import re
import typing
from pathlib import Path

import msgspec
import pytest
from choice_helpers import force_rolls

from referee.games import (
    RULESETS,
    GameError,
    InvalidOption,
    Recorder,
    RuleViolation,
    VerifyReport,
    chain_link,
    chain_start,
    get_ruleset,
    new_seed,
    places,
    record_decision,
    verify,
)
from referee.games import dice as dice_module
from referee.games._common import plain
from referee.rulesets.choice.sheet import FreeThrow, Mark, Pass, score_marks
from referee.rulesets.choice_specials.engine import (
    CARDS,
    Fdh,
    Kur,
    Minus1,
    Minus2,
    NullCard,
    SuppenKasper,
)
from referee.rulesets.chopta.scoring import score_area
from referee.rulesets.chopta.state import Place, Swap, swap_takes

ROOT = Path(__file__).resolve().parent.parent
RULEBOOK = " ".join((ROOT / "docs" / "RULEBOOK.md").read_text().split())  # one line
GAMES = ROOT / "referee" / "games"
RULESET_PACKAGES = ROOT / "referee" / "rulesets"
KEY = b"pinned-test-key"


def snapshot(state):
    return msgspec.msgpack.encode(state)


# --- CHOICE scoring: the rulebook's table (RULEBOOK CHOICE §5)


def rulebook_points() -> dict[int, int]:
    table = re.search(r"P = \{([^}]*)\}", RULEBOOK).group(1)
    return {int(s): int(p) for s, p in (pair.split(":") for pair in table.split(","))}


def test_the_rulebook_table_reads_as_written_here():
    assert rulebook_points() == {
        2: 100, 3: 70, 4: 60, 5: 50, 6: 40, 7: 30, 8: 40, 9: 50, 10: 60, 11: 70, 12: 100,
    }  # fmt: skip


def rulebook_sum_points(total: int, marks: int) -> int:
    """RULEBOOK CHOICE §5 in its own words: 0 → 0; 1..4 → −200; 5 → 0; ≥ 6 → (min(n,10)−5)×P."""
    if marks == 0:
        return 0
    if 1 <= marks <= 4:
        return -200
    if marks == 5:
        return 0
    return (min(marks, 10) - 5) * rulebook_points()[total]


@pytest.mark.parametrize("total", range(2, 13))
def test_every_sum_scores_as_the_rulebook_says_for_0_to_12_marks(total):
    for marks in range(13):
        score = score_marks({total: marks})
        expected = rulebook_sum_points(total, marks)
        assert score.total == expected, (total, marks)
        row = score.sums[total - 2]
        assert (row.sum, row.marks, row.points) == (total, marks, expected)
        assert (score.plus, score.minus) == (max(expected, 0), max(-expected, 0))


def test_a_whole_sheet_adds_its_plus_and_minus_columns():
    marks = {2: 6, 3: 7, 4: 3, 5: 5, 6: 8, 7: 10, 8: 1, 9: 11, 10: 6, 11: 2, 12: 9}
    expected = {s: rulebook_sum_points(s, n) for s, n in marks.items()}
    plus = sum(p for p in expected.values() if p > 0)
    minus = -sum(p for p in expected.values() if p < 0)
    for given in (marks, [marks[s] for s in range(2, 13)]):  # a mapping or a list by sum - 2
        score = score_marks(given)
        assert (score.total, score.plus, score.minus) == (plus - minus, plus, minus)
        assert [r.sum for r in score.sums] == list(range(2, 13))


def test_a_view_shows_each_sheets_score_from_the_rulebook_table():
    choice = get_ruleset("choice")
    state = choice.create({}, 2, KEY)
    state.sheets[1].marks = [6, 7, 0, 0, 0, 10, 0, 0, 0, 0, 1]
    shown = msgspec.json.decode(msgspec.json.encode(choice.view(state)))["seats"][1]
    expected = 100 + 2 * 70 + 5 * 30 - 200  # sums 2, 3, 7 and 12
    assert shown["score"]["total"] == expected
    assert shown["marks"] == {
        str(s): n for s, n in zip(range(2, 13), state.sheets[1].marks, strict=True)
    }


# --- end marks (CHOICE §4: the 8th mark; CHOICE with special cards §1: the 7th)


@pytest.mark.parametrize(("ruleset_id", "end"), [("choice", 8), ("choice-specials", 7)])
def test_a_seat_is_done_at_the_rulebooks_end_mark_and_not_before(ruleset_id, end):
    assert f"{'8th' if end == 8 else '**7th**'} mark" in RULEBOOK
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create({}, 2, KEY)
    assert plain(ruleset.view(state))["end_marks"] == end
    for seat, before in ((0, end - 2), (1, end - 1)):
        state.sheets[seat].fifth_values, state.sheets[seat].fifth_counts = [1], [before]
    force_rolls(state, (1, 2, 2, 3, 3))
    ruleset.decide(state, 0, [Mark(1, ((2, 2), (3, 3)))])
    ruleset.decide(state, 1, [Mark(1, ((2, 2), (3, 3)))])
    assert [s.done for s in state.sheets] == [False, True]
    assert [s.fifth_counts for s in state.sheets] == [[end - 1], [end]]
    assert not state.finished and ruleset.to_decide(state) == [0]


# --- CHOPTA: the swap table, pools and defaults (RULEBOOK CHOPTA §1, §2, §5)


def rulebook_swaps() -> dict[int, tuple[int, ...]]:
    found = re.findall(r"v = (\d) takes (?:only )?w (≤|=) (\d)", RULEBOOK)
    table = {}
    for v, relation, w in found:
        table[int(v)] = tuple(range(1, int(w) + 1)) if relation == "≤" else (int(w),)
    return table


def test_the_swap_table_is_the_rulebooks():
    table = rulebook_swaps()
    assert sorted(table) == [1, 2, 3, 4, 5, 6]
    chopta = get_ruleset("chopta")
    for die, takes in table.items():
        assert swap_takes(die) == takes
        state = chopta.create({}, 2, KEY)
        state.pools[0] = [0] * 7
        state.pools[0][die] = 1
        state.areas[1] = [0, 1, 1, 1, 1, 1, 1]
        swaps = [m for m in chopta.legal_moves(state, 0) if isinstance(m, Swap)]
        assert swaps == [Swap(die, 1, w) for w in takes]


def test_every_seat_rolls_ten_dice_a_round_and_round_one_starts_with_seat_0():
    assert "each player rolls 10 dice" in RULEBOOK
    chopta = get_ruleset("chopta")
    state = chopta.create({}, 3, KEY)
    view = plain(chopta.view(state, 0))
    assert [s["pool_size"] for s in view["seats"]] == [10, 10, 10]
    assert len(view["you"]["pool"]) == 10 and view["turn"] == 0 and view["first_seat"] == 0
    assert chopta.to_decide(state) == [0]


def test_chopta_options_are_off_by_default_and_the_target_is_50():
    assert "(default 50)" in RULEBOOK and "all off by default" in RULEBOOK
    options = get_ruleset("chopta").options({})
    assert (options.target, options.bonus, options.face_value, options.dice_per_turn) == (
        50,
        False,
        False,
        1,
    )


def test_seat_limits_are_the_rulebooks():
    assert "2..8 players" in RULEBOOK
    limits = {r.id: (r.min_seats, r.max_seats) for r in RULESETS.values()}
    assert limits == {"choice": (1, 64), "choice-specials": (1, 64), "chopta": (2, 8)}
    for ruleset in RULESETS.values():
        for seats in (ruleset.min_seats, ruleset.max_seats):
            assert len(ruleset.totals(ruleset.create({}, seats, KEY))) == seats


@pytest.mark.parametrize("options", [{}, {"bonus": True, "face_value": True}])
def test_an_arrangement_uses_the_areas_dice_in_valid_groups_that_add_up_to_its_points(options):
    """RULEBOOK CHOPTA §3: a set is >= 3 dice of one value, a chain >= 4 consecutive values;
    each die in at most one group. Two chains from different starts included."""
    rnd = random.Random(40)
    areas = [[1, 2, 2, 3, 3, 4, 4, 5], [1, 2, 2, 3, 3, 4, 4, 5, 5], [2, 3, 3, 4, 4, 5, 5, 6]]
    areas += [[rnd.randint(1, 6) for _ in range(rnd.randint(0, 24))] for _ in range(1500)]
    face, bonus = options.get("face_value", False), options.get("bonus", False)
    for area in areas:
        score = score_area(area, **options)
        used = sorted(score.unused + [d for g in score.groups for d in g.dice])
        assert used == sorted(area), area
        for group in score.groups:
            values = sorted(set(group.dice))
            if group.kind == "set":
                assert len(values) == 1 and len(group.dice) >= 3
                minimum = 3
            else:
                assert group.kind == "chain" and len(group.dice) >= 4
                assert group.dice == list(range(values[0], values[-1] + 1))
                minimum = 4
            worth = sum(group.dice) if face else len(group.dice)
            assert group.points == worth + (len(group.dice) - minimum if bonus else 0)
        assert score.points == sum(g.points for g in score.groups), area
    two_starts = score_area([1, 2, 2, 3, 3, 4, 4, 5, 5])
    assert [(g.kind, g.dice) for g in two_starts.groups] == [
        ("chain", [1, 2, 3, 4, 5]),
        ("chain", [2, 3, 4, 5]),
    ]


@pytest.mark.parametrize("ruleset_id", sorted(RULESETS))
def test_every_move_is_a_frozen_struct_that_refuses_unknown_fields(ruleset_id):
    for move_type in typing.get_args(get_ruleset(ruleset_id).Move):
        config = move_type.__struct_config__
        assert config.frozen and config.forbid_unknown_fields, move_type
        assert config.tag is not None


# --- CHOPTA's seq, disclosure, first seat and ranking


def play_round(chopta, state):
    """Default moves until the round changes (or the game ends)."""
    start = state.round
    while not state.finished and state.round == start:
        seat = chopta.to_decide(state)[0]
        chopta.decide(state, seat, chopta.default_moves(state, seat))


def test_chopta_seq_counts_each_seats_decisions_and_all_are_disclosed():
    chopta = get_ruleset("chopta")
    state = chopta.create({"target": 10_000}, 3, KEY)
    played = [0, 0, 0]
    for _ in range(7):
        seat = chopta.to_decide(state)[0]
        assert chopta.must_decide(state, seat)
        assert not any(chopta.must_decide(state, s) for s in range(3) if s != seat)
        chopta.decide(state, seat, chopta.default_moves(state, seat))
        played[seat] += 1
        assert [chopta.seq(state, s) for s in range(3)] == played
        assert [chopta.disclosed(state, s) for s in range(3)] == played
    assert played == [3, 2, 2]


def test_chopta_first_seat_moves_clockwise_each_round():
    chopta = get_ruleset("chopta")
    state = chopta.create({"target": 10_000}, 3, KEY)
    for round_ in range(4):
        view = plain(chopta.view(state))
        assert (view["round"], view["first_seat"], view["turn"]) == (round_, round_ % 3, round_ % 3)
        play_round(chopta, state)


@pytest.mark.parametrize("max_rounds", [1, 4])
def test_max_rounds_is_the_number_of_rounds_played(max_rounds):
    chopta = get_ruleset("chopta")
    state = chopta.create({"target": 10_000, "max_rounds": max_rounds}, 2, KEY)
    for played in range(1, max_rounds + 1):
        assert not state.finished
        play_round(chopta, state)
        assert len(state.history) == played
    assert state.finished


@pytest.mark.parametrize("ruleset_id", ["choice", "chopta"])
def test_the_ranking_is_shown_only_once_the_game_is_over(ruleset_id):
    ruleset = get_ruleset(ruleset_id)
    options = {"max_rounds": 2} if ruleset_id == "chopta" else {}
    state = ruleset.create(options, 2, KEY)
    while not ruleset.finished(state):
        assert "ranking" not in plain(ruleset.view(state))
        seat = ruleset.to_decide(state)[0]
        ruleset.decide(state, seat, ruleset.default_moves(state, seat))
    view = plain(ruleset.view(state))
    assert view["finished"] and view["ranking"] == places(ruleset.totals(state))
    assert ruleset.to_decide(state) == [] and not ruleset.must_decide(state, 0)
    if ruleset_id == "chopta":
        assert view["turn"] is None


@pytest.mark.parametrize(
    "pairs",
    [((3, 1), (4, 6)), ((1, 3), (6, 4)), ((4, 6), (1, 3)), ((6, 4), (3, 1))],
    ids=["first pair", "second pair", "pair order", "all three"],
)
@pytest.mark.parametrize("ruleset_id", ["choice", "choice-specials"])
def test_a_move_is_kept_in_its_canonical_form_however_it_was_written(ruleset_id, pairs):
    ruleset, state = choice_state(ruleset_id, roll=(1, 3, 4, 4, 6))
    canonical = Mark(4, ((1, 3), (4, 6)))
    assert ruleset.normalize(Mark(4, pairs)) == canonical
    assert ruleset.normalize(canonical) is canonical
    assert ruleset.normalize(FreeThrow(4, pairs)) == FreeThrow(4, ((1, 3), (4, 6)))
    events = ruleset.decide(state, 0, [Mark(4, pairs)])
    assert events[0]["decisions"] == {"0": [canonical]}
    assert plain(ruleset.view(state))["seats"][0]["marks"]["4"] == 1
    assert plain(ruleset.dice_log(state))[0]["roll"] == 0


def test_a_seat_that_decided_its_postal_round_has_no_legal_move_until_the_next():
    choice = get_ruleset("choice")
    state = choice.create({"schedule": [2]}, 2, KEY)
    choice.decide(state, 0, choice.default_moves(state, 0))
    assert state.progress[0] == len(state.rolls) == 2
    assert choice.legal_moves(state, 0) == [] and not choice.must_decide(state, 0)
    assert choice.to_decide(state) == [1]
    choice.decide(state, 1, choice.default_moves(state, 1))
    assert choice.legal_moves(state, 0) and choice.to_decide(state) == [0, 1]


@pytest.mark.parametrize("ruleset_id", ["choice", "choice-specials"])
def test_a_timeout_writes_each_default_move_of_the_postal_round_on_the_sheet(ruleset_id):
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create({"schedule": [3]}, 1, KEY)
    defaults = ruleset.default_moves(state, 0)
    assert len(defaults) == 3 and all(isinstance(m, Mark) for m in defaults)
    events = ruleset.timeout(state, 0)
    assert events[0]["decisions"] == {"0": defaults}
    sheet = plain(ruleset.view(state))["seats"][0]
    assert sheet["rounds"] == 3 and sum(sheet["marks"].values()) == 6
    assert sum(f["marks"] for f in sheet["fifth_dice"]) == 3
    assert [f["value"] for f in sheet["fifth_dice"]] == list(
        dict.fromkeys(m.fifth for m in defaults)
    )


def test_choice_discloses_a_seats_decisions_at_each_reveal_and_all_at_the_end():
    choice = get_ruleset("choice")
    state = choice.create({"schedule": [2]}, 2, KEY)
    assert [choice.disclosed(state, s) for s in (0, 1)] == [0, 0]
    choice.decide(state, 0, choice.default_moves(state, 0)[:1])
    choice.decide(state, 0, choice.default_moves(state, 0))
    assert [choice.seq(state, s) for s in (0, 1)] == [2, 0]
    assert [choice.disclosed(state, s) for s in (0, 1)] == [0, 0]
    choice.decide(state, 1, choice.default_moves(state, 1))  # the batch is revealed
    assert [choice.disclosed(state, s) for s in (0, 1)] == [2, 1]
    choice.decide(state, 0, choice.default_moves(state, 0))
    assert [choice.seq(state, s) for s in (0, 1)] == [3, 1]
    assert [choice.disclosed(state, s) for s in (0, 1)] == [2, 1]
    state.revealed = []  # a game stored before reveals were counted discloses nothing
    assert choice.disclosed(state, 0) == 0
    state.finished = True
    assert [choice.disclosed(state, s) for s in (0, 1)] == [3, 1]


# --- options and seeds


@pytest.mark.parametrize("ruleset_id", sorted(RULESETS))
def test_options_may_be_none_a_dict_or_the_options_struct(ruleset_id):
    ruleset = get_ruleset(ruleset_id)
    default = ruleset.Options()
    assert ruleset.options(None) == default == ruleset.options({})
    given = msgspec.structs.replace(
        default, **({"target": 7} if ruleset_id == "chopta" else {"schedule": (3, 1)})
    )
    assert ruleset.options(given) is given
    assert ruleset.create(None, ruleset.min_seats, KEY).options == default
    assert ruleset.create(given, ruleset.min_seats, KEY).options is given


def test_a_seed_is_32_fresh_bytes_and_its_commitment_its_sha256():
    seeds = {new_seed() for _ in range(4)}
    assert len(seeds) == 4 and {len(s) for s in seeds} == {32}
    seed = seeds.pop()
    assert dice_module.commitment(seed) == hashlib.sha256(seed).hexdigest()


@pytest.mark.parametrize("length", [1, 63, 64, 65, 200])
def test_dice_from_keys_of_any_length_are_hmac_sha256(length):
    key = bytes(range(length % 256)) * (length // 256) + bytes(range(length % 256))
    key = (key + b"k" * length)[:length]
    stream = b"".join(hmac.new(key, f"pos/{j}".encode(), "sha256").digest() for j in range(4))
    faces = bytes(b % 6 + 1 for b in stream if b < 252)
    for count in (0, 1, 31, 32, 33, 64, 90):
        if count <= len(faces):
            assert dice_module.faces(key, "pos", count) == faces[:count]
            assert dice_module.roll(key, "pos", count) == tuple(faces[:count])


def test_the_dice_key_mixes_client_seeds_with_hmac():
    seed = b"s" * 32
    mixed = hmac.digest(seed, b"client-seeds\x00a\x00bc", "sha256")
    assert dice_module.dice_key(seed, ["a", "bc"]) == mixed
    assert dice_module.dice_key(seed, []) == seed == dice_module.dice_key(seed)


def test_the_pad_cache_keeps_4096_keys_then_starts_again_with_the_same_dice():
    first = dice_module.faces(b"bounded-0", "x", 12)
    dice_module._PADS.clear()
    for n in range(4096):
        dice_module.faces(f"bounded-{n}".encode(), "x", 1)
    assert len(dice_module._PADS) == 4096
    dice_module.faces(b"one-more", "x", 1)
    assert list(dice_module._PADS) == [b"one-more"]
    assert dice_module.faces(b"bounded-0", "x", 12) == first


def test_every_test_has_a_time_limit(request):
    """pytest-timeout is loaded and its limit set (pyproject.toml): a looping rule fails."""
    assert float(request.config.getini("timeout")) == 900
    assert request.config.getini("timeout_method") == "signal"


# --- the record's hash chain, from its documented form (referee/games/record.py)


def test_the_chain_starts_from_the_commitment_and_hashes_each_parts_length_and_bytes():
    commitment = "ab" * 32
    start = hashlib.sha256(b"referee-record\0" + commitment.encode()).digest()
    assert chain_start(commitment) == start
    parts = [b"decision", b"", b"event-1"]
    framed = b"".join(len(p).to_bytes(4, "big") + p for p in parts)
    assert chain_link(start, parts[0], parts[1:]) == hashlib.sha256(start + framed).digest()
    assert record_decision(1, 2, [Place(3)], True, 1.5) == msgspec.json.encode(
        {"seat": 1, "seq": 2, "moves": [{"type": "place", "die": 3}], "timeout": True, "at": 1.5}
    )


# --- public surfaces


@pytest.mark.parametrize(
    "module",
    sorted(
        "referee.games" + ("" if p.stem == "__init__" else f".{p.stem}") for p in GAMES.glob("*.py")
    ),
)
def test_each_rules_module_names_its_public_surface(module):
    imported = importlib.import_module(module)
    names = imported.__all__
    assert names and len(set(names)) == len(names)
    for name in names:
        assert hasattr(imported, name), name


def test_a_die_is_1_to_6_when_a_move_is_read():
    for ruleset in RULESETS.values():
        move_type = list[ruleset.Move]
        for bad in (0, 7):
            body = (
                [{"type": "place", "die": bad}]
                if ruleset.id == "chopta"
                else [{"type": "mark", "fifth": bad, "pairs": [[1, 2], [3, 4]]}]
            )
            with pytest.raises(msgspec.ValidationError, match=r"Expected `int` >= 1|<= 6"):
                msgspec.convert(body, move_type)


# --- every refusal: its code, its field, and its message's key facts


def choice_state(ruleset_id="choice", seats=1, values=(), counts=(), roll=None, **options):
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create(options, seats, KEY)
    sheet = state.sheets[0]
    sheet.fifth_values, sheet.fifth_counts = list(values), list(counts)
    if roll:
        force_rolls(state, roll)
    return ruleset, state


def specials_state(values=(), counts=(), plate=(), cards=CARDS, roll=(1, 2, 3, 5, 6)):
    ruleset, state = choice_state("choice-specials", values=values, counts=counts, roll=roll)
    state.sheets[0].plate, state.sheets[0].cards = sorted(plate), list(cards)
    return ruleset, state


def chopta_state(pool=(), areas=None, seats=2):
    ruleset = get_ruleset("chopta")
    state = ruleset.create({}, seats, KEY)
    if pool:
        state.pools[0] = [0] * 7
        for d in pool:
            state.pools[0][d] += 1
    for seat, dice in (areas or {}).items():
        state.areas[seat] = [0] * 7
        for d in dice:
            state.areas[seat][d] += 1
    return ruleset, state


def finished_choice():
    ruleset, state = choice_state(values=[1], counts=[7], roll=(1, 2, 2, 3, 3))
    ruleset.decide(state, 0, [Mark(1, ((2, 2), (3, 3)))])
    return ruleset, state


def finished_chopta():
    ruleset = get_ruleset("chopta")
    state = ruleset.create({"max_rounds": 1}, 2, KEY)
    play_round(ruleset, state)
    return ruleset, state


def done_seat_of_two():
    ruleset, state = choice_state(seats=2, values=[1], counts=[7], roll=(1, 2, 2, 3, 3))
    ruleset.decide(state, 0, [Mark(1, ((2, 2), (3, 3)))])
    ruleset.decide(state, 1, ruleset.default_moves(state, 1))
    return ruleset, state


def two_rolls(moves_count):
    ruleset, state = choice_state(schedule=[1])
    force_rolls(state, (1, 2, 3, 4, 5))
    return ruleset, state, [Mark(1, ((2, 3), (4, 5)))] * moves_count


# (case, make(): (ruleset, state, call), code, field, facts in the message)
REFUSALS = [
    # CHOICE (RULEBOOK CHOICE §2, §3; the turn and batch rules)
    (
        "pass closes a postal round only for a sheet that is complete (docs/RULES.md)",
        lambda: (*choice_state(roll=(1, 3, 4, 4, 6), schedule=[2]), [Pass()]),
        "illegal-move",
        None,
        ["pass closes a postal round only", "complete"],
    ),
    (
        "a move must use every die of the roll once",
        lambda: (*choice_state(roll=(1, 3, 4, 4, 6)), [Mark(4, ((1, 3), (4, 5)))]),
        "dice-not-in-roll",
        None,
        ["uses dice 1,3,4,4,5", "the roll is 1,3,4,4,6", "every die once"],
    ),
    (
        "with three values the fifth die must be a shown one",
        lambda: (
            *choice_state(values=[2, 4, 5], counts=[1, 1, 1], roll=(1, 2, 3, 3, 6)),
            [Mark(3, ((1, 2), (3, 6)))],
        ),
        "fifth-die-must-match",
        None,
        ["values are 2,4,5", "the dice show 2", "not 3"],
    ),
    (
        "with none of the three values shown the roll is a free throw",
        lambda: (
            *choice_state(values=[2, 4, 5], counts=[1, 1, 1], roll=(1, 3, 3, 6, 6)),
            [Mark(1, ((3, 3), (6, 6)))],
        ),
        "fifth-die-must-match",
        None,
        ["values are 2,4,5", "show none of them", "free throw", "1 cannot be marked"],
    ),
    (
        "a free throw needs three values",
        lambda: (
            *choice_state(values=[2], counts=[1], roll=(1, 3, 3, 6, 6)),
            [FreeThrow(1, ((3, 3), (6, 6)))],
        ),
        "free-throw-not-allowed",
        None,
        ["all three fifth-die values"],
    ),
    (
        "no free throw when a value shows",
        lambda: (
            *choice_state(values=[2, 4, 5], counts=[1, 1, 1], roll=(1, 2, 3, 3, 6)),
            [FreeThrow(1, ((2, 3), (3, 6)))],
        ),
        "free-throw-not-allowed",
        None,
        ["the dice show 2", "mark it as fifth die"],
    ),
    (
        "a free throw, too, uses every die of the roll once",
        lambda: (
            *choice_state(values=[2, 4, 5], counts=[1, 1, 1], roll=(1, 3, 3, 6, 6)),
            [FreeThrow(1, ((3, 3), (6, 1)))],
        ),
        "dice-not-in-roll",
        None,
        ["uses dice 1,1,3,3,6", "the roll is 1,3,3,6,6"],
    ),
    (
        "at least one move",
        lambda: (*choice_state(), []),
        "no-moves",
        "moves",
        ["at least one move"],
    ),
    (
        "no move after the one that finished the seat",
        lambda: (
            *choice_state(values=[1], counts=[7], roll=(1, 2, 2, 3, 3)),
            [Mark(1, ((2, 2), (3, 3)))] * 2,
        ),
        "player-finished",
        "moves[1]",
        ["move 1: ", "finished its game"],
    ),
    (
        "no more moves than the postal round has rolls",
        lambda: two_rolls(2),
        "batch-complete",
        "moves[1]",
        ["move 1: ", "has 1 roll(s)"],
    ),
    (
        "a batch names its bad move",
        lambda: (*batch_of_two(), [Mark(1, ((2, 3), (4, 5))), Mark(6, ((2, 3), (4, 5)))]),
        "dice-not-in-roll",
        "moves[1]",
        ["move 1: the move uses dice"],
    ),
    (
        "a finished game takes no decision",
        lambda: (*finished_choice(), [Mark(1, ((2, 2), (3, 3)))]),
        "game-over",
        None,
        ["the game is over"],
    ),
    (
        "a seat that finished its game decides no more",
        lambda: (*done_seat_of_two(), [Mark(1, ((2, 2), (3, 3)))]),
        "not-your-turn",
        None,
        ["seat 0 has finished its game"],
    ),
    (
        "a seat that decided its rolls waits for the others",
        lambda: (*decided_seat(), [Mark(1, ((2, 2), (3, 3)))]),
        "not-your-turn",
        None,
        ["seat 0 has decided every roll", "waiting for the other seats"],
    ),
    (
        "something that is no CHOICE move",
        lambda: (*choice_state(), [Place(1)]),
        "unknown-move",
        "type",
        ["Place is not a move of choice"],
    ),
    # CHOICE with special cards (RULEBOOK §2, §3)
    (
        "each card once",
        lambda: (*specials_state(cards=[c for c in CARDS if c != "kur"]), [Kur(1)]),
        "card-already-used",
        None,
        ["the card kur was already played"],
    ),
    (
        "Suppen-Kasper needs five dice on the plate",
        lambda: (
            *specials_state(plate=[1, 2, 3, 4]),
            [SuppenKasper((1, 2, 3, 4, 4), Mark(1, ((2, 3), (4, 4))))],
        ),
        "plate-too-small",
        None,
        ["needs 5 dice", "it holds 4"],
    ),
    (
        "Suppen-Kasper eats only plate dice",
        lambda: (
            *specials_state(plate=[1, 1, 2, 3, 4, 5]),
            [SuppenKasper((1, 2, 3, 4, 6), Mark(1, ((2, 3), (4, 6))))],
        ),
        "dice-not-on-plate",
        "eat",
        ["the plate holds 1,1,2,3,4,5", "cannot give 1,2,3,4,6"],
    ),
    (
        "no other card in the Suppen-Kasper round",
        lambda: (*specials_state(plate=[1, 2, 3, 4, 5]), [SuppenKasper((1, 2, 3, 4, 5), Minus1())]),
        "one-card-per-round",
        "round",
        ["no other card"],
    ),
    (
        "the Suppen-Kasper round follows the fifth-die rule",
        lambda: (
            *specials_state(values=[2, 4, 6], counts=[1, 1, 1], plate=[1, 2, 3, 4, 5]),
            [SuppenKasper((1, 2, 3, 4, 5), Mark(1, ((2, 3), (4, 5))))],
        ),
        "fifth-die-must-match",
        None,
        ["values are 2,4,6", "the dice show 2,4", "not 1"],
    ),
    (
        "FdH names a fifth die or a set-aside one, not both",
        lambda: (*specials_state(), [Fdh((1, 2), (3, 5), fifth=6, set_aside=6)]),
        "fifth-or-set-aside",
        None,
        ["exactly one of fifth and set_aside"],
    ),
    (
        "FdH names a fifth die or a set-aside one, not neither",
        lambda: (*specials_state(), [Fdh((1, 2), (3, 5))]),
        "fifth-or-set-aside",
        None,
        ["exactly one of fifth and set_aside"],
    ),
    (
        "Null's pairs use the roll's dice",
        lambda: (*specials_state(), [NullCard(((1, 4), (3, 5)), 6)]),
        "dice-not-in-roll",
        None,
        ["uses dice 1,3,4,5,6", "the roll is 1,2,3,5,6"],
    ),
    (
        "Null's plate die is one of the roll",
        lambda: (*specials_state(), [NullCard(((1, 2), (3, 5)), 4)]),
        "dice-not-in-roll",
        None,
        ["uses dice 1,2,3,4,5", "the roll is 1,2,3,5,6"],
    ),
    (
        "FdH uses the roll's dice",
        lambda: (*specials_state(), [Fdh((1, 2), (3, 4), fifth=6)]),
        "dice-not-in-roll",
        None,
        ["uses dice 1,2,3,4,6", "the roll is 1,2,3,5,6"],
    ),
    (
        "FdH's fifth die follows the fifth-die rule",
        lambda: (
            *specials_state(values=[3, 4, 5], counts=[1, 1, 1]),
            [Fdh((1, 5), (3, 6), fifth=2)],
        ),
        "fifth-die-must-match",
        None,
        ["values are 3,4,5", "only 3 may be marked", "not 2"],
    ),
    (
        "FdH sets a die aside only when none of the three is a value",
        lambda: (
            *specials_state(values=[3, 4, 5], counts=[1, 1, 1]),
            [Fdh((1, 5), (3, 6), set_aside=2)],
        ),
        "free-throw-not-allowed",
        None,
        ["(one of 3)", "not set aside"],
    ),
    (
        "KUR needs a legal fifth die",
        lambda: (
            *specials_state(values=[2, 4, 5], counts=[1, 1, 1], roll=(1, 3, 3, 6, 6)),
            [Kur(1)],
        ),
        "card-needs-fifth-die",
        None,
        ["KUR needs a legal fifth die"],
    ),
    (
        "KUR's fifth die is one of the roll",
        lambda: (*specials_state(), [Kur(4)]),
        "dice-not-in-roll",
        None,
        ["uses dice 4", "the roll is 1,2,3,5,6"],
    ),
    (
        "KUR's fifth die follows the fifth-die rule",
        lambda: (
            *specials_state(values=[2, 4, 5], counts=[1, 1, 1], roll=(1, 2, 3, 4, 6)),
            [Kur(1)],
        ),
        "fifth-die-must-match",
        None,
        ["one of 2,4", "not 1"],
    ),
    (
        "−2 needs a marked value",
        lambda: (*specials_state(values=[2, 5], counts=[0, 3]), [Minus2(2)]),
        "no-mark-to-remove",
        "value",
        ["marked fifth-die values (5)", "not 2"],
    ),
    (
        "−2 with no marked value at all",
        lambda: (*specials_state(), [Minus2(3)]),
        "no-mark-to-remove",
        "value",
        ["(none)", "not 3"],
    ),
    (
        "something that is no move of the specials",
        lambda: (*specials_state(), [Swap(6, 1, 1)]),
        "unknown-move",
        "type",
        ["Swap is not a move of choice-specials"],
    ),
    # CHOPTA (RULEBOOK CHOPTA §2)
    (
        "a die from the pool",
        lambda: (*chopta_state(pool=[1, 2]), [Place(6)]),
        "die-not-in-pool",
        "die",
        ["your pool holds [1, 2]", "no 6"],
    ),
    (
        "a swap with yourself",
        lambda: (*chopta_state(pool=[6], areas={0: [2]}, seats=3), [Swap(6, 0, 2)]),
        "invalid-opponent",
        "opponent",
        ["another seat (0..2, not yourself)"],
    ),
    (
        "a swap with a seat that is not there",
        lambda: (*chopta_state(pool=[6]), [Swap(6, 2, 2)]),
        "invalid-opponent",
        "opponent",
        ["(0..1, not yourself)"],
    ),
    (
        "a 1 takes only a 6",
        lambda: (*chopta_state(pool=[1], areas={1: [1, 6]}), [Swap(1, 1, 1)]),
        "swap-not-allowed",
        "take",
        ["a 1 may take a 6, not a 1"],
    ),
    (
        "a 4 takes 1..3",
        lambda: (*chopta_state(pool=[4], areas={1: [4]}), [Swap(4, 1, 4)]),
        "swap-not-allowed",
        "take",
        ["a 4 may take 1..3, not a 4"],
    ),
    (
        "the taken die must be in the opponent's area",
        lambda: (*chopta_state(pool=[6], areas={1: [6]}), [Swap(6, 1, 2)]),
        "die-not-in-area",
        "take",
        ["seat 1's play area has no 2"],
    ),
    (
        "one die per decision",
        lambda: (*chopta_state(pool=[1, 2]), [Place(1), Place(2)]),
        "one-move-per-decision",
        "moves",
        ["exactly one die"],
    ),
    (
        "no decision is none",
        lambda: (*chopta_state(pool=[1, 2]), []),
        "one-move-per-decision",
        "moves",
        ["exactly one die"],
    ),
    (
        "something that is no CHOPTA move",
        lambda: (*chopta_state(), [Mark(1, ((2, 3), (4, 5)))]),
        "unknown-move",
        None,
        ["Mark is not a CHOPTA move"],
    ),
    (
        "a finished CHOPTA game takes no decision",
        lambda: (*finished_chopta(), [Place(1)]),
        "game-over",
        None,
        ["the game is over"],
    ),
]


def batch_of_two():
    ruleset, state = choice_state(schedule=[2])
    force_rolls(state, (1, 2, 3, 4, 5), (2, 2, 3, 3, 6))
    return ruleset, state


def decided_seat():
    ruleset, state = choice_state(seats=2, roll=(1, 2, 2, 3, 3))
    ruleset.decide(state, 0, [Mark(1, ((2, 2), (3, 3)))])
    return ruleset, state


@pytest.mark.parametrize(
    ("make", "code", "field", "facts"),
    [pytest.param(*case[1:], id=case[0]) for case in REFUSALS],
)
def test_a_refusal_names_its_rule_and_field_and_changes_nothing(make, code, field, facts):
    ruleset, state, moves = make()
    before = snapshot(state)
    with pytest.raises(RuleViolation) as caught:
        ruleset.decide(state, 0, moves)
    refusal = caught.value
    assert (refusal.code, refusal.field) == (code, field), refusal
    for fact in facts:
        assert fact in refusal.message, (fact, refusal.message)
    assert str(refusal) == refusal.message
    assert repr(refusal) == f"RuleViolation({code!r}, {refusal.message!r})"
    assert snapshot(state) == before, "a refused decision changed the state"


def test_chopta_refuses_the_seat_whose_turn_it_is_not():
    chopta, state = chopta_state()
    before = snapshot(state)
    with pytest.raises(RuleViolation) as caught:
        chopta.decide(state, 1, [Place(state.pools[1].index(next(c for c in state.pools[1] if c)))])
    assert caught.value.code == "not-your-turn"
    assert caught.value.message == "it is seat 0's turn, not seat 1's"
    with pytest.raises(RuleViolation) as caught:
        chopta.default_moves(state, 1)
    assert (caught.value.code, caught.value.message) == (
        "not-your-turn",
        "it is not seat 1's turn",
    )
    with pytest.raises(RuleViolation, match="it is not seat 1's turn"):
        chopta.timeout(state, 1)
    assert chopta.legal_moves(state, 1) == []
    assert snapshot(state) == before


SEAT_CALLS = {
    "decide": lambda r, s, seat: r.decide(s, seat, r.legal_moves(s, 1)[:1]),
    "legal_moves": lambda r, s, seat: r.legal_moves(s, seat),
    "default_moves": lambda r, s, seat: r.default_moves(s, seat),
    "timeout": lambda r, s, seat: r.timeout(s, seat),
    "seat_view": lambda r, s, seat: r.seat_view(s, seat),
    "view": lambda r, s, seat: r.view(s, seat),
}


@pytest.mark.parametrize("call", sorted(SEAT_CALLS))
@pytest.mark.parametrize("ruleset_id", sorted(RULESETS))
def test_a_seat_that_is_not_there_is_refused_as_no_such_seat(ruleset_id, call):
    ruleset = get_ruleset(ruleset_id)
    state = ruleset.create({}, 2, KEY)
    if ruleset_id == "chopta":
        state.turn = 1  # the last seat's turn: every call below is its to make
    before = snapshot(state)
    for seat in (2, 3, -1, "0", 1.0):
        with pytest.raises(RuleViolation) as caught:
            SEAT_CALLS[call](ruleset, state, seat)
        refusal = caught.value
        assert (refusal.code, refusal.field) == ("no-such-seat", "seat")
        assert refusal.message == f"there is no seat {seat}"
    assert snapshot(state) == before
    assert SEAT_CALLS[call](ruleset, state, 1) is not None  # the last seat is a seat


OPTION_REFUSALS = [
    ("choice", {"schedule": [0]}, "options.schedule[0]", [">= 1"]),
    ("choice", {"schedule": []}, "options.schedule", ["length >= 1"]),
    ("choice-specials", {"speed": 2}, "options.speed", ["unknown field `speed`"]),
    ("chopta", {"target": 0}, "options.target", [">= 1"]),
    ("chopta", {"dice_per_turn": 3}, "options.dice_per_turn", ["<= 2"]),
    ("chopta", {"bonus": "yes"}, "options.bonus", ["Expected `bool`"]),
    ("chopta", [1], "options", ["Expected `object`"]),
]


@pytest.mark.parametrize(("ruleset_id", "options", "field", "facts"), OPTION_REFUSALS)
def test_a_bad_option_is_refused_naming_it(ruleset_id, options, field, facts):
    with pytest.raises(InvalidOption) as caught:
        get_ruleset(ruleset_id).create(options, 2, KEY)
    refusal = caught.value
    assert (refusal.code, refusal.field) == ("invalid-option", field)
    assert refusal.message.startswith(f"{field}: ")
    for fact in facts:
        assert fact in refusal.message, refusal.message


# (ruleset, option, the limits it takes, one past each limit): the contract's documented ranges
OPTION_LIMITS = [
    ("choice", "schedule", [[1], [20], [1] * 64], [[0], [21], [1] * 65]),
    ("chopta", "target", [1, 10_000], [0, 10_001]),
    ("chopta", "dice_per_turn", [1, 2], [0, 3]),
    ("chopta", "max_rounds", [1, 1_000], [0, 1_001]),
]


@pytest.mark.parametrize(("ruleset_id", "name", "taken", "refused"), OPTION_LIMITS)
def test_an_option_takes_its_limits_and_nothing_past_them(ruleset_id, name, taken, refused):
    ruleset = get_ruleset(ruleset_id)
    for value in taken:
        options = ruleset.create({name: value}, 2, KEY).options
        assert msgspec.json.decode(msgspec.json.encode(options))[name] == value
    for value in refused:
        with pytest.raises(InvalidOption) as caught:
            ruleset.create({name: value}, 2, KEY)
        assert caught.value.field.startswith(f"options.{name}")


def test_a_swap_names_one_of_eight_seats():
    chopta = get_ruleset("chopta")
    for opponent in (0, 7):
        move = msgspec.convert({"type": "swap", "die": 6, "opponent": opponent, "take": 1}, Swap)
        assert move == Swap(6, opponent, 1)
    for opponent in (-1, 8):
        with pytest.raises(msgspec.ValidationError, match="opponent"):
            msgspec.convert(
                {"type": "swap", "die": 6, "opponent": opponent, "take": 1}, chopta.Move
            )


@pytest.mark.parametrize(
    ("ruleset_id", "seats", "message"),
    [
        ("choice", 0, "choice is played by 1..64 seats, not 0"),
        ("choice-specials", 65, "choice-specials is played by 1..64 seats, not 65"),
        ("chopta", 1, "chopta is played by 2..8 seats, not 1"),
        ("chopta", 9, "chopta is played by 2..8 seats, not 9"),
        ("chopta", "2", "chopta is played by 2..8 seats, not 2"),
    ],
)
def test_a_seat_count_out_of_range_is_refused_naming_the_range(ruleset_id, seats, message):
    with pytest.raises(InvalidOption) as caught:
        get_ruleset(ruleset_id).create({}, seats, KEY)
    assert (caught.value.code, caught.value.field, caught.value.message) == (
        "invalid-seat-count",
        "seats",
        message,
    )


def test_an_unknown_ruleset_is_refused_naming_the_known_ones():
    with pytest.raises(InvalidOption) as caught:
        get_ruleset("yahtzee")
    assert (caught.value.code, caught.value.field) == ("unknown-ruleset", "ruleset")
    assert caught.value.message == (
        "unknown ruleset 'yahtzee'; choose one of choice, choice-specials, chopta"
    )
    assert isinstance(caught.value, GameError)


# Codes raised in referee/games/ and the rulesets' packages that no input can reach (none
# now: illegal-move, a safety net behind the diagnoses of a move, is also what an early
# pass gets).
UNREACHABLE: set[str] = set()


def codes_raised_in_games() -> set[str]:
    codes = set()
    for path in [*GAMES.glob("*.py"), *RULESET_PACKAGES.rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"RuleViolation", "InvalidOption", "GameError"}
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                codes.add(node.args[0].value)
    return codes


def test_every_code_a_rule_raises_is_asserted_here():
    asserted = {case[2] for case in REFUSALS} | {"no-such-seat", "not-your-turn"}
    asserted |= {"invalid-option", "invalid-seat-count", "unknown-ruleset"}
    raised = codes_raised_in_games()
    assert len(raised) > 20, "the search for raised codes found too few"
    assert raised - UNREACHABLE <= asserted, sorted(raised - UNREACHABLE - asserted)
    assert raised >= UNREACHABLE, "a code listed as unreachable is no longer raised"


# --- the record's verification: each problem it can find, in its words


SEED = bytes(range(32))


def recorded(ruleset_id="choice", seats=1, options=None, timeouts=()):
    """A game played through a Recorder: the first legal move each time, deadlines at the
    decisions numbered in ``timeouts``."""
    ruleset = get_ruleset(ruleset_id)
    recorder = Recorder(ruleset, options or {}, [f"bot{i}" for i in range(seats)], SEED)
    count = 0
    while not ruleset.finished(recorder.state):
        seat = ruleset.to_decide(recorder.state)[0]
        if count in timeouts:
            events = recorder.timeout(seat, at=2.0)
        else:
            events = recorder.decide(seat, ruleset.legal_moves(recorder.state, seat)[:1])
            assert events == [] or events[0]["type"] in ("rolls_decided", "played")
        count += 1
    return json.loads(msgspec.json.encode(recorder.record))


def test_a_recorders_decision_answers_the_rulesets_events():
    chopta = get_ruleset("chopta")
    recorder = Recorder(chopta, {}, ["a", "b"], SEED)
    move = chopta.legal_moves(recorder.state, 0)[0]
    assert recorder.decide(0, [move]) == [
        {"type": "played", "seat": 0, "move": msgspec.to_builtins(move)}
    ]
    assert recorder.timeout(1)[0] == {"type": "timeout", "seat": 1, "retired": False}


def verified(record, *args, **kwargs):
    return verify(json.dumps(record).encode(), *args, **kwargs)


def test_a_played_record_verifies_and_a_published_chain_may_be_upper_case():
    record = recorded(timeouts=(2,))
    assert verified(record) == VerifyReport(True, [], [])
    assert verified(record, None, record["chain"].upper()).ok


def edit(path_and_value):
    def change(record):
        *path, last = path_and_value[0]
        target = record
        for key in path:
            target = target[key]
        target[last] = path_and_value[1]

    return change


def drop_last_decision(record):
    record["decisions"].pop()


def default_moves_changed(record):
    decision = record["decisions"][2]
    assert decision["timeout"]
    decision["moves"] = [{"type": "mark", "fifth": 6, "pairs": [[6, 6], [6, 6]]}]


def unordered_pairs(record):
    move = record["decisions"][0]["moves"][0]
    move["pairs"] = [move["pairs"][1], move["pairs"][0]]


# (case, change to a played CHOICE record with a timeout at decision 2, problem's words)
VERIFY_PROBLEMS = [
    ("not a record", lambda r: r.update(ruleset=5), "the record is malformed: Expected `str`"),
    ("no seed", lambda r: r.update(seed=None), "no seed: the game is not over"),
    ("a seed that is not hex", lambda r: r.update(seed="zz"), "the seed is not hex"),
    (
        "another seed",
        lambda r: r.update(seed="00" * 32),
        "SHA-256 of the seed does not match the commitment",
    ),
    (
        "options the game cannot take",
        lambda r: r.update(options={"schedule": [0]}),
        "the game cannot be created: options.schedule[0]",
    ),
    (
        "a seq ahead of the seat's",
        edit((["decisions", 1, "seq"], 2)),
        "decision 1 (seat 0, seq 2): the seat's seq is 1",
    ),
    (
        "a seq behind the seat's",
        edit((["decisions", 1, "seq"], 0)),
        "decision 1 (seat 0, seq 0): the seat's seq is 1",
    ),
    ("a deadline's moves changed", default_moves_changed, "decision 2 (seat 0, seq 2): the def"),
    ("pairs out of order", unordered_pairs, "decision 0 (seat 0, seq 0): the moves are not in"),
    (
        "a move the rules refuse",
        edit((["decisions", 0, "moves"], [{"type": "free_throw", "set_aside": 1, "pairs": []}])),
        "decision 0 (seat 0, seq 0): refused on replay: ",
    ),
    (
        "no chain on a finished record",
        lambda r: r.update(chain=None),
        "the record carries no chain: its decisions cannot be checked",
    ),
    (
        "an edited chain",
        lambda r: r.update(chain="00" * 32),
        "do not hash to the record's chain: the record was edited",
    ),
    ("a decision short", drop_last_decision, "the replayed game is not over"),
    ("an edited die", edit((["dice", 0, "roll"], 1)), "the recorded dice differ from the dice"),
    ("an edited total", edit((["totals", 0], 12345)), "the totals replay as ["),
    ("an edited ranking", edit((["ranking", 0], 2)), "the ranking replays as [1]"),
    ("an edited final sheet", edit((["final", 0, "rounds"], 0)), "seat 0's final figures replay"),
    ("a final sheet too many", lambda r: r["final"].append({}), "has final figures for 2 seats"),
    ("no final sheet", lambda r: r.update(final=[]), "the record has final figures for 0 seats"),
    (
        "over, but said not to be",
        lambda r: r.update(finished=False),
        "the record says the game is not over, but its decisions end it",
    ),
]


@pytest.mark.parametrize(
    ("change", "problem"), [pytest.param(*case[1:], id=case[0]) for case in VERIFY_PROBLEMS]
)
def test_verify_names_what_does_not_replay(change, problem):
    record = recorded(timeouts=(2,))
    change(record)
    report = verified(record)
    assert not report.ok
    assert any(problem in p for p in report.problems), report.problems


def test_a_published_chain_that_differs_is_a_problem():
    report = verified(recorded(), None, "00" * 32)
    assert report.problems == ["the decisions do not hash to the chain the referee published"]


def test_a_record_of_a_game_not_over_verifies_as_a_prefix_and_says_so():
    full = recorded("chopta", 2, {"max_rounds": 1})
    ruleset = get_ruleset("chopta")
    recorder = Recorder(ruleset, {"max_rounds": 1}, ["bot0", "bot1"], SEED)
    for _ in range(5):
        seat = ruleset.to_decide(recorder.state)[0]
        recorder.decide(seat, ruleset.legal_moves(recorder.state, seat)[:1])
    prefix = json.loads(msgspec.json.encode(recorder.record))
    assert prefix["decisions"] == full["decisions"][:5]
    report = verified(prefix, SEED)
    assert report.ok and report.notes == [
        "a prefix: 5 decisions replayed; the game was not over when the record was taken, so "
        "no dice, totals or final figures were compared"
    ]
    prefix["chain"] = None
    report = verified(prefix, SEED.hex())
    assert report.ok and report.notes[0].startswith("the record carries no chain (it holds")
