"""Tournament schedules and standings (pure)."""

from __future__ import annotations

import msgspec
import pytest

from referee.tournaments import (
    GameResult,
    TournamentSpec,
    next_round,
    spec_problem,
    standings,
    total_rounds,
)


def spec(**kw):
    return msgspec.convert({"ruleset": "choice", **kw}, TournamentSpec)


def test_round_robin_meets_every_pair_and_rotates_seats():
    s = spec(entrants=4, games_per_pairing=2)
    first, second = next_round(s, [], 0), next_round(s, [], 1)
    assert sorted(tuple(sorted(t)) for t in first) == [
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 2),
        (1, 3),
        (2, 3),
    ]
    assert [t[::-1] for t in first] == second
    assert next_round(s, [], 2) == [] and total_rounds(s) == 2


def test_round_robin_tables_of_three():
    tables = next_round(spec(entrants=4, table_size=3), [], 0)
    assert len(tables) == 4 and all(len(t) == 3 for t in tables)


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
