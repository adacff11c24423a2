"""The league's pure parts: a game's rating update, outcomes, and the arena's pairing (the
window that widens with waiting, the rematch penalty, even games, alternating first seats)."""

from __future__ import annotations

from referee.core.league import (
    PROVISIONAL_GAMES,
    Rating,
    Seek,
    outcome,
    pair,
    rate_game,
    rating_view,
    seat_order,
)


def _seek(since: float = 0.0, ruleset: str = "r", seats: int = 2, deadline: float = 10.0) -> Seek:
    return Seek(ruleset, seats, deadline, since, since)


def test_a_winner_gains_a_loser_loses_and_both_grow_surer():
    winner, loser = rate_game([Rating(), Rating()], [1, 2])
    assert winner.mu > 25 > loser.mu
    assert winner.sigma < 25 / 3 and loser.sigma < 25 / 3
    assert (winner.wins, winner.losses, loser.wins, loser.losses) == (1, 0, 0, 1)
    drawn = rate_game([Rating(), Rating()], [1, 1])
    assert [r.draws for r in drawn] == [1, 1]
    assert outcome([1, 1, 3], 2) == "loss" and outcome([2, 1], 1) == "win"


def test_a_rating_is_provisional_until_enough_games():
    assert rating_view("r", Rating(games=PROVISIONAL_GAMES - 1))["provisional"]
    shown = rating_view("r", Rating(mu=30, sigma=2, games=PROVISIONAL_GAMES))
    assert not shown["provisional"] and shown["conservative"] == 24


def test_bots_are_paired_with_the_nearest_rating_within_the_window():
    seekers = {k: _seek() for k in "abcd"}
    ratings = {("r", "a"): Rating(mu=20), ("r", "b"): Rating(mu=35), ("r", "c"): Rating(mu=21)}
    ratings[("r", "d")] = Rating(mu=34)
    tables = pair(seekers, ratings, {}, now=0.0)
    assert sorted(map(sorted, tables)) == [["a", "c"], ["b", "d"]]


def test_the_window_widens_the_longer_a_bot_waits():
    seekers = {"a": _seek(), "b": _seek()}
    ratings = {("r", "a"): Rating(mu=20), ("r", "b"): Rating(mu=30)}
    assert pair(seekers, ratings, {}, now=1.0) == []  # 10 apart; the window is 2 + 2
    assert pair(seekers, ratings, {}, now=5.0) == [["a", "b"]]  # 2 + 10


def test_a_rematch_costs_more_than_a_slightly_farther_opponent():
    seekers = {k: _seek() for k in "abc"}
    ratings = {("r", "a"): Rating(mu=25), ("r", "b"): Rating(mu=25.5), ("r", "c"): Rating(mu=26)}
    tables = pair(seekers, ratings, {"a": ["b"], "b": ["a"]}, now=0.0)
    assert tables == [["a", "c"]]


def test_the_bots_with_fewest_games_are_seated_first_and_rulesets_kept_apart():
    seekers = {"a": _seek(), "b": _seek(), "c": _seek(), "x": _seek(ruleset="other")}
    ratings = {("r", "a"): Rating(games=9), ("r", "b"): Rating(games=1), ("r", "c"): Rating()}
    tables = pair(seekers, ratings, {}, now=0.0)
    assert tables == [["c", "b"]]  # a, with the most games, waits; x has no partner


def test_seeks_of_different_deadlines_are_kept_apart():
    """A table took the longest deadline its seeks asked for: an opponent seeking an hour a
    decision held a bot that asked for ten seconds for hours a game."""
    seekers = {"a": _seek(), "b": _seek(deadline=3600.0), "c": _seek(deadline=3600.0)}
    assert pair(seekers, {}, {}, now=0.0) == [["b", "c"]]  # a waits for a 10 s opponent


def test_two_bots_of_one_organizer_share_no_table():
    """An organizer's bots rated against each other would move each other's ratings with
    no contest; bots of others (or no owner given) are paired as before."""
    seekers = {k: _seek() for k in "abcd"}
    ratings = {("r", "a"): Rating(mu=20), ("r", "b"): Rating(mu=20.5)}
    ratings |= {("r", "c"): Rating(mu=21), ("r", "d"): Rating(mu=21.5)}
    owners = {"a": "k1", "b": "k1", "c": "k2", "d": "k2"}
    tables = pair(seekers, ratings, {}, now=0.0, owners=owners)
    assert sorted(map(sorted, tables)) == [["a", "c"], ["b", "d"]]
    assert pair({"a": _seek(), "b": _seek()}, {}, {}, now=0.0, owners={"a": "k", "b": "k"}) == []
    three = {k: _seek(seats=3) for k in "abcd"}
    tables = pair(three, {}, {}, now=0.0, owners={"a": "k1", "b": "k2", "c": "k2", "d": "k3"})
    assert len(tables) == 1 and len({"b", "c"} & set(tables[0])) == 1


def test_first_seats_alternate():
    assert seat_order(["a", "b"], {"a": True, "b": False}) == ["b", "a"]
    assert seat_order(["a", "b"], {"a": False, "b": True}) == ["a", "b"]
