"""What keeps one client from using up the referee: every key it writes expires, quotas and
rate limits shared through Redis, caps on what one address may hold open."""

from __future__ import annotations

from helpers import auth, create


def test_every_key_of_a_game_and_a_tournament_expires(http, redis_client):
    """A game without deadlines and a tournament document are dropped once idle, too."""
    game = create(http, "choice", 2, deadline_s=0)
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(game["seats"][0]["token"]))
    move = {"seq": turn.json()["seq"], "move": turn.json()["legal_moves"][0]}
    reply = http.post(
        f"/v1/games/{game['id']}/moves", headers=auth(game["seats"][0]["token"]), json=move
    )
    assert reply.status_code == 200, reply.text
    tournament = http.post(
        "/v1/tournaments", json={"ruleset": "choice", "entrants": 2, "deadline_s": 0}
    ).json()
    http.post(f"/v1/tournaments/{tournament['id']}/entrants", json={"name": "a"})
    keys = [
        *redis_client.scan_iter(match=f"{{game:{game['id']}}}:*"),
        *redis_client.scan_iter(match=f"{{tournament:{tournament['id']}}}:*"),
    ]
    assert len(keys) == 4, keys  # the game's document, decisions and events; the tournament's
    for key in keys:
        assert redis_client.ttl(key) > 0, f"{key!r} never expires"
