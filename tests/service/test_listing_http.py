"""The games' listing tells a tournament's tables (``tournament``, ``tournament_id``) and
lists one tournament's games alone (``?tournament=``), a page at a time."""

from __future__ import annotations

from helpers import play_tournament, start_tournament
from test_bad_input_http import problem


def test_a_tournaments_tables_are_listed_as_its_own(http):
    spec = {"ruleset": "choice", "entrants": 4, "table_size": 2, "deadline_s": 0}
    tournament_id, tokens = start_tournament(http, spec)
    alone = http.post("/v1/games", json={"ruleset": "choice", "seats": [{"name": "x"}]}).json()
    tables = [
        t["game_id"] for t in http.get(f"/v1/tournaments/{tournament_id}").json()["rounds"][0]
    ]
    assert len(tables) == 2
    listed = {g["id"]: g for g in http.get("/v1/games", params={"limit": 100}).json()["games"]}
    for table in tables:
        assert listed[table]["tournament"] is True
        assert listed[table]["tournament_id"] == tournament_id
    assert listed[alone["id"]]["tournament"] is False
    assert listed[alone["id"]]["tournament_id"] is None
    # its games alone, newest first, a page at a time
    play_tournament(http, tournament_id, tokens)
    view = http.get(f"/v1/tournaments/{tournament_id}").json()
    every = {t["game_id"] for round_ in view["rounds"] for t in round_}
    assert len(every) == 6  # round robin of 4: 3 rounds of 2 tables
    seen, before = [], None
    while True:
        params = {"tournament": tournament_id, "limit": 4, **({"before": before} if before else {})}
        page = http.get("/v1/games", params=params).json()
        seen += page["games"]
        before = page["next"]
        if before is None:
            break
    assert {g["id"] for g in seen} == every and len(seen) == len(every)
    assert all(g["tournament_id"] == tournament_id for g in seen)
    created = [g["created"] for g in seen]
    assert created == sorted(created, reverse=True)


def test_listing_an_unknown_tournaments_games_is_404(http):
    problem(http.get("/v1/games", params={"tournament": "0" * 16}), 404, "tournament-not-found")
    problem(http.get("/v1/games", params={"tournament": "not-an-id"}), 404, "tournament-not-found")
