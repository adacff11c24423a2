"""Tournament schedules and standings (pure)."""

from __future__ import annotations

import msgspec
import pytest

from referee.core.pairing import (
    GameResult,
    TournamentSpec,
    dice_groups,
    next_round,
    ranked,
    rate,
    spec_problem,
    standings,
    total_rounds,
)


def spec(**kw):
    return msgspec.convert({"ruleset": "choice", **kw}, TournamentSpec)


def test_round_robin_meets_every_pair_in_rounds_of_disjoint_tables_and_rotates_seats():
    s = spec(entrants=4, games_per_pairing=2)
    rounds = [next_round(s, [], r) for r in range(total_rounds(s))]
    assert total_rounds(s) == 6 and next_round(s, [], 6) == []
    first_cycle, second_cycle = rounds[:3], rounds[3:]
    met = sorted(tuple(sorted(t)) for tables in first_cycle for t in tables)
    assert met == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    for tables in rounds:  # nobody sits at two tables of a round
        seated = [e for t in tables for e in t]
        assert len(seated) == len(set(seated)) == 4
    assert [[t[::-1] for t in tables] for tables in first_cycle] == second_cycle


def test_round_robin_with_an_odd_count_sits_one_entrant_out_each_round():
    s = spec(entrants=5)
    rounds = [next_round(s, [], r) for r in range(total_rounds(s))]
    assert len(rounds) == 5 and all(len(tables) == 2 for tables in rounds)
    assert len({tuple(sorted(t)) for tables in rounds for t in tables}) == 10


def test_round_robin_tables_of_three():
    s = spec(entrants=6, table_size=3)
    rounds = [next_round(s, [], r) for r in range(total_rounds(s))]
    assert len({tuple(sorted(t)) for tables in rounds for t in tables}) == 20
    assert all(len(tables) == 2 and len({*tables[0], *tables[1]}) == 6 for tables in rounds)


def test_a_schedule_past_the_cap_is_refused_without_listing_it():
    field, sentence = spec_problem(spec(entrants=64, table_size=8))
    assert field == "entrants" and "4,426,165,368 games" in sentence and "4,096" in sentence
    assert spec_problem(spec(entrants=20, table_size=5)) is not None
    assert spec_problem(spec(entrants=64, table_size=2, games_per_pairing=2)) is None


def test_gauntlet_tables_are_dice_groups_of_their_own():
    s = spec(format="gauntlet", entrants=5)
    tables = next_round(s, [], 0)
    assert dice_groups(s, tables) == [0, 1, 2, 3]
    assert dice_groups(spec(entrants=4), next_round(spec(entrants=4), [], 0)) == [0, 0]


def test_standings_kept_round_by_round_equal_standings_rated_at_once():
    results = [
        GameResult(0, [0, 1], [10, 5], [1, 2]),
        GameResult(1, [1, 2], [3, 5], [2, 1]),
        GameResult(2, [0, 2], [3, 3], [1, 1]),
    ]
    kept = rate(3, results[2:], rate(3, results[1:2], rate(3, results[:1])))
    assert ranked(kept) == standings(3, results)


def test_gauntlet_puts_entrant_zero_at_every_table():
    tables = next_round(spec(format="gauntlet", entrants=5), [], 0)
    assert len(tables) == 4 and all(0 in t for t in tables)


def test_swiss_pairs_by_points_without_rematches():
    s = spec(format="swiss", entrants=4, rounds=3)
    first = next_round(s, [], 0)
    assert first == [[0, 1], [2, 3]]
    played = [GameResult(0, [0, 1], [100, -50], [1, 2]), GameResult(0, [2, 3], [10, 20], [2, 1])]
    second = next_round(s, played, 1)
    assert sorted(tuple(sorted(t)) for t in second) == [(0, 3), (1, 2)]


def test_swiss_with_an_odd_count_gives_one_bye():
    tables = next_round(spec(format="swiss", entrants=5), [], 0)
    assert len(tables) == 2 and len({e for t in tables for e in t}) == 4


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "swiss", "table_size": 3}, "table_size must be 2"),
        ({"entrants": 2, "table_size": 3}, "as many entrants"),
    ],
)
def test_specs_whose_fields_do_not_fit_each_other(options, message):
    field, sentence = spec_problem(spec(**options))
    assert field == "table_size" and message in sentence


def test_standings_rate_the_consistent_winner_first():
    results = [
        GameResult(r, [a, b], [10, 0], [1, 2])
        for r in range(3)
        for a, b in [(0, 1), (0, 2), (1, 2)]
    ]
    table = standings(3, results)
    assert [s.entrant for s in table] == [0, 1, 2]
    assert [(s.games, s.wins, s.points) for s in table] == [(6, 6, 60), (6, 3, 30), (6, 0, 0)]
    assert table[0].sigma < 8.333  # uncertainty shrinks with games


def test_shared_places_share_the_rating():
    table = standings(2, [GameResult(0, [0, 1], [5, 5], [1, 1])])
    assert table[0].mu == table[1].mu and all(s.wins == 1 for s in table)
