"""The home page's featured game: the highest-rated when the league rates a running game's
bots, else the closest (the smallest lead in the public view's totals), the newest of equals."""

from __future__ import annotations

from referee.web.featured import Candidate, leader_gap, pick


def _game(game_id: str, gap: int | None = None, rating: float | None = None) -> Candidate:
    return Candidate(game_id, "choice", ["a", "b"], gap, rating)


def test_the_lead_is_told_from_each_seats_total_or_its_scores():
    assert leader_gap({"seats": [{"total": 30}, {"total": 42}, {"total": 12}]}) == 12
    assert leader_gap({"seats": [{"score": {"total": -5}}, {"score": {"total": 5}}]}) == 10
    assert leader_gap({"seats": [{"name": "a"}, {"name": "b"}]}) is None  # sealed, or no totals
    assert leader_gap({"seats": [{"total": 3}]}) is None


def test_the_closest_game_is_featured_and_the_newest_of_equals():
    assert pick([_game("new", 9), _game("mid", 2), _game("old", 2)]) == (_game("mid", 2), "closest")
    assert pick([_game("new"), _game("old", 40)]) == (_game("old", 40), "closest")
    assert pick([_game("new"), _game("old")]) == (_game("new"), "newest")
    assert pick([]) is None


def test_a_game_of_rated_bots_comes_first_the_highest_rated_of_them():
    games = [_game("close", 0), _game("rated", 30, 12.5), _game("best", 80, 20.0)]
    assert pick(games) == (_game("best", 80, 20.0), "rated")
