"""The league over HTTP against a real Valkey of its own: bot accounts and their tokens, the
arena's games reaching bots through /v1/me/next, lifetime ratings settled exactly once (raced
by two services and the server's own sweep), rebuilt to the same numbers, challenges,
quotas, leaderboards and the pages."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
import redis
from conftest import LOADED, ThreadServer
from helpers import auth, wait_until

from referee.core.league import (
    OPEN_CHALLENGES_PER_ORGANIZER,
    BotDoc,
    LeagueGame,
    LogEntry,
    Rating,
    bot_key,
    bot_token_hash,
    decode,
    encode,
    legacy_entrant_token,
    name_looks,
    rate_game,
)
from referee.core.refusals import Refusal
from referee.games import DEFAULT, RULESETS
from referee.service import Services
from referee.service import tournaments as tournaments_module
from referee.settings import key_hashes
from referee.store import open_store
from referee.store.embedded import start_embedded
from referee.store.league import LeagueStore
from referee.tools.arena import play_arena
from referee.web import hot
from referee.web.models import MoveSubmission


@pytest.fixture(scope="module")
def league_valkey(tmp_path_factory):
    server = start_embedded(tmp_path_factory.mktemp("league-valkey"))
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def league(league_valkey):
    with ThreadServer(league_valkey) as running:
        yield running


@pytest.fixture
def client(league):
    with httpx.Client(base_url=league.url, timeout=30) as http:
        yield http


@pytest.fixture
def own_valkey(tmp_path):
    """A Valkey of the test's own: the module's referee pairs every bot of its Valkey and
    holds the matchmaker's lock there."""
    server = start_embedded(tmp_path / "valkey", keep_alive=False)
    yield server.url
    server.stop()


def _bot(client: httpx.Client, name: str) -> str:
    reply = client.post("/v1/bots", json={"name": name, "description": f"the {name} bot"})
    assert reply.status_code == 201, reply.text
    assert reply.headers["location"].startswith("/v1/bots/")
    return reply.json()["token"]


def _bots_of(http: httpx.Client, organizers: dict[str, dict[str, str]]) -> dict[str, str]:
    """Bots made by organizers (name -> the organizer's headers): their tokens by name."""
    tokens = {}
    for name, organizer in organizers.items():
        made = http.post("/v1/bots", json={"name": name}, headers=organizer)
        assert made.status_code == 201, made.text
        tokens[name] = made.json()["token"]
    return tokens


def _challenge_game(client: httpx.Client, names: list[str]) -> list[str]:
    """Two new bots' tokens, the first having challenged the second, who accepted: a game."""
    tokens = [_bot(client, name) for name in names]
    offer = {"opponent": names[1], "ruleset": DEFAULT, "deadline_s": 600, "rated": False}
    challenge = client.post("/v1/challenges", json=offer, headers=auth(tokens[0])).json()
    accepted = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(tokens[1]))
    assert accepted.status_code == 200, accepted.text
    return tokens


@contextlib.contextmanager
def _replicas(
    valkey: str, key: str
) -> Iterator[tuple[ThreadServer, ThreadServer, httpx.Client, httpx.Client]]:
    """Two replicas on one Valkey that take the organizer key ``key``, and a client of each."""
    keys = key_hashes(key)
    with (
        ThreadServer(valkey, organizer_keys=keys) as one,
        ThreadServer(valkey, organizer_keys=keys) as two,
        httpx.Client(base_url=one.url, timeout=30) as first,
        httpx.Client(base_url=two.url, timeout=30) as second,
    ):
        yield one, two, first, second


def _play_one_game(url: str, name: str, token: str, rnd: random.Random) -> int:
    """Seek a game, leave the pool once one is made, and play it out with random legal
    moves; the decisions made."""
    made = 0
    with httpx.Client(base_url=url, timeout=30) as client:
        seek = {"ruleset": DEFAULT, "deadline_s": 30}
        assert client.post("/v1/arena", json=seek, headers=auth(token)).status_code == 200
        stop = time.monotonic() + 60
        while time.monotonic() < stop:
            step = client.get("/v1/me/next", params={"wait": 0.5}, headers=auth(token)).json()
            if step["status"] == "your_turn":
                client.delete("/v1/arena", headers=auth(token))  # one game is enough
                turn = step["turn"]
                reply = client.post(
                    f"/v1/games/{step['game_id']}/moves",
                    headers=auth(step["seat_token"]),
                    json={"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])},
                )
                assert reply.status_code == 200, reply.text
                made += 1
            elif made and not client.get(f"/v1/bots/{name}").json()["playing"]:
                return made
    raise AssertionError(f"{name} did not finish a game")


def test_a_bot_account_its_token_and_its_organizer(client):
    token = _bot(client, "Ada")
    assert token.startswith("bot-")
    again = client.post("/v1/bots", json={"name": "ADA"})
    assert again.status_code == 409 and again.json()["code"] == "bot-name-taken"
    bad = client.post("/v1/bots", json={"name": "a\u200bb"})
    assert bad.status_code == 422 and bad.json()["code"] == "invalid-name"
    assert client.get("/v1/bots/nobody").json()["code"] == "bot-not-found"

    profile = client.get("/v1/bots/ada").json()
    assert profile["name"] == "Ada" and profile["status"] == "active"
    assert profile["ratings"] == [] and not profile["in_arena"]

    # the bot rotates its own token: the old one stops working at once
    rotated = client.post("/v1/bots/Ada/token", headers=auth(token))
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["token"]
    old = client.post("/v1/arena", json={"ruleset": DEFAULT}, headers=auth(token))
    assert old.status_code == 403 and old.json()["code"] == "bot-token-refused"
    joined = client.post("/v1/arena", json={"ruleset": DEFAULT}, headers=auth(new))
    assert joined.status_code == 200, joined.text
    assert client.get("/v1/bots/Ada").json()["in_arena"]
    assert client.delete("/v1/arena", headers=auth(new)).status_code == 204
    assert not client.get("/v1/bots/Ada").json()["in_arena"]

    # the organizer (open mode: the creating address) pauses it; a paused bot may not play
    paused = client.post("/v1/bots/Ada/status", json={"status": "paused"})
    assert paused.json() == {"name": "Ada", "status": "paused"}
    refused = client.post("/v1/arena", json={"ruleset": DEFAULT}, headers=auth(new))
    assert refused.status_code == 403 and refused.json()["code"] == "bot-not-active"
    client.post("/v1/bots/Ada/status", json={"status": "active"})

    # revoked: no token works until the organizer gives a new one
    assert client.post("/v1/bots/Ada/revoke", headers=auth(new)).status_code == 204
    gone = client.get("/v1/me/next", headers=auth(new))
    assert gone.status_code == 403 and gone.json()["code"] == "bot-token-refused"
    given = client.post("/v1/bots/Ada/token")
    assert given.status_code == 200
    assert client.get("/v1/me/next", headers=auth(given.json()["token"])).status_code == 200


def test_a_token_rotated_at_one_replica_stops_working_at_another_within_a_second(
    client, league_valkey
):
    """A bot's games' requests take its token as read for RECHECK_S (1 s): changed through
    the same replica it is refused at once, through another one within that second."""
    token = _bot(client, "Twice Seen")
    with (
        ThreadServer(league_valkey) as other,
        httpx.Client(base_url=other.url, timeout=30) as there,
    ):
        for replica in (client, there):  # remembered at both
            assert replica.get("/v1/me/next", headers=auth(token)).status_code == 200
        rotated = client.post("/v1/bots/Twice Seen/token", headers=auth(token))
        assert rotated.status_code == 200, rotated.text
        here = client.get("/v1/me/next", headers=auth(token))
        assert here.status_code == 403 and here.json()["code"] == "bot-token-refused"
        started = time.monotonic()
        assert wait_until(
            lambda: there.get("/v1/me/next", headers=auth(token)).status_code == 403, 5.0
        )
        assert time.monotonic() - started < 3.0  # RECHECK_S, generously
        new = rotated.json()["token"]
        assert there.get("/v1/me/next", headers=auth(new)).status_code == 200


def test_quotas_are_refused_with_their_key_and_the_seconds_to_wait(client):
    token = _bot(client, "Greedy Gus")
    # more at once than the referee ever allows: no wait would help, so no 429
    reply = client.post(
        "/v1/arena", json={"ruleset": DEFAULT, "concurrent_games": 64}, headers=auth(token)
    )
    assert reply.status_code == 422 and "retry-after" not in reply.headers
    assert reply.json()["code"] == "unprocessable"
    assert reply.json()["field"] == "concurrent_games"
    unknown = client.post("/v1/arena", json={"ruleset": "no-such"}, headers=auth(token))
    assert unknown.status_code == 422 and unknown.json()["code"] == "unknown-ruleset"


def test_arena_games_reach_the_bots_and_are_rated_once(client, league_valkey):
    tokens = [_bot(client, f"Arena {i}") for i in range(2)]
    made: list[int] = []
    threads = [
        threading.Thread(
            target=lambda i=i: made.append(
                _play_one_game(str(client.base_url), f"Arena {i}", tokens[i], random.Random(i))
            )
        )
        for i in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 2 and all(made)

    def settled() -> bool:
        profiles = [client.get(f"/v1/bots/Arena {i}").json() for i in range(2)]
        return all(p["ratings"] and not p["playing"] for p in profiles)

    assert wait_until(settled, 30)
    ratings = [client.get(f"/v1/bots/Arena {i}").json()["ratings"][0] for i in range(2)]
    assert ratings[0]["games"] == ratings[1]["games"] >= 1
    assert all(r["provisional"] for r in ratings)
    board = client.get(f"/v1/leaderboards/{DEFAULT}").json()
    names = [row["name"] for row in board["bots"]]
    assert {"Arena 0", "Arena 1"} <= set(names)
    conservative = [row["conservative"] for row in board["bots"]]
    assert conservative == sorted(conservative, reverse=True)
    assert client.get("/v1/leaderboards/no-such").status_code == 404
    first = client.get(f"/v1/leaderboards/{DEFAULT}", params={"limit": 1}).json()
    assert len(first["bots"]) == 1 and first["next_offset"] == 1 and first["total"] >= 2
    second = client.get(f"/v1/leaderboards/{DEFAULT}", params={"offset": 1, "limit": 1}).json()
    assert second["bots"][0]["rank"] == 2 and second["bots"][0] != first["bots"][0]

    # the pages: the leaderboard and the bot's, its history an inline SVG
    page = client.get(f"/league/{DEFAULT}")
    assert page.status_code == 200 and "Arena 0" in page.text
    bot_page = client.get("/league/bots/Arena%200")
    assert bot_page.status_code == 200 and "<svg" in bot_page.text
    assert "http" not in bot_page.text.split("<svg", 1)[1].split("</svg>")[0].replace(
        "http://www.w3.org/2000/svg", ""
    )

    # rebuilt from the settled games' records: the same numbers
    async def rebuild() -> tuple[dict, dict]:
        store = open_store(league_valkey)
        try:
            league = Services(store, LOADED).league
            before = await store.league.every_rating(DEFAULT)
            await league.store.rewrite_ratings({DEFAULT: {}}, {DEFAULT: {}}, {})
            assert await store.league.every_rating(DEFAULT) == {}
            await league.rebuild()
            return before, await store.league.every_rating(DEFAULT)
        finally:
            await store.aclose()

    before, after = asyncio.run(rebuild())
    assert before and after == before


def test_a_bots_first_seat_alternates_from_game_to_game(client):
    """Two bots alone in the arena play game after game: the one that sat first sits second
    in the next (its seat is kept when its game is settled)."""
    tokens = {name: _bot(client, name) for name in ("Turns A", "Turns B")}
    stop = threading.Event()
    threads = [
        threading.Thread(
            target=play_arena,
            args=(client.base_url, token, DEFAULT, "random"),
            kwargs={"stop": stop},
        )
        for token in tokens.values()
    ]
    for thread in threads:
        thread.start()
    try:

        def played() -> list[str]:
            return client.get("/v1/bots/Turns A").json()["recent_games"]

        assert wait_until(lambda: len(played()) >= 4, 60)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    firsts = []
    for game in reversed(played()):  # the oldest first
        seats = client.get(game["href"]).json()["seats"]
        firsts.append(seats[0]["name"])
    assert len(firsts) >= 4
    assert all(one != next_one for one, next_one in itertools.pairwise(firsts)), firsts


def test_a_finished_game_is_settled_once_whoever_races(client, league_valkey):
    """Two services (two replicas' worth of connections) and the server's own sweep settle
    the same finished game at once, many times over: its ratings move once."""
    a, b = _bot(client, "Racer A"), _bot(client, "Racer B")
    challenge = client.post(
        "/v1/challenges",
        json={"opponent": "Racer B", "ruleset": DEFAULT, "deadline_s": 30},
        headers=auth(a),
    ).json()
    accepted = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(b)).json()
    game_id = accepted["game_id"]

    # play the game out with random moves; the settling is raced once it is over
    rnd = random.Random(3)

    async def seat_tokens() -> list[str]:
        store = open_store(league_valkey)
        try:
            return decode(await store.league.league_game(game_id), LeagueGame).seat_tokens
        finally:
            await store.aclose()

    accepted_tokens = asyncio.run(seat_tokens())
    tokens = accepted_tokens
    while client.get(f"/v1/games/{game_id}").json()["status"] != "finished":
        for token in tokens:
            turn = client.get(f"/v1/games/{game_id}/turn", headers=auth(token)).json()
            if turn["status"] == "your_turn":
                body = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
                client.post(f"/v1/games/{game_id}/moves", headers=auth(token), json=body)

    async def race() -> tuple[list[bool], list[LogEntry], dict]:
        stores = [open_store(league_valkey), open_store(league_valkey)]
        try:
            services = [Services(store, LOADED) for store in stores]
            calls = [s.league.settle(game_id) for s in services for _ in range(8)]
            calls += [s.league.settle_all() for s in services]
            done = await asyncio.gather(*calls)
            log = [decode(e, LogEntry) for e in await stores[0].league.log()]
            ratings = await stores[0].league.every_rating(DEFAULT)
            return [bool(x) for x in done[:16]], log, ratings
        finally:
            for store in stores:
                await store.aclose()

    done, log, ratings = asyncio.run(race())
    assert sum(done) <= 1  # the server's sweep may have been first
    entries = [e for e in log if e.game_id == game_id]
    assert len(entries) == 1
    keys = entries[0].bots
    after = rate_game([Rating(), Rating()], entries[0].places)
    for key, expected in zip(keys, after, strict=True):
        got = decode(ratings[key], Rating)
        assert got.games == 1 and got.mu == expected.mu and got.sigma == expected.sigma


def test_challenges_are_offered_declined_with_a_reason_and_accepted(client):
    a, b = _bot(client, "Challenger"), _bot(client, "Challenged")
    offer = {"opponent": "Challenged", "ruleset": DEFAULT, "rated": False, "expires_s": 30}
    # an opponent no bot could be named is 422 naming the field; one no bot is, 404
    for opponent, status, code in (
        ("x\u202ey", 422, "invalid-name"),
        ("Nobody", 404, "bot-not-found"),
    ):
        refused = client.post(
            "/v1/challenges", json={**offer, "opponent": opponent}, headers=auth(a)
        )
        assert refused.status_code == status, refused.text
        assert refused.json()["code"] == code and refused.json()["field"] == "opponent"
    made = client.post("/v1/challenges", json=offer, headers=auth(a))
    assert made.status_code == 201, made.text
    challenge = made.json()
    assert challenge["status"] == "open" and made.headers["location"].endswith(challenge["id"])

    step = client.get("/v1/me/next", headers=auth(b)).json()
    assert step["status"] == "challenged"
    assert [c["id"] for c in step["challenges"]] == [challenge["id"]]
    # only the challenged bot answers, with a reason from the list
    mine = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(a))
    assert mine.status_code == 403 and mine.json()["code"] == "not-challenged"
    unknown = client.post(
        f"/v1/challenges/{challenge['id']}/decline", json={"reason": "bored"}, headers=auth(b)
    )
    assert unknown.status_code == 400
    declined = client.post(
        f"/v1/challenges/{challenge['id']}/decline", json={"reason": "later"}, headers=auth(b)
    ).json()
    assert declined["status"] == "declined" and declined["reason"] == "later"
    again = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(b))
    assert again.status_code == 409 and again.json()["code"] == "challenge-closed"
    assert client.get("/v1/me/next", headers=auth(b)).json()["status"] == "waiting"

    self_challenge = client.post(
        "/v1/challenges", json={**offer, "opponent": "Challenger"}, headers=auth(a)
    )
    assert self_challenge.json()["code"] == "invalid-challenge"

    second = client.post("/v1/challenges", json=offer, headers=auth(a)).json()
    accepted = client.post(f"/v1/challenges/{second['id']}/accept", headers=auth(b)).json()
    assert accepted["status"] == "accepted" and accepted["game_id"]
    assert client.get(f"/v1/challenges/{second['id']}").json()["game_id"] == accepted["game_id"]
    steps = [client.get("/v1/me/next", params={"wait": 2}, headers=auth(t)).json() for t in (a, b)]
    assert any(s["status"] == "your_turn" and s["game_id"] == accepted["game_id"] for s in steps)

    expiring = client.post("/v1/challenges", json={**offer, "expires_s": 0.2}, headers=auth(a))
    assert wait_until(
        lambda: client.get(f"/v1/challenges/{expiring.json()['id']}").json()["status"] == "expired",
        5,
    )
    late = client.post(f"/v1/challenges/{expiring.json()['id']}/accept", headers=auth(b))
    assert late.status_code == 409


def test_the_arena_bot_loop_leaves_the_pool_when_stopped(client):
    token = _bot(client, "Looper")
    stop = threading.Event()
    thread = threading.Thread(
        target=play_arena,
        args=(str(client.base_url), token, DEFAULT, "random"),
        kwargs={"stop": stop},
    )
    thread.start()
    assert wait_until(lambda: client.get("/v1/bots/Looper").json()["in_arena"], 10)
    stop.set()
    thread.join(10)
    assert not client.get("/v1/bots/Looper").json()["in_arena"]


def test_one_request_per_decision_across_a_bots_games(client):
    """A bot's decision answers with its next turn in any of its games (decideNext): after
    one nextDecision, each decision is one request, until the game is over."""
    a, b = _bot(client, "One A"), _bot(client, "One B")
    offer = {"opponent": "One B", "ruleset": DEFAULT, "deadline_s": 30}
    challenge = client.post("/v1/challenges", json=offer, headers=auth(a)).json()
    game_id = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(b)).json()[
        "game_id"
    ]
    counts: dict[str, list[int]] = {}

    def play(token: str, seed: int) -> None:
        rnd = random.Random(seed)
        requests = decisions = 0
        with httpx.Client(base_url=client.base_url, timeout=30) as http:
            step = http.get("/v1/me/next", params={"wait": 5}, headers=auth(token)).json()
            requests += 1
            while step["status"] == "your_turn":
                turn = step["turn"]
                reply = http.post(
                    f"/v1/me/games/{step['game_id']}/moves",
                    params={"wait": 5},
                    headers=auth(token),
                    json={"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])},
                )
                assert reply.status_code == 200, reply.text
                requests += 1
                decisions += 1
                step = reply.json()
        counts[token] = [requests, decisions]

    threads = [threading.Thread(target=play, args=(t, i)) for i, t in enumerate((a, b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert client.get(f"/v1/games/{game_id}").json()["status"] == "finished"
    for requests, decisions in counts.values():
        assert decisions > 0 and requests == decisions + 1
    foreign = client.post(
        f"/v1/me/games/{game_id}/moves",
        json={"seq": 0, "move": {}},
        headers=auth(_bot(client, "X")),
    )
    assert foreign.status_code in (400, 403)


@pytest.fixture
def handlers(monkeypatch):
    """A switch: while on, the server's protocol takes no hot route (``web.hot``), and
    Litestar's handlers answer."""
    switch = {"on": False}
    real = hot.taken

    def taken(*args):
        return None if switch["on"] else real(*args)

    monkeypatch.setattr(hot, "taken", taken)
    return switch


def test_decide_next_answered_at_the_protocol_is_the_handlers_bytes(client, handlers, fast_answers):
    """decideNext and nextDecision, answered by the hot routes, send the very bytes their
    handlers send: each request is sent twice, to one then the other (a decision sent again
    is answered from the record, with the next decision as it is then): turns, waits,
    challenges and refusals alike."""
    a, b, c = (_bot(client, name) for name in ("Hot A", "Hot B", "Hot C"))
    offer = {"opponent": "Hot B", "ruleset": DEFAULT, "deadline_s": 30}
    challenge = client.post("/v1/challenges", json=offer, headers=auth(a)).json()
    accepted = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(b))
    game_id = accepted.json()["game_id"]
    path = f"/v1/me/games/{game_id}/moves"
    sent = 0

    def twice(method: str, url: str, handlers_first: bool, **how) -> httpx.Response:
        """The request answered by the hot route and by the handler: the same bytes."""
        nonlocal sent
        answers = []
        for on in (handlers_first, not handlers_first):
            handlers["on"] = on
            answers.append(getattr(client, method)(url, **how))
        handlers["on"] = False
        first, second = answers
        assert first.headers["content-type"] == second.headers["content-type"], second.text
        assert first.content == second.content
        sent += first.status_code == 200
        return first

    steps = {
        t: client.get("/v1/me/next", params={"wait": 5}, headers=auth(t)).json() for t in (a, b)
    }
    before = len(fast_answers)
    rnd = random.Random(11)
    seen, asked = set(), set()
    for n in range(400):
        if (
            all(step["status"] != "your_turn" for step in steps.values())
            and client.get(f"/v1/games/{game_id}").json()["status"] == "finished"
        ):
            break
        if n == 6:  # a challenge to A, shown with its next decision
            client.post("/v1/challenges", json={**offer, "opponent": "Hot A"}, headers=auth(c))
        for token in (a, b):
            step = steps[token]
            if step["status"] != "your_turn":
                steps[token] = twice("get", "/v1/me/next", n % 2 == 0, headers=auth(token)).json()
                asked.add(steps[token]["status"])
                continue
            turn = step["turn"]
            body = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
            how = {"params": {"wait": 0}, "headers": auth(token), "json": body}
            reply = twice("post", path, n % 2 == 1, **how)
            assert reply.status_code == 200, reply.text
            steps[token] = reply.json()
            seen.add(steps[token]["status"])
            if token == a and steps[a]["status"] != "your_turn" and len(asked) < 2:
                # asked before B moves, A's next decision is a wait (or the challenge): asked
                # only after, it was A's next turn in most rounds, and in some runs in all
                steps[a] = twice("get", "/v1/me/next", n % 2 == 0, headers=auth(a)).json()
                asked.add(steps[a]["status"])
    else:
        raise AssertionError("the game did not finish")
    assert {"your_turn", "waiting", "challenged"} <= seen
    assert "your_turn" in asked and len(asked) >= 2  # and a wait or a challenge
    assert fast_answers[before:].count(200) == sent
    refused = (({"seq": 0, "move": {}}, 400), ({"seq": 999, "move": body["move"]}, 409))
    for wrong, status in refused:
        assert twice("post", path, False, headers=auth(a), json=wrong).status_code == status
    assert twice("get", "/v1/me/next", True, headers=auth("bot-forged")).status_code == 403


def test_a_rated_tournament_takes_bot_accounts_and_rates_them(client):
    """Bots enter a tournament the organizer marked rated with their bot tokens, play it
    through /v1/me/next and decideNext, and its games move their lifetime ratings once."""
    names = ["Tourney A", "Tourney B", "Tourney C"]
    tokens = [_bot(client, name) for name in names]
    spec = {"ruleset": DEFAULT, "entrants": 3, "deadline_s": 30, "rated": True}
    created = client.post("/v1/tournaments", json=spec)
    assert created.status_code == 201, created.text
    tournament_id = created.json()["id"]
    path = f"/v1/tournaments/{tournament_id}/entrants"
    anonymous = client.post(path, json={"name": "someone"})
    assert anonymous.status_code == 403 and anonymous.json()["code"] == "bot-token-required"
    for name, token in zip(names, tokens, strict=True):
        entered = client.post(path, json={"name": "ignored"}, headers=auth(token))
        assert entered.status_code == 201, entered.text
        assert entered.json()["name"] == name
        if name == names[0]:
            twice = client.post(path, json={"name": "x"}, headers=auth(token))
            assert twice.status_code == 409 and twice.json()["code"] == "bot-already-entered"

    def play(token: str, seed: int) -> None:
        rnd = random.Random(seed)
        with httpx.Client(base_url=client.base_url, timeout=30) as http:
            stop = time.monotonic() + 60
            while time.monotonic() < stop:
                view = http.get(f"/v1/tournaments/{tournament_id}").json()
                if view["status"] == "finished":
                    return
                step = http.get("/v1/me/next", params={"wait": 1}, headers=auth(token)).json()
                while step["status"] == "your_turn":
                    turn = step["turn"]
                    step = http.post(
                        f"/v1/me/games/{step['game_id']}/moves",
                        params={"wait": 1},
                        headers=auth(token),
                        json={"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])},
                    ).json()

    threads = [threading.Thread(target=play, args=(t, i)) for i, t in enumerate(tokens)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(70)
    view = client.get(f"/v1/tournaments/{tournament_id}").json()
    assert view["status"] == "finished"
    games = sum(len(tables) for tables in view["rounds"])  # round robin of 3: 3 games

    def rated() -> bool:
        profiles = [client.get(f"/v1/bots/{name}").json() for name in names]
        counted = [p["ratings"][0]["games"] if p["ratings"] else 0 for p in profiles]
        return sum(counted) == 2 * games

    assert wait_until(rated, 15)
    assert all(client.get(f"/v1/bots/{name}").json()["ratings"][0]["games"] == 2 for name in names)


def test_a_rated_tournament_table_is_rated_only_once_its_dice_group_is_over(client):
    """A round's tables are dealt the same dice, and a table that ends first stays sealed
    while the others play. Its league rating moved at once: the bots' profiles, the
    leaderboard and the rating charts told its result while the game and the tournament
    withheld it."""
    names = ["Sealed A", "Sealed B", "Sealed C", "Sealed D"]
    tokens = dict(zip(names, (_bot(client, name) for name in names), strict=True))
    spec = {"ruleset": DEFAULT, "entrants": 4, "table_size": 2, "deadline_s": 600, "rated": True}
    created = client.post("/v1/tournaments", json=spec)
    assert created.status_code == 201, created.text
    tournament_id = created.json()["id"]
    for token in tokens.values():
        path = f"/v1/tournaments/{tournament_id}/entrants"
        assert client.post(path, json={"name": "x"}, headers=auth(token)).status_code == 201
    view = client.get(f"/v1/tournaments/{tournament_id}").json()
    tables = [
        (table["game_id"], [view["entrants"][e] for e in table["entrants"]])
        for table in view["rounds"][0]
    ]
    assert len(tables) == 2 and tables[0][0] != tables[1][0]

    def play_to_the_end(game_id: str, bots: list[str]) -> None:
        stop = time.monotonic() + 60
        while client.get(f"/v1/games/{game_id}").json()["status"] != "finished":
            assert time.monotonic() < stop
            for name in bots:
                step = client.get("/v1/me/next", headers=auth(tokens[name])).json()
                if step["status"] == "your_turn" and step["game_id"] == game_id:
                    move = {"seq": step["turn"]["seq"], "move": step["turn"]["legal_moves"][0]}
                    path = f"/v1/me/games/{game_id}/moves"
                    assert client.post(path, json=move, headers=auth(tokens[name])).is_success

    def games_rated(name: str) -> int:
        ratings = client.get(f"/v1/bots/{name}").json()["ratings"]
        return ratings[0]["games"] if ratings else 0

    (first, first_bots), (second, second_bots) = tables
    play_to_the_end(first, first_bots)
    assert client.get(f"/v1/games/{first}").json()["sealed"] is True
    # the league's sweeps come and go (every 0.5 s here): the result stays untold
    assert not wait_until(lambda: any(games_rated(n) for n in first_bots), 2)
    board = client.get(f"/v1/leaderboards/{DEFAULT}").json()["bots"]
    assert not {b["name"] for b in board} & set(first_bots)
    assert all(client.get(f"/v1/bots/{n}").json()["recent_games"] == [] for n in first_bots)
    play_to_the_end(second, second_bots)
    assert wait_until(lambda: all(games_rated(n) == 1 for n in names), 15)


def test_a_bots_registration_is_replayed_to_that_bot_alone_and_never_holds_its_token(client):
    """A bot's entrant token was the tournament's id and the bot's token joined, and a
    registration's Idempotency-Key counted for the client's address alone: anyone on that
    address who sent the same key and body was handed the bot's token, and could rotate it
    and take the account. The entrant token is derived one way now, and the key is the
    bot's."""
    tokens = [_bot(client, name) for name in ("Keyed A", "Keyed B")]
    spec = {"ruleset": DEFAULT, "entrants": 4, "deadline_s": 30}
    path = f"/v1/tournaments/{client.post('/v1/tournaments', json=spec).json()['id']}/entrants"
    key = {"Idempotency-Key": "registration-1"}
    first = client.post(path, json={"name": "x"}, headers={**auth(tokens[0]), **key})
    assert first.status_code == 201, first.text
    entrant_token = first.json()["token"]
    assert tokens[0].removeprefix("bot-") not in entrant_token
    retried = client.post(path, json={"name": "x"}, headers={**auth(tokens[0]), **key})
    assert retried.status_code == 201 and retried.json() == first.json()
    other = client.post(path, json={"name": "x"}, headers={**auth(tokens[1]), **key})
    assert other.status_code == 201 and other.json()["name"] == "Keyed B"
    anonymous = client.post(path, json={"name": "no account"}, headers=key)
    assert anonymous.status_code == 201, anonymous.text
    assert anonymous.json()["name"] == "no account"
    shown = [other.json()["token"], anonymous.json()["token"]]
    assert entrant_token not in shown and not any(tokens[0] in t for t in shown)


def test_a_bot_that_entered_with_its_token_joined_plays_its_tournament_on(client, monkeypatch):
    """A bot that entered before entrant tokens were derived holds the tournament's id and
    its bot token joined: /v1/me/next and decideNext still find its tables."""
    tokens = [_bot(client, name) for name in ("Joined A", "Joined B")]
    spec = {"ruleset": DEFAULT, "entrants": 2, "deadline_s": 30}
    tournament_id = client.post("/v1/tournaments", json=spec).json()["id"]
    # registered as the referee did then (the server runs in this process)
    monkeypatch.setattr(tournaments_module, "bot_entrant_token", legacy_entrant_token)
    for token in tokens:
        path = f"/v1/tournaments/{tournament_id}/entrants"
        entered = client.post(path, json={"name": "x"}, headers=auth(token))
        assert entered.json()["token"] == f"{tournament_id}.{token}"
    monkeypatch.undo()
    stop = time.monotonic() + 60
    while client.get(f"/v1/tournaments/{tournament_id}").json()["status"] != "finished":
        assert time.monotonic() < stop, "the bots never found their table"
        for token in tokens:
            step = client.get("/v1/me/next", headers=auth(token)).json()
            if step["status"] == "your_turn":
                move = {"seq": step["turn"]["seq"], "move": step["turn"]["legal_moves"][0]}
                path = f"/v1/me/games/{step['game_id']}/moves"
                assert client.post(path, json=move, headers=auth(token)).is_success


def test_a_bot_name_is_one_segment_of_its_routes_paths(client):
    """A name with '/' (or '.', '..') passed, and the bot could then be reached by none of
    its routes: its organizer could neither pause nor ban it."""
    for name in ("evil/bot", ".", ".."):
        refused = client.post("/v1/bots", json={"name": name})
        assert refused.status_code == 422, name
        assert refused.json()["code"] == "invalid-name" and refused.json()["field"] == "name"
    assert client.post("/v1/bots", json={"name": "dots.are.fine"}).status_code == 201
    assert client.get("/v1/bots/dots.are.fine").status_code == 200


def test_a_rated_tournament_has_a_deadline(client):
    """With none, a table whose bot stopped never ended, and its whole dice group, the tables
    finished included, stayed unrated: a bot losing its game kept everyone's unrated."""
    spec = {"ruleset": DEFAULT, "entrants": 4, "rated": True, "deadline_s": 0}
    refused = client.post("/v1/tournaments", json=spec)
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "rated-tournament-deadline"
    assert refused.json()["field"] == "deadline_s"
    assert client.post("/v1/tournaments", json={**spec, "deadline_s": 5}).status_code == 201


def test_a_rated_tournament_takes_one_bot_of_an_organizer_and_a_deadline_bots_meet(
    league_valkey,
):
    """Its deadline had no least but above 0 (arena seeks and challenges take at least
    REFEREE_BOT_MIN_DEADLINE_S), and one organizer's bots entered it together, their games
    moving each other's ratings with no contest."""
    keys = key_hashes("rated-organizer,rival-organizer")
    with (
        ThreadServer(league_valkey, organizer_keys=keys, bot_min_deadline_s=1.0) as keyed,
        httpx.Client(base_url=keyed.url, timeout=30) as http,
    ):
        own, rival = auth("rated-organizer"), auth("rival-organizer")
        bots = _bots_of(http, {"Rated A": own, "Rated B": own, "Rated C": rival})
        spec = {"ruleset": DEFAULT, "entrants": 3, "rated": True, "deadline_s": 0.5}
        refused = http.post("/v1/tournaments", json=spec, headers=own)
        assert refused.status_code == 422, refused.text
        assert refused.json()["code"] == "rated-tournament-deadline"
        assert "REFEREE_BOT_MIN_DEADLINE_S" in refused.json()["detail"]
        for rated in (True, False):
            made = http.post(
                "/v1/tournaments", json={**spec, "deadline_s": 1, "rated": rated}, headers=own
            )
            assert made.status_code == 201, made.text
            path = f"/v1/tournaments/{made.json()['id']}/entrants"
            entered = [
                http.post(path, json={"name": "x"}, headers=auth(bots[name]))
                for name in ("Rated A", "Rated B", "Rated C")
            ]
            statuses = [e.status_code for e in entered]
            assert statuses == ([201, 409, 201] if rated else [201, 201, 201]), (rated, statuses)
            if rated:
                assert entered[1].json()["code"] == "organizer-already-entered"


def test_two_bots_of_one_organizer_play_no_rated_challenge(league_valkey):
    """An organizer's own bots challenging each other, rated, moved their ratings with no
    contest (four throwaway bots took a fifth to the top of the leaderboard)."""
    keys = key_hashes("own-organizer,other-organizer")
    with (
        ThreadServer(league_valkey, organizer_keys=keys) as keyed,
        httpx.Client(base_url=keyed.url, timeout=30) as http,
    ):
        own, other = auth("own-organizer"), auth("other-organizer")
        bots = _bots_of(http, {"Own A": own, "Own B": own, "Other C": other})
        offer = {"opponent": "Own B", "ruleset": DEFAULT, "deadline_s": 60, "rated": True}
        refused = http.post("/v1/challenges", json=offer, headers=auth(bots["Own A"]))
        assert refused.status_code == 422, refused.text
        assert refused.json()["code"] == "invalid-challenge"
        assert refused.json()["field"] == "rated"
        casual = http.post(
            "/v1/challenges", json={**offer, "rated": False}, headers=auth(bots["Own A"])
        )
        assert casual.status_code == 201, casual.text
        rated = http.post(
            "/v1/challenges", json={**offer, "opponent": "Other C"}, headers=auth(bots["Own A"])
        )
        assert rated.status_code == 201, rated.text


def test_one_organizers_bots_hold_few_open_challenges_to_a_bot(league_valkey):
    """A bot's inbox shows its first 50 challenges by expiry, and one organizer's throwaway
    bots, one challenge each, hid every real one: an organizer's bots hold at most
    ``OPEN_CHALLENGES_PER_ORGANIZER`` open challenges to one bot, another once one closes."""
    keys = key_hashes("flood-organizer,fair-organizer,friendly-organizer")
    with (
        ThreadServer(league_valkey, organizer_keys=keys) as keyed,
        httpx.Client(base_url=keyed.url, timeout=30) as http,
    ):
        flood, fair = auth("flood-organizer"), auth("fair-organizer")
        target = http.post("/v1/bots", json={"name": "Flood Target"}, headers=fair).json()
        friendly = auth("friendly-organizer")
        friend = http.post("/v1/bots", json={"name": "Flood Friend"}, headers=friendly).json()
        throwaways = []
        for i in range(OPEN_CHALLENGES_PER_ORGANIZER + 2):
            made = http.post("/v1/bots", json={"name": f"Flood {i}"}, headers=flood)
            throwaways.append(made.json()["token"])
        offer = {"opponent": "Flood Target", "ruleset": DEFAULT, "deadline_s": 10}
        opened = []
        for token in throwaways:
            made = http.post("/v1/challenges", json={**offer, "expires_s": 60}, headers=auth(token))
            if made.status_code == 201:
                opened.append(made.json()["id"])
                continue
            assert made.status_code == 409, made.text
            assert made.json()["code"] == "challenge-pending", made.text
            assert made.json()["field"] == "opponent"
        assert len(opened) == OPEN_CHALLENGES_PER_ORGANIZER
        real = http.post("/v1/challenges", json=offer, headers=auth(friend["token"]))
        assert real.status_code == 201, real.text
        inbox = http.get("/v1/me/next", headers=auth(target["token"])).json()["challenges"]
        assert real.json()["id"] in [c["id"] for c in inbox]
        # one closes (its challenger cancels it): another of the organizer's may be made
        cancel = http.post(f"/v1/challenges/{opened[0]}/cancel", headers=auth(throwaways[0]))
        assert cancel.status_code == 200 and cancel.json()["status"] == "canceled", cancel.text
        again = http.post("/v1/challenges", json=offer, headers=auth(throwaways[-1]))
        assert again.status_code == 201, again.text


def test_a_challenger_cancels_its_open_challenge(client):
    """No route withdrew a challenge: its challenger waited for it to expire, and could not
    challenge that bot again meanwhile."""
    a, b = _bot(client, "Canceller"), _bot(client, "Cancelled")
    offer = {"opponent": "Cancelled", "ruleset": DEFAULT, "deadline_s": 10, "expires_s": 600}
    challenge = client.post("/v1/challenges", json=offer, headers=auth(a)).json()
    path = f"/v1/challenges/{challenge['id']}/cancel"
    theirs = client.post(path, headers=auth(b))  # the challenged bot declines instead
    assert theirs.status_code == 403 and theirs.json()["code"] == "not-challenger", theirs.text
    assert client.post(path).status_code == 401
    assert client.get(f"/v1/challenges/{challenge['id']}").json()["status"] == "open"
    cancelled = client.post(path, headers=auth(a))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "canceled"
    assert client.get(f"/v1/challenges/{challenge['id']}").json()["status"] == "canceled"
    assert client.get("/v1/me/next", headers=auth(b)).json()["status"] == "waiting"
    accept = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(b))
    assert accept.status_code == 409 and accept.json()["code"] == "challenge-closed"
    again = client.post(path, headers=auth(a))
    assert again.status_code == 409 and again.json()["code"] == "challenge-closed"
    # the challenger may challenge that bot again at once
    second = client.post("/v1/challenges", json=offer, headers=auth(a))
    assert second.status_code == 201, second.text
    accepted = client.post(f"/v1/challenges/{second.json()['id']}/accept", headers=auth(b))
    assert accepted.status_code == 200
    late = client.post(f"/v1/challenges/{second.json()['id']}/cancel", headers=auth(a))
    assert late.status_code == 409 and late.json()["code"] == "challenge-closed"


def test_a_league_game_s_deadline_is_one_a_bot_can_meet(league_valkey):
    """A challenge of 0.001 s a decision was taken: no request meets it, and three such games
    from throwaway accounts paused the bot that accepted them, however fast it played."""
    with (
        ThreadServer(league_valkey, bot_min_deadline_s=1.0) as strict,
        httpx.Client(base_url=strict.url, timeout=30) as http,
    ):
        tokens = [_bot(http, name) for name in ("Quick A", "Quick B")]
        offer = {"opponent": "Quick B", "ruleset": DEFAULT, "deadline_s": 0.001}
        refused = http.post("/v1/challenges", json=offer, headers=auth(tokens[0]))
        assert refused.status_code == 422, refused.text
        assert refused.json()["field"] == "deadline_s"
        assert "REFEREE_BOT_MIN_DEADLINE_S" in refused.json()["detail"]
        seek = {"ruleset": DEFAULT, "seats": 2, "deadline_s": 0.5}
        refused = http.post("/v1/arena", json=seek, headers=auth(tokens[0]))
        assert refused.status_code == 422 and refused.json()["field"] == "deadline_s"
        offer["deadline_s"] = 1.0
        made = http.post("/v1/challenges", json=offer, headers=auth(tokens[0]))
        assert made.status_code == 201, made.text


def test_a_rated_tournament_takes_no_seed(client):
    """Its games move bots' lifetime ratings: whoever gave the seed would know every die."""
    spec = {"ruleset": DEFAULT, "entrants": 2, "rated": True, "seed": "00" * 32}
    refused = client.post("/v1/tournaments", json=spec)
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "rated-tournament-seed"
    assert refused.json()["field"] == "seed"
    assert client.post("/v1/tournaments", json={**spec, "rated": False}).status_code == 201


def test_a_bot_has_one_open_challenge_to_another_at_a_time(client):
    """A challenger's many challenges pushed everyone else's out of the opponent's inbox
    (its first 50, by expiry): one open at a time to a bot, another once it is answered."""
    victim, friend, flooder = (_bot(client, n) for n in ("Inbox V", "Inbox F", "Inbox X"))
    offer = {"opponent": "Inbox V", "ruleset": DEFAULT, "deadline_s": 10}
    friendly = client.post("/v1/challenges", json={**offer, "expires_s": 600}, headers=auth(friend))
    assert friendly.status_code == 201, friendly.text
    first = client.post("/v1/challenges", json={**offer, "expires_s": 300}, headers=auth(flooder))
    assert first.status_code == 201, first.text
    for _ in range(3):
        again = client.post("/v1/challenges", json=offer, headers=auth(flooder))
        assert again.status_code == 409 and again.json()["code"] == "challenge-pending"
        assert again.json()["field"] == "opponent" and first.json()["id"] in again.json()["detail"]
    inbox = client.get("/v1/me/next", headers=auth(victim)).json()["challenges"]
    assert sorted(c["id"] for c in inbox) == sorted([friendly.json()["id"], first.json()["id"]])
    path = f"/v1/challenges/{first.json()['id']}/decline"
    assert client.post(path, json={"reason": "later"}, headers=auth(victim)).status_code == 200
    assert client.post("/v1/challenges", json=offer, headers=auth(flooder)).status_code == 201


def test_a_game_seat_token_is_refused_by_decide_next_before_its_decision_is_made(client):
    """decideNext and nextDecision take a bot's or an entrant's token; a game's own seat token
    was refused (404 tournament-not-found) after its decision had been made, and told "there
    is no tournament" naming its game: now 403 ``forbidden``, saying where a seat plays."""
    body = {"ruleset": DEFAULT, "seats": [{"name": "a"}, {"name": "b"}], "deadline_s": 0}
    game = client.post("/v1/games", json=body).json()
    token = game["seats"][0]["token"]
    turn = client.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
    for wait in ({}, {"wait": 0}):  # the hot route, and the handler
        path = f"/v1/me/games/{game['id']}/moves"
        refused = client.post(path, params=wait, json=move, headers=auth(token))
        assert refused.status_code == 403, refused.text
        assert "seat token" in refused.json()["detail"]
        told = client.get("/v1/me/next", params=wait, headers=auth(token))
        assert told.status_code == 403 and told.json()["code"] == "forbidden", told.text
        assert "/v1/games/{id}/turn" in told.json()["detail"]
    for unknown in (f"{'0' * 16}.x", "nothing.x"):  # an id that is no game: as before
        missing = client.get("/v1/me/next", headers=auth(unknown))
        assert missing.status_code == 404, missing.text
    after = client.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    assert after["seq"] == turn["seq"] and after["status"] == "your_turn"


def test_a_bot_that_lets_deadlines_decide_game_after_game_is_paused(client):
    """Three league games in a row in which the bot let its deadline decide: paused (and out
    of the arena) until its organizer reinstates it."""
    a, b = _bot(client, "Sleepy A"), _bot(client, "Sleepy B")
    offer = {"opponent": "Sleepy B", "ruleset": DEFAULT, "deadline_s": 0.05, "rated": False}
    for played in range(1, 4):
        assert client.get("/v1/bots/Sleepy A").json()["status"] == "active"
        challenge = client.post("/v1/challenges", json=offer, headers=auth(a)).json()
        accepted = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(b))
        assert accepted.status_code == 200, accepted.text

        def settled(played: int = played) -> bool:
            profile = client.get("/v1/bots/Sleepy A").json()
            return len(profile["recent_games"]) == played and not profile["playing"]

        assert wait_until(settled, 20)
    for name, token in (("Sleepy A", a), ("Sleepy B", b)):
        assert client.get(f"/v1/bots/{name}").json()["status"] == "paused"
        refused = client.post("/v1/arena", json={"ruleset": DEFAULT}, headers=auth(token))
        assert refused.status_code == 403 and refused.json()["code"] == "bot-not-active"
    client.post("/v1/bots/Sleepy A/status", json={"status": "active"})
    joined = client.post("/v1/arena", json={"ruleset": DEFAULT}, headers=auth(a))
    assert joined.status_code == 200
    client.delete("/v1/arena", headers=auth(a))


def test_a_league_game_a_bot_plays_itself_ends_its_run_of_timeouts(client):
    """Two games lost to deadlines, then one that the bots play: their runs of timeouts
    start again, so one more game lost to deadlines leaves them active (three in a row
    would pause them)."""
    awake, other = _bot(client, "Awake"), _bot(client, "Other")

    def play(deadline_s: float, played: int, plays: bool) -> None:
        offer = {"opponent": "Other", "ruleset": DEFAULT, "deadline_s": deadline_s}
        made = client.post("/v1/challenges", json={**offer, "rated": False}, headers=auth(awake))
        accepted = client.post(f"/v1/challenges/{made.json()['id']}/accept", headers=auth(other))
        assert accepted.status_code == 200, accepted.text
        stop = time.monotonic() + 30
        while time.monotonic() < stop:
            profile = client.get("/v1/bots/Awake").json()
            if len(profile["recent_games"]) == played and not profile["playing"]:
                return
            for token in (awake, other):
                step = client.get("/v1/me/next", params={"wait": 0.1}, headers=auth(token)).json()
                if plays and step["status"] == "your_turn":
                    turn = step["turn"]
                    decision = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
                    path = f"/v1/me/games/{step['game_id']}/moves"
                    assert client.post(path, json=decision, headers=auth(token)).status_code == 200
        raise AssertionError("the game was not settled")

    play(0.05, 1, plays=False)
    play(0.05, 2, plays=False)
    play(30, 3, plays=True)
    play(0.05, 4, plays=False)
    assert [client.get(f"/v1/bots/{n}").json()["status"] for n in ("Awake", "Other")] == [
        "active",
        "active",
    ]


def test_an_arena_pairing_is_one_open_game_never_duplicates_of_the_same_dice(client):
    """Two CHOPTA bots paired by the arena play one game with a seed of its own, open to
    everyone as any game is. Duplicates (a second game of the same dice, the seats swapped)
    showed each bot, at one game, the pool its opponent held hidden at the other: a seat's
    pools follow the seed and the seat, not the bot."""
    names = ["Dup A", "Dup B"]
    tokens = [_bot(client, name) for name in names]
    for token in tokens:
        seek = {"ruleset": "chopta", "deadline_s": 30}
        assert client.post("/v1/arena", json=seek, headers=auth(token)).status_code == 200
    assert wait_until(lambda: client.get("/v1/bots/Dup A").json()["playing"], 10)
    for token in tokens:
        client.delete("/v1/arena", headers=auth(token))
    # a duplicate came a moment after the first game, in the same pairing
    assert not wait_until(lambda: len(client.get("/v1/bots/Dup A").json()["playing"]) > 1, 1)
    (game_id,) = client.get("/v1/bots/Dup A").json()["playing"]
    assert client.get("/v1/bots/Dup B").json()["playing"] == [game_id]
    view = client.get(f"/v1/games/{game_id}").json()
    assert view["sealed"] is False and sorted(s["name"] for s in view["seats"]) == names
    assert client.get(f"/v1/games/{game_id}/record").status_code == 200


def test_referee_bot_plays_the_arena_and_ctrl_c_leaves_the_pool(client):
    """``referee bot --bot-token T --arena R``: in the pool while it runs; SIGINT (Ctrl-C)
    ends it cleanly, out of the pool."""
    token = _bot(client, "Commander")
    command = [sys.executable, "-m", "referee.cli", "bot", "--url", str(client.base_url)]
    command += ["--bot-token", token, "--arena", DEFAULT, "--bot", "random"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: client.get("/v1/bots/Commander").json()["in_arena"], 20)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert "left the arena" in process.stderr.read()
    assert not client.get("/v1/bots/Commander").json()["in_arena"]


def test_a_game_ended_by_its_deadlines_is_settled_once_while_sweeps_race(client, league_valkey):
    """Nobody plays: the game ends by its deadlines, resolved by whichever sweep comes first
    (the server's, two services'), while both services keep trying to settle it: its
    ratings move once."""
    a, b = _bot(client, "Sweeper A"), _bot(client, "Sweeper B")
    offer = {"opponent": "Sweeper B", "ruleset": DEFAULT, "deadline_s": 0.05}
    challenge = client.post("/v1/challenges", json=offer, headers=auth(a)).json()
    game_id = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(b)).json()[
        "game_id"
    ]

    async def race() -> tuple[int, int]:
        stores = [open_store(league_valkey), open_store(league_valkey)]
        try:
            services = [Services(store, LOADED) for store in stores]
            stop = time.monotonic() + 20

            async def settler(league) -> int:
                won = 0
                while time.monotonic() < stop and not await league.store.is_settled(game_id):
                    won += await league.settle(game_id)
                return won

            async def sweeper(games) -> None:
                while time.monotonic() < stop and not await stores[0].league.is_settled(game_id):
                    await games.sweep()
                    await asyncio.sleep(0.01)

            done = await asyncio.gather(
                *(settler(s.league) for s in services for _ in range(3)),
                *(sweeper(s.games) for s in services),
            )
            log = [decode(e, LogEntry) for e in await stores[0].league.log()]
            return sum(x for x in done if x), sum(e.game_id == game_id for e in log)
        finally:
            for store in stores:
                await store.aclose()

    won, logged = asyncio.run(race())
    assert won <= 1 and logged == 1
    for name in ("Sweeper A", "Sweeper B"):
        assert client.get(f"/v1/bots/{name}").json()["ratings"][0]["games"] == 1


def test_with_organizer_keys_an_organizer_creates_pauses_and_bans_its_own_bots(league_valkey):
    """Where the referee has organizer keys, creating a bot needs one, and only the
    organizer who created it pauses, bans, reinstates or gives it a token; the bot rotates
    its own token with it."""
    keys = key_hashes("first-organizer,second-organizer")
    with (
        ThreadServer(league_valkey, organizer_keys=keys) as keyed,
        httpx.Client(base_url=keyed.url, timeout=30) as http,
    ):
        first, second = auth("first-organizer"), auth("second-organizer")
        anonymous = http.post("/v1/bots", json={"name": "Keyed"})
        assert anonymous.status_code == 401
        assert anonymous.json()["code"] == "organizer-key-required"
        made = http.post("/v1/bots", json={"name": "Keyed"}, headers=first)
        assert made.status_code == 201, made.text
        token = made.json()["token"]
        ban = {"status": "banned"}
        other = http.post("/v1/bots/Keyed/status", json=ban, headers=second)
        assert other.status_code == 403 and other.json()["code"] == "not-bot-owner"
        assert http.post("/v1/bots/Keyed/token", headers=second).status_code == 403
        banned = http.post("/v1/bots/Keyed/status", json=ban, headers=first)
        assert banned.json()["status"] == "banned"
        seek = http.post("/v1/arena", json={"ruleset": DEFAULT}, headers=auth(token))
        assert seek.status_code == 403 and seek.json()["code"] == "bot-not-active"
        # a banned bot cannot rotate its own way back; its organizer reinstates it
        assert http.post("/v1/bots/Keyed/token", headers=auth(token)).status_code == 403
        http.post("/v1/bots/Keyed/status", json={"status": "active"}, headers=first)
        rotated = http.post("/v1/bots/Keyed/token", headers=auth(token))
        assert rotated.status_code == 200, rotated.text


def test_referee_bot_exec_plays_the_arena_with_a_program_and_ctrl_c_leaves(client, tmp_path):
    """``referee bot --bot-token T --arena R --exec CMD``: the stdin example plays arena games
        against a house-bot account to their end, every move its own; SIGINT (Ctrl-C) ends it
        cleanly, out of the pool, with its report, and the program is not hit by it (its own process
    group) but ends when its stdin closes. The ruleset is one no other test here seeks."""
    ruleset = "choice-specials"
    house, program = _bot(client, "House Exec"), _bot(client, "Program Exec")
    stop = threading.Event()
    opponent = threading.Thread(
        target=play_arena,
        args=(str(client.base_url), house, ruleset, "random"),
        kwargs={"stop": stop},
    )
    opponent.start()
    bot = Path(__file__).parents[2] / "examples" / "bots" / "python" / "bot.py"
    log = tmp_path / "bot.log"
    command = [sys.executable, "-m", "referee.cli", "bot", "--url", str(client.base_url)]
    command += ["--bot-token", program, "--arena", ruleset, "--log", str(log)]
    command += ["--exec", f"{sys.executable} {bot}"]
    # a group of its own, as a terminal's foreground job: Ctrl-C signals the whole group
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, process_group=0)

    def finished_one() -> list[str]:
        profile = client.get("/v1/bots/Program Exec").json()
        playing = set(profile["playing"])
        return [g["game_id"] for g in profile["recent_games"] if g["game_id"] not in playing]

    try:
        assert wait_until(finished_one, 60), client.get("/v1/bots/Program Exec").text
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C
        assert process.wait(timeout=20) == 0
    finally:
        stop.set()
        if process.poll() is None:
            process.kill()
        opponent.join(20)
    report = process.stderr.read()
    assert "left the arena" in report and "0 restarts, 0 default moves" in report, report
    assert not client.get("/v1/bots/Program Exec").json()["in_arena"]
    # the program's stderr: it played, and left when its stdin closed, not on the Ctrl-C
    assert "legal moves" in log.read_text() and "KeyboardInterrupt" not in log.read_text()
    game = client.get(f"/v1/games/{finished_one()[0]}/record").json()
    seat = game["seats"].index("Program Exec")
    mine = [d for d in game["decisions"] if d.get("seat") == seat]
    assert game["finished"] and mine and not any(d.get("timeout") for d in mine)


def test_the_matchmakers_lock_is_one_replicas_until_it_lapses(own_valkey):
    """One holder at a time: taken, refused to another, renewed by its holder (and only by
    it), and taken by another once it lapsed. On a Valkey of its own: the league's referee
    in this module holds the same lock."""

    async def hold() -> tuple[list[bool], list[int]]:
        stores = [open_store(own_valkey), open_store(own_valkey)]
        try:
            a, b = (s.league for s in stores)
            await a.redis.delete(a.LOCK)
            taken = [await a.lock("replica-a", 1000), await b.lock("replica-b", 9000)]
            lives = [await a.redis.pttl(a.LOCK)]  # b's refusal did not extend it
            taken.append(await a.lock("replica-a", 9000))
            lives.append(await a.redis.pttl(a.LOCK))  # renewed
            taken.append(await a.lock("replica-a", 20))
            await asyncio.sleep(0.1)  # lapsed
            taken += [await b.lock("replica-b", 9000), await a.lock("replica-a", 9000)]
            await a.redis.delete(a.LOCK)
            return taken, lives
        finally:
            for store in stores:
                await store.aclose()

    taken, lives = asyncio.run(hold())
    assert taken == [True, False, True, True, True, False]
    assert lives[0] <= 1000 < lives[1]


def test_bots_coming_free_bring_the_matchmakers_next_round_forward(own_valkey):
    """Bots that come free through the replica holding the lock start the next round at
    once rather than at the interval (with rounds every 30 s here): a bot that joins one
    already waiting alone is paired within seconds, and so is a bot waiting alone when a
    game ends and is settled (paired with one of its two bots, which the rematch penalty
    keeps apart). A referee's services in this process, on a Valkey of their own (the
    module's referee pairs every bot of its Valkey)."""
    decoder = msgspec.json.Decoder(MoveSubmission)

    async def seek() -> list[str]:
        services = Services.start(msgspec.structs.replace(LOADED, redis_url=own_valkey))
        league = services.league
        # before its loop first runs (it reads the settings once, when it starts)
        league.settings = msgspec.structs.replace(league.settings, interval_s=30.0)
        try:
            names = ("Early", "Late", "Third")
            tokens = {n: (await league.create_bot(n, "", "organizer"))[1] for n in names}
            await league.join(tokens["Early"], DEFAULT, 2, 30, 1)
            await asyncio.sleep(1.0)  # a round found it alone: the next is 30 s away
            await league.join(tokens["Late"], DEFAULT, 2, 30, 1)
            steps = {n: await league.next_decision(tokens[n], 10) for n in names[:2]}
            statuses = [steps["Late"]["status"]]
            await league.join(tokens["Third"], DEFAULT, 2, 30, 1)
            await asyncio.sleep(1.0)  # found alone again, the other two playing
            game_id = steps["Late"]["game_id"]
            while (await services.games.current(game_id)).doc.status != "finished":
                for name, step in steps.items():
                    if step["status"] != "your_turn":
                        steps[name] = await league.next_decision(tokens[name], 0.05)
                        continue
                    turn = step["turn"]
                    body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
                    moves = decoder.decode(msgspec.json.encode(body)).decided()
                    steps[name] = await league.decide_next(
                        tokens[name], game_id, turn["seq"], moves, 0
                    )
            await league.next_decision(tokens["Early"], 0)  # finds it finished: settles it
            statuses.append((await league.next_decision(tokens["Third"], 10))["status"])
            return statuses
        finally:
            await services.stop()

    statuses = asyncio.run(seek())
    assert statuses == ["your_turn", "your_turn"]


def test_a_bot_that_stops_asking_leaves_the_pool_and_one_that_asks_stays(own_valkey):
    """The matchmaker drops a bot unseen for ``stale_s`` (2 s here). A bot that keeps asking
    is marked seen (the process writes its bots' marks together, at most every
    ``SEEN_BATCH_S``) and stays; one that joined and never asked again leaves. The two seek
    different rulesets, so that they are never paired. Services in this process, on a
    Valkey of their own."""
    other = next(name for name in RULESETS if name != DEFAULT)

    async def wait_and_see() -> tuple[set[str], set[str], float, list[str]]:
        services = Services.start(msgspec.structs.replace(LOADED, redis_url=own_valkey))
        league = services.league
        league.settings = msgspec.structs.replace(league.settings, stale_s=2.0, interval_s=0.1)
        try:
            asking = (await league.create_bot("Asking", "", "organizer"))[1]
            silent = (await league.create_bot("Silent", "", "organizer"))[1]
            await league.join(asking, DEFAULT, 2, 30, 1)
            await league.join(silent, other, 2, 30, 1)
            before = set((await league.store.pool())[0])
            stop = time.monotonic() + 4.0
            statuses = set()
            while time.monotonic() < stop:  # each ask waits up to 0.3 s to be paired
                statuses.add((await league.next_decision(asking, 0.3))["status"])
            _, seen, _ = await league.store.pool()
            after = set((await league.store.pool())[0])
            return before, after, time.time() - seen.get("asking", 0.0), sorted(statuses)
        finally:
            await services.stop()

    before, after, unseen_for, statuses = asyncio.run(wait_and_see())
    assert before == {"asking", "silent"}
    assert after == {"asking"}
    assert unseen_for < 2.0  # marked within RECHECK_S and a batch, not only when it joined
    assert statuses == ["waiting"]


def test_a_bots_mark_left_waiting_is_written_within_the_batch_though_none_asks_again(
    own_valkey,
):
    """A mark made just after the process wrote its marks waits for the next write: at most
    ``SEEN_BATCH_S`` (0.25 s) later, whether or not any bot asks again (a bot that asks
    rarely must not look as if it had stopped). Two bots seeking different rulesets, so that
    they are never paired; services in this process, on a Valkey of their own."""
    other = next(name for name in RULESETS if name != DEFAULT)

    async def ask() -> tuple[float, float, dict[str, float], dict[str, float]]:
        services = Services.start(msgspec.structs.replace(LOADED, redis_url=own_valkey))
        league = services.league
        try:
            first = (await league.create_bot("First", "", "organizer"))[1]
            second = (await league.create_bot("Second", "", "organizer"))[1]
            await league.join(first, DEFAULT, 2, 30, 1)
            await league.join(second, other, 2, 30, 1)
            joined = time.time()
            await asyncio.sleep(0.3)
            asked = time.time()
            await league.next_decision(first, 0)  # its mark written at once
            await league.next_decision(second, 0)  # its mark left waiting
            right_after = (await league.store.pool())[1]
            await asyncio.sleep(0.6)  # no one asks meanwhile
            return joined, asked, right_after, (await league.store.pool())[1]
        finally:
            await services.stop()

    joined, asked, right_after, later = asyncio.run(ask())
    assert right_after["first"] >= asked and right_after["second"] <= joined
    assert later["second"] >= asked


def test_bots_marked_seen_together_only_where_they_are_in_the_pool(own_valkey):
    """``LeagueStore.seen`` writes many bots' marks in one script; a bot that has left the
    pool meanwhile is not marked (it would look as if it still asked)."""

    async def mark() -> dict[str, float]:
        store = open_store(own_valkey)
        try:
            league = store.league
            await league.seek("a", b"{}", 1.0)
            await league.seek("b", b"{}", 1.0)
            await league.seen({"a": 5.0, "b": 6.0, "gone": 7.0})
            await league.seen({})
            return (await league.pool())[1]
        finally:
            await store.aclose()

    seen = asyncio.run(mark())
    assert seen == {"a": 5.0, "b": 6.0}


def test_a_token_rotates_once_and_a_revoked_token_rotates_no_more_however_requests_race(
    league_valkey,
):
    """A rotation checked the token on the bot as first read, and wrote again on the bot as
    reread after a race: 20 rotations with one token each answered a new token (19 of them
    dead), and a rotation racing the organizer's revoke could land after it, leaving the
    revoked token's holder a working one. Now the token is checked on the document written:
    one rotation per token, and after a revoke no token works until the organizer gives one."""
    keys = key_hashes("racing-organizer")
    organizer = auth("racing-organizer")

    async def race(url: str) -> None:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            made = await http.post("/v1/bots", json={"name": "Racer"}, headers=organizer)
            token = made.json()["token"]
            rotations = await asyncio.gather(
                *(http.post("/v1/bots/Racer/token", headers=auth(token)) for _ in range(20))
            )
            codes = sorted(r.status_code for r in rotations)
            assert codes == [200] + [403] * 19, codes
            (token,) = [r.json()["token"] for r in rotations if r.status_code == 200]
            assert (await http.get("/v1/me/next", headers=auth(token))).status_code == 200

            for _ in range(6):  # each round a race: one landing after the revoke is enough
                rotate = [http.post("/v1/bots/Racer/token", headers=auth(token)) for _ in range(10)]
                revoke = http.post("/v1/bots/Racer/revoke", headers=organizer)
                answers = await asyncio.gather(revoke, *rotate)
                assert answers[0].status_code == 204, answers[0].text
                handed = [r.json()["token"] for r in answers[1:] if r.status_code == 200]
                assert len(handed) <= 1
                for held in [token, *handed]:
                    refused = await http.get("/v1/me/next", headers=auth(held))
                    assert refused.status_code == 403, (held, refused.text)
                given = await http.post("/v1/bots/Racer/token", headers=organizer)
                token = given.json()["token"]

    with ThreadServer(league_valkey, organizer_keys=keys) as keyed:
        asyncio.run(race(keyed.url))


def test_a_rotated_or_revoked_bot_token_plays_none_of_its_tournaments_tables_any_more(client):
    """A bot's entrant token (which every seat token of its tables is) is derived from its
    bot token, and stayed its entry's after the bot token was rotated or revoked: the old
    token's holder, who could compute it, played the bot's tables, made before and after,
    while the bot's new token found no turn. Now a rotation moves the entry, and the seats
    of its tables in play, to the entrant token of the new token; a revoke to none."""
    names = ["Rekeyed A", "Rekeyed B", "Rekeyed C"]
    tokens = [_bot(client, name) for name in names]
    spec = {"ruleset": DEFAULT, "entrants": 2, "deadline_s": 600}
    tournaments = [client.post("/v1/tournaments", json=spec).json()["id"] for _ in range(2)]

    def enter(tournament_id: str, token: str) -> str:
        path = f"/v1/tournaments/{tournament_id}/entrants"
        entered = client.post(path, json={"name": "x"}, headers=auth(token))
        assert entered.status_code == 201, entered.text
        return entered.json()["token"]

    def turn_of(token: str) -> dict:
        step = client.get("/v1/me/next", headers=auth(token))
        assert step.status_code == 200, step.text
        return step.json()

    def move(token: str, step: dict) -> httpx.Response:
        turn = step["turn"]
        body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
        return client.post(f"/v1/me/games/{step['game_id']}/moves", headers=auth(token), json=body)

    # a table in play: its seat moves to the new token's entrant token at the rotation
    old = enter(tournaments[0], tokens[0])
    other = enter(tournaments[0], tokens[1])
    step = turn_of(old)
    assert step["status"] == "your_turn" and step["seat_token"] == old
    rotated = client.post(f"/v1/bots/{names[0]}/token", headers=auth(tokens[0]))
    new = rotated.json()["token"]
    gone = client.get("/v1/me/next", headers=auth(old))
    assert gone.status_code == 403 and gone.json()["code"] == "forbidden", gone.text
    stale = move(old, step)
    assert stale.status_code in (401, 403), stale.text
    plays = turn_of(new)
    assert plays["status"] == "your_turn" and plays["game_id"] == step["game_id"]
    assert plays["seat_token"] != old
    assert move(new, plays).status_code == 200

    # a table made after the rotation: the old entrant token holds no entry in it
    old_entry = enter(tournaments[1], new)
    client.post(f"/v1/bots/{names[0]}/token", headers=auth(new))
    enter(tournaments[1], tokens[2])  # the tournament starts: its table is made now
    refused = client.get("/v1/me/next", headers=auth(old_entry))
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden", refused.text

    # revoked: the entrant token derived from the revoked token plays its table no more
    waits = turn_of(other)
    assert client.post(f"/v1/bots/{names[1]}/revoke", headers=auth(tokens[1])).status_code == 204
    assert client.get("/v1/me/next", headers=auth(other)).status_code == 403
    assert waits["status"] == "your_turn" and move(other, waits).status_code in (401, 403)


def test_a_rotated_or_revoked_bot_token_leaves_no_seat_token_of_its_league_games_working(
    client, league_valkey
):
    """``/v1/me/next`` hands a league game's seat token to whoever holds the bot's token, and
    that seat token went on playing the game after the bot's token was rotated or revoked
    (the reason for either: someone else may hold it). Now the seats the bot holds in its
    arena and challenge games in play answer to new tokens, which the new bot token finds;
    another replica that remembers the game's record from before finds them too."""
    names = ["Seat Rekey A", "Seat Rekey B"]
    tokens = _challenge_game(client, names)

    def step_of(http: httpx.Client, token: str) -> dict:
        step = http.get("/v1/me/next", headers=auth(token)).json()
        assert step["status"] == "your_turn", step
        return step

    def move_body(step: dict) -> dict:
        return {"seq": step["turn"]["seq"], "move": step["turn"]["legal_moves"][0]}

    with (
        ThreadServer(league_valkey) as one,
        ThreadServer(league_valkey) as two,
        httpx.Client(base_url=one.url) as deciding,
        httpx.Client(base_url=two.url) as asking,
    ):
        stolen = step_of(deciding, tokens[0])  # each replica remembers the record now
        assert step_of(asking, tokens[0]) == stolen
        game = f"/v1/games/{stolen['game_id']}"
        rotated = client.post(f"/v1/bots/{names[0]}/token", headers=auth(tokens[0]))
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()["token"]
        for http in (client, deciding):
            old_seat = http.get(game + "/turn", headers=auth(stolen["seat_token"]))
            assert old_seat.status_code == 403, old_seat.text
            played = http.post(
                game + "/moves", json=move_body(stolen), headers=auth(stolen["seat_token"])
            )
            assert played.status_code == 403, played.text
        fresh = step_of(asking, new)  # the record it remembers is read again
        assert fresh["game_id"] == stolen["game_id"]
        assert fresh["seat_token"] != stolen["seat_token"]
        assert asking.get(game + "/turn", headers=auth(fresh["seat_token"])).status_code == 200
        path = f"/v1/me/games/{stolen['game_id']}/moves"  # decided once, on the record read again
        decided = deciding.post(path, json=move_body(stolen), headers=auth(new))
        assert decided.status_code == 200, decided.text

    # revoked: the seat token the bot's next decision had handed out plays no more
    handed = step_of(client, tokens[1])
    revoked = client.post(f"/v1/bots/{names[1]}/revoke", headers=auth(tokens[1]))
    assert revoked.status_code == 204, revoked.text
    seat = auth(handed["seat_token"])
    refused = client.post(game + "/moves", json=move_body(handed), headers=seat)
    assert refused.status_code == 403, refused.text
    turn = client.get(game + "/turn", headers=auth(fresh["seat_token"])).json()
    assert turn["status"] == "waiting", turn  # on B, whose old seat token played nothing


def test_the_old_bot_token_a_replica_still_takes_a_moment_gets_none_of_the_new_seat_tokens(
    client, league_valkey
):
    """A replica takes a bot token for a second after it was rotated elsewhere (``known_bot``
    remembers it), and in that second the old token was handed the seat tokens the rotation
    had just made: they played on after the second was over. Now a seat's token made at a
    rotation is handed to the new bot token alone."""
    names = ["Window A", "Window B"]
    tokens = _challenge_game(client, names)
    with ThreadServer(league_valkey) as other, httpx.Client(base_url=other.url) as replica:
        before = replica.get("/v1/me/next", headers=auth(tokens[0])).json()
        assert before["status"] == "your_turn", before  # the replica knows the old token now
        rotated = client.post(f"/v1/bots/{names[0]}/token", headers=auth(tokens[0]))
        assert rotated.status_code == 200, rotated.text
        new = client.get("/v1/me/next", headers=auth(rotated.json()["token"])).json()
        late = replica.get("/v1/me/next", headers=auth(tokens[0]))  # within the second
        assert late.status_code == 403, late.text
        assert new["seat_token"] not in late.text
        turn = before["turn"]
        body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
        path = f"/v1/me/games/{before['game_id']}/moves"
        played = replica.post(path, json=body, headers=auth(tokens[0]))
        assert played.status_code == 403, played.text
    turn = client.get(f"/v1/games/{new['game_id']}/turn", headers=auth(new["seat_token"]))
    assert turn.json()["seq"] == before["turn"]["seq"]  # nothing was played


def test_rotations_racing_leave_every_seat_to_the_token_the_account_holds(league_valkey):
    """Two rotations at once through two replicas: each rekeyed the bot's seats for its own
    new token, and where the losing one wrote last, the token the account held was refused
    its own seats for good. A seat is now keyed by the newest version of the account, and a
    seat left keyed for another token is keyed again when the account's token asks."""
    organizer = auth("racing-organizer")
    with _replicas(league_valkey, "racing-organizer") as (one, two, first, second):
        tokens = {}
        for name in ("Racing A", "Racing B", "Racing C", "Racing D", "Racing E"):
            made = first.post("/v1/bots", json={"name": name}, headers=organizer)
            tokens[name] = made.json()["token"]
        for rival in ("Racing B", "Racing C", "Racing D", "Racing E"):
            offer = {"opponent": "Racing A", "ruleset": DEFAULT, "deadline_s": 600, "rated": False}
            made = first.post("/v1/challenges", json=offer, headers=auth(tokens[rival]))
            accepted = first.post(
                f"/v1/challenges/{made.json()['id']}/accept", headers=auth(tokens["Racing A"])
            )
            assert accepted.status_code == 200, accepted.text

        async def race() -> list[str]:
            async with (
                httpx.AsyncClient(base_url=one.url, timeout=30) as a,
                httpx.AsyncClient(base_url=two.url, timeout=30) as b,
            ):
                answers = await asyncio.gather(
                    *(c.post("/v1/bots/Racing A/token", headers=organizer) for c in (a, b))
                )
            return [answer.json()["token"] for answer in answers]

        for _ in range(12):
            raced = asyncio.run(race())
            # the token the account holds: whichever rotation's write came last
            holder = [
                token
                for token in raced
                if first.get("/v1/me/next", params={"wait": 0}, headers=auth(token)).is_success
            ]
            assert len(holder) == 1, raced
            for http in (first, second):
                step = http.get("/v1/me/next", params={"wait": 0}, headers=auth(holder[0]))
                assert step.status_code == 200, step.text
                assert step.json()["status"] == "your_turn", step.json()
                turn = http.get(
                    f"/v1/games/{step.json()['game_id']}/turn",
                    headers=auth(step.json()["seat_token"]),
                )
                assert turn.status_code == 200, turn.text


def test_a_game_made_after_a_rotation_is_no_seat_for_the_old_token_a_replica_takes(
    client, league_valkey
):
    """A game made after the rotation (a challenge accepted) had no record of whom its seats
    were for: a replica that still took the old bot token for a second handed it the new
    game's seat token, which played on."""
    tokens = [_bot(client, name) for name in ("Later A", "Later B")]
    offer = {"opponent": "Later B", "ruleset": DEFAULT, "deadline_s": 600, "rated": False}
    with ThreadServer(league_valkey) as other, httpx.Client(base_url=other.url) as replica:
        assert replica.get("/v1/me/next", params={"wait": 0}, headers=auth(tokens[0])).is_success
        made = client.post("/v1/challenges", json=offer, headers=auth(tokens[0])).json()
        rotated = client.post("/v1/bots/Later A/token", headers=auth(tokens[0]))
        new = rotated.json()["token"]
        accepted = client.post(f"/v1/challenges/{made['id']}/accept", headers=auth(tokens[1]))
        assert accepted.status_code == 200, accepted.text
        late = replica.get("/v1/me/next", params={"wait": 0}, headers=auth(tokens[0]))
        assert late.status_code == 403, late.text
        step = replica.get("/v1/me/next", params={"wait": 0}, headers=auth(new)).json()
        assert step["status"] == "your_turn" and step["game_id"] == accepted.json()["game_id"]


def test_a_record_rekeyed_before_its_game_was_made_is_followed_by_the_game(client, league_valkey):
    """A rotation between a game's record and its creation (the account seats of
    ``POST /v1/games``) rekeyed the record, found no game to rekey, and the game was then
    made with the token of before: the bot was handed a seat token its game refused, for
    good. The record is written here as such a rotation leaves it."""
    tokens = _challenge_game(client, ["Behind A", "Behind B"])
    step = client.get("/v1/me/next", params={"wait": 0}, headers=auth(tokens[0])).json()
    game_id = step["game_id"]
    store = redis.Redis.from_url(league_valkey)
    record = decode(store.hget("{league}:games", game_id), LeagueGame)
    index = record.bots.index("behind a")
    tokens_now = list(record.seat_tokens)
    tokens_now[index] = f"{game_id}.rekeyed-before-the-game-was-made"
    rekeyed = msgspec.structs.replace(record, seat_tokens=tokens_now)
    store.hset("{league}:games", game_id, msgspec.msgpack.encode(rekeyed))
    store.close()
    with ThreadServer(league_valkey) as other, httpx.Client(base_url=other.url) as fresh:
        handed = fresh.get("/v1/me/next", params={"wait": 0}, headers=auth(tokens[0])).json()
        assert handed["seat_token"] == tokens_now[index]
        turn = fresh.get(f"/v1/games/{game_id}/turn", headers=auth(handed["seat_token"]))
        assert turn.status_code == 200, turn.text


def test_an_account_seat_made_after_a_rotation_is_none_of_the_old_token_s(league_valkey):
    """The seats an organizer gives its bots in ``POST /v1/games`` had no record of whom
    their tokens were for: a replica that took the old bot token a second more handed it
    the seat of a game made after the rotation."""
    organizer = auth("seating-organizer")
    with _replicas(league_valkey, "seating-organizer") as (_, _, first, replica):
        old = first.post("/v1/bots", json={"name": "Seated A"}, headers=organizer).json()
        old = old["token"]
        assert replica.get("/v1/me/next", params={"wait": 0}, headers=auth(old)).is_success
        rotated = first.post("/v1/bots/Seated A/token", headers=organizer)
        assert rotated.status_code == 200, rotated.text
        body = {"ruleset": DEFAULT, "seats": [{"account": "Seated A"}, {"bot": "random"}]}
        made = first.post("/v1/games", json=body, headers=organizer)
        assert made.status_code == 201, made.text
        late = replica.get("/v1/me/next", params={"wait": 0}, headers=auth(old))
        assert late.status_code == 403, late.text
        new = rotated.json()["token"]
        step = replica.get("/v1/me/next", params={"wait": 0}, headers=auth(new)).json()
        assert step["status"] == "your_turn" and step["game_id"] == made.json()["id"], step


def _handed_a_webhook_seat(client: httpx.Client, prefix: str) -> tuple[list[str], dict]:
    """Bots ``<prefix> A`` (with a webhook) and ``B``, in a challenge game; A drops its
    webhook and is handed its seat's token: their tokens, and A's next decision."""
    name = f"{prefix} A"
    hooked = client.post("/v1/bots", json={"name": name, "webhook_url": "https://example.com/b"})
    assert hooked.status_code == 201, hooked.text
    tokens = [hooked.json()["token"], _bot(client, f"{prefix} B")]
    offer = {"opponent": f"{prefix} B", "ruleset": DEFAULT, "deadline_s": 600, "rated": False}
    challenge = client.post("/v1/challenges", json=offer, headers=auth(tokens[0])).json()
    accepted = client.post(f"/v1/challenges/{challenge['id']}/accept", headers=auth(tokens[1]))
    assert accepted.status_code == 200, accepted.text
    path = f"/v1/bots/{name}/webhook"
    dropped = client.post(path, json={"webhook_url": None}, headers=auth(tokens[0]))
    assert dropped.status_code == 200, dropped.text
    assert wait_until(
        lambda: client.get("/v1/me/next", headers=auth(tokens[0])).json()["status"] == "your_turn"
    )
    return tokens, client.get("/v1/me/next", headers=auth(tokens[0])).json()


def test_a_seat_of_a_bot_that_dropped_its_webhook_is_rekeyed_too(client, league):
    """A seat the referee played through the bot's webhook was left at a rotation, as its
    token was never handed out; but a bot that dropped its webhook is handed it by
    ``/v1/me/next``, and that token played on after the rotation and the revoke."""
    tokens, handed = _handed_a_webhook_seat(client, "Hooked")
    game = f"/v1/games/{handed['game_id']}"
    rotated = client.post("/v1/bots/Hooked A/token", headers=auth(tokens[0]))
    assert rotated.status_code == 200, rotated.text
    stale = client.get(game + "/turn", headers=auth(handed["seat_token"]))
    assert stale.status_code == 403, stale.text
    # the seat is the bot's to play now: a webhook set again does not take it back unplayed
    new = rotated.json()["token"]
    again = client.post(
        "/v1/bots/Hooked A/webhook",
        json={"webhook_url": "https://example.com/bot"},
        headers=auth(new),
    )
    assert again.status_code == 200, again.text
    step = client.get("/v1/me/next", params={"wait": 0}, headers=auth(new)).json()
    assert step["status"] == "your_turn" and step["game_id"] == handed["game_id"], step


def test_a_webhook_seat_handed_out_is_rekeyed_after_its_webhook_came_back(client, league):
    """A bot that dropped its webhook is handed its webhook seat's token; with a webhook set
    again before the rotation, the rotation left the seat as the referee's to play through
    the webhook, and the token handed out played on."""
    tokens, handed = _handed_a_webhook_seat(client, "Rehooked")
    game, path = f"/v1/games/{handed['game_id']}", "/v1/bots/Rehooked A/webhook"
    back = client.post(
        path, json={"webhook_url": "https://example.com/bot"}, headers=auth(tokens[0])
    )
    assert back.status_code == 200, back.text
    rotated = client.post("/v1/bots/Rehooked A/token", headers=auth(tokens[0]))
    assert rotated.status_code == 200, rotated.text
    stale = client.get(game + "/turn", headers=auth(handed["seat_token"]))
    assert stale.status_code == 403, stale.text
    # the seat is the bot's to play (with its new token), as a seat rekeyed is
    step = client.get("/v1/me/next", params={"wait": 0}, headers=auth(rotated.json()["token"]))
    assert step.json()["game_id"] == handed["game_id"], step.text


def test_a_rotation_the_store_fails_after_writing_gives_its_token_and_the_rest_follows(
    client, monkeypatch
):
    """A rotation writes the bot's account first, then rekeys its entries and seats. A store
    failure between the two answered 503: the new token was lost with it, the old one was
    dead, and the bot could not rotate again. Now the answer gives the new token, and the
    rekey is retried in the background until it is whole."""
    names = ["Flaky Store A", "Flaky Store B"]
    tokens = [_bot(client, name) for name in names]
    spec = {"ruleset": DEFAULT, "entrants": 2, "deadline_s": 600}
    tournament = client.post("/v1/tournaments", json=spec).json()["id"]
    path = f"/v1/tournaments/{tournament}/entrants"
    entries = [
        client.post(path, json={"name": f"flaky {i}"}, headers=auth(token)).json()["token"]
        for i, token in enumerate(tokens)
    ]
    assert client.get("/v1/me/next", headers=auth(entries[0])).json()["status"] == "your_turn"
    real, failed = tournaments_module.TournamentService.rekey_entrant, []

    async def flaky(self, *args):
        if not failed:
            failed.append(args)
            raise redis.ConnectionError("the store went away")
        return await real(self, *args)

    monkeypatch.setattr(tournaments_module.TournamentService, "rekey_entrant", flaky)
    rotated = client.post(f"/v1/bots/{names[0]}/token", headers=auth(tokens[0]))
    assert rotated.status_code == 200, rotated.text
    assert failed, "the store did not fail where the test meant it to"
    new = rotated.json()["token"]
    assert wait_until(
        lambda: client.get("/v1/me/next", headers=auth(entries[0])).status_code == 403
    ), "the old entrant token still plays"
    plays = client.get("/v1/me/next", headers=auth(new)).json()
    assert plays["status"] == "your_turn" and plays["seat_token"] != entries[0]


def test_a_revoke_the_store_fails_after_writing_takes_the_bot_out_of_the_arena_anyway(
    client, monkeypatch
):
    """A revoke took the bot out of the arena before its tolerant rekey: a store failure
    there answered 503 with the revoke written, and the bot, its token gone, sat in the
    arena to be paired. Now the revoke is answered, and the rest is retried."""
    token = _bot(client, "Flaky Revoke")
    joined = client.post("/v1/arena", json={"ruleset": DEFAULT}, headers=auth(token))
    assert joined.is_success, joined.text
    assert client.get("/v1/bots/Flaky Revoke").json()["in_arena"]
    real, failed = LeagueStore.leave_at, []

    async def flaky(self, key, version):
        if key == "flaky revoke" and not failed:
            failed.append(key)
            raise redis.ConnectionError("the store went away")
        return await real(self, key, version)

    monkeypatch.setattr(LeagueStore, "leave_at", flaky)
    revoked = client.post("/v1/bots/Flaky Revoke/revoke", headers=auth(token))
    assert revoked.status_code == 204, revoked.text
    assert failed == ["flaky revoke"], "the store did not fail where the test meant it to"
    assert wait_until(lambda: not client.get("/v1/bots/Flaky Revoke").json()["in_arena"])
    assert client.get("/v1/me/next", headers=auth(token)).status_code == 403
    # a retry that comes after the bot was given a token again, and joined, leaves it there
    failed.clear()
    revoked = client.post("/v1/bots/Flaky Revoke/revoke")  # its organizer (this address)
    assert revoked.status_code == 204 and failed == ["flaky revoke"], revoked.text
    token = client.post("/v1/bots/Flaky Revoke/token").json()["token"]
    joined = client.post("/v1/arena", json={"ruleset": DEFAULT}, headers=auth(token))
    assert joined.is_success, joined.text
    time.sleep(1.0)  # the retry's first pause is 0.5 s
    assert client.get("/v1/me/next", headers=auth(token)).status_code == 200
    assert client.get("/v1/bots/Flaky Revoke").json()["in_arena"]


def test_a_name_read_free_while_a_bot_took_it_is_not_remembered_free(own_valkey):
    """A name looked up while this process made a bot of it was remembered as no bot's for
    a second: a seat took the new bot's very name."""

    async def run() -> None:
        store = open_store(own_valkey)
        try:
            league = Services(store, LOADED).league
            await league.looks_ready()
            await asyncio.gather(
                league.refuse_bot_names([("seats[0].name", "Raced Look")]),
                league.create_bot("Raced Look", "", "a127.0.0.1"),
            )
            with pytest.raises(Refusal, match="looks like"):
                await league.refuse_bot_names([("seats[0].name", "Raced Look")])
        finally:
            await store.aclose()

    asyncio.run(run())


def test_the_rekeys_left_to_retry_end_when_the_process_stops(own_valkey, monkeypatch):
    """A rekey the store failed is retried in the background for about 30 s; a process
    that stopped meanwhile left those retries running past its store."""

    async def run() -> None:
        store = open_store(own_valkey)
        league = Services(store, LOADED).league
        try:
            await league.create_bot("Stopping", "", "a127.0.0.1")

            async def failing(self, *args):
                raise redis.ConnectionError("the store went away")

            monkeypatch.setattr(type(league), "rekey_league_seats", failing)
            await league.rotate("Stopping", None, "a127.0.0.1")
            retries = list(league._rekeying)
            assert len(retries) == 1 and not retries[0].done()
            await league.stop()
            assert retries[0].cancelled() and not league._rekeying
        finally:
            await store.aclose()

    asyncio.run(run())


def test_answers_racing_for_one_challenge_make_one_game_or_none(client, league):
    """20 accepts of one challenge at once: one was accepted, 19 refused with 409, and each
    of them had made a game first, left running with no one holding its seats. With 3
    accepts racing a decline, the challenge could end declined beside 3 games. Now the
    answer is written first: one game for an accepted challenge, none for a declined one."""
    a, b = _bot(client, "Answered A"), _bot(client, "Answered B")
    offer = {"opponent": "Answered B", "ruleset": DEFAULT, "deadline_s": 30}

    def games_of_the_pair() -> set[str]:
        listed = client.get("/v1/games", params={"limit": 100}).json()["games"]
        names = {"Answered A", "Answered B"}
        return {g["id"] for g in listed if set(g["seats"]) == names}

    async def answer_at_once(challenge_id: str, answers: list[str]) -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=league.url, timeout=30) as http:
            return await asyncio.gather(
                *(
                    http.post(
                        f"/v1/challenges/{challenge_id}/{answer}",
                        headers=auth(b),
                        json={"reason": "later"} if answer == "decline" else None,
                    )
                    for answer in answers
                )
            )

    challenge = client.post("/v1/challenges", json=offer, headers=auth(a)).json()
    replies = asyncio.run(answer_at_once(challenge["id"], ["accept"] * 20))
    codes = sorted(r.status_code for r in replies)
    assert codes == [200] + [409] * 19, codes
    (accepted,) = [r.json() for r in replies if r.status_code == 200]
    assert games_of_the_pair() == {accepted["game_id"]}
    game = client.get(f"/v1/games/{accepted['game_id']}")
    assert game.status_code == 200

    for _ in range(3):  # each a race: an accept written before the decline is one game
        before = games_of_the_pair()
        challenge = client.post("/v1/challenges", json=offer, headers=auth(a)).json()
        replies = asyncio.run(answer_at_once(challenge["id"], ["accept"] * 3 + ["decline"]))
        assert sorted(r.status_code for r in replies) == [200, 409, 409, 409]
        shown = client.get(f"/v1/challenges/{challenge['id']}").json()
        made = games_of_the_pair() - before
        if shown["status"] == "accepted":
            assert made == {shown["game_id"]}
        else:
            assert shown["status"] == "declined" and made == set()


def test_a_rekey_from_an_older_version_of_the_bot_brings_no_token_back(client, league_valkey):
    """A rotation's rekey that lands after a later revoke's set the entry, and its seats, to
    the entrant token of the rotated token: the holder of a revoked token played on. Each
    rekey now carries the version of the bot's account it follows, and an older one changes
    nothing; the seats at the tables in play follow the entry as the tournament holds it."""
    names = ["Versioned A", "Versioned B"]
    tokens = [_bot(client, name) for name in names]
    spec = {"ruleset": DEFAULT, "entrants": 2, "deadline_s": 600}
    tournament_id = client.post("/v1/tournaments", json=spec).json()["id"]
    entries = []
    for token in tokens:
        path = f"/v1/tournaments/{tournament_id}/entrants"
        entries.append(client.post(path, json={"name": "x"}, headers=auth(token)).json()["token"])
    key = names[0].casefold()
    revoked, stale = f"{tournament_id}.revoked", f"{tournament_id}.stale-rotation"

    async def race() -> None:
        store = open_store(league_valkey)
        try:
            tournaments = Services(store, LOADED).tournaments
            await tournaments.rekey_entrant(tournament_id, key, revoked, keyed=9)
            await tournaments.rekey_entrant(tournament_id, key, stale, keyed=8)  # late, older
        finally:
            await store.aclose()

    asyncio.run(race())
    view = client.get(f"/v1/tournaments/{tournament_id}").json()
    (game_id,) = [t["game_id"] for t in view["rounds"][0]]
    for token in (entries[0], stale):
        assert client.get("/v1/me/next", headers=auth(token)).status_code == 403, token
        turn = client.get(f"/v1/games/{game_id}/turn", headers=auth(token))
        assert turn.status_code == 403, (token, turn.text)
    assert client.get(f"/v1/games/{game_id}/turn", headers=auth(revoked)).status_code == 200


def test_a_name_that_looks_like_a_bots_is_no_other_bots_nor_any_seats(client):
    """Bot names were unique by case alone: 'Аda' (a Cyrillic А), 'Adɑ' (a Latin alpha)
    and 'Ada' were three bots on every page, and a plain seat of POST /v1/games or a
    claimed seat took a bot's very name. What a name looks like is its UTS #39 skeleton."""
    token = _bot(client, "Lookalike Ada")
    for twin in ("Lookalike \u0410da", "Lookalike Ad\u0251", "LOOKALIKE ADA", "Lookal\u0131ke Ada"):
        again = client.post("/v1/bots", json={"name": twin})
        assert again.status_code == 409, (twin, again.text)
        assert again.json()["code"] == "bot-name-taken" and again.json()["field"] == "name"
    assert client.get("/v1/bots/Lookalike Ad\u0251").status_code == 404  # none was made
    _bot(client, "Lookalike Eda")  # a name that only resembles another's is its own
    seats = [{"name": "someone"}, {"name": "lookalike \u0430da"}]
    made = client.post("/v1/games", json={"ruleset": DEFAULT, "seats": seats})
    assert made.status_code == 409, made.text
    assert made.json()["code"] == "bot-name-taken" and made.json()["field"] == "seats[1].name"
    seats = [{"name": "someone"}, {}]
    made = client.post("/v1/games", json={"ruleset": DEFAULT, "seats": seats})
    assert made.status_code == 201, made.text
    game_id = made.json()["id"]
    claim = client.post(f"/v1/games/{game_id}/seats", json={"name": "Lookalike Ada"})
    assert claim.status_code == 409 and claim.json()["field"] == "name", claim.text
    assert client.get(f"/v1/games/{game_id}").json()["status"] == "waiting"  # no change
    assert client.post(f"/v1/games/{game_id}/seats", json={"name": "Eve"}).status_code == 201
    # a name the referee gives its own seats is no bot's
    for house in ("Random (house bot)", "Any(house bot)", "X (H\u043euse bot)", "Webhook Bot"):
        named = client.post("/v1/bots", json={"name": house})
        assert named.status_code == 422, (house, named.text)
        assert named.json()["code"] == "invalid-name" and named.json()["field"] == "name"
    # an organizer's account seat shows no other bot's name: 'Iris' looks like both 'lris'
    # ('I' as 'l') and 'iris' (casefolded), which look like no one else
    _bot(client, "lris")
    iris = _bot(client, "iris")
    seats = [{"account": "lris", "name": "Iris"}, {"bot": "random"}]
    made = client.post("/v1/games", json={"ruleset": DEFAULT, "seats": seats, "deadline_s": 60})
    assert made.status_code == 409 and made.json()["field"] == "seats[0].name", made.text
    # a claim is checked as the game is first: a game that is not, an invite code not given
    claim = client.post("/v1/games/nogame/seats", json={"name": "iris"})
    assert claim.status_code == 404, claim.text
    invited = {"ruleset": DEFAULT, "seats": [{"name": "host"}, {}], "invite_code": "secret-code"}
    game = client.post("/v1/games", json=invited).json()["id"]
    claim = client.post(f"/v1/games/{game}/seats", json={"name": "iris"})
    assert claim.status_code == 403, claim.text
    claim = client.post(
        f"/v1/games/{game}/seats", json={"name": "iris", "invite_code": "secret-code"}
    )
    assert claim.status_code == 409 and claim.json()["code"] == "bot-name-taken", claim.text
    assert iris
    # a name no bot had, a bot's from now on: refused at once (this replica made the bot)
    fresh = {"ruleset": DEFAULT, "seats": [{"name": "Fresh Look"}, {}]}
    assert client.post("/v1/games", json=fresh).status_code == 201
    _bot(client, "Fresh Look")
    taken = client.post("/v1/games", json=fresh)
    assert taken.status_code == 409 and taken.json()["field"] == "seats[0].name", taken.text
    # the bot itself takes a seat under its name (its organizer seats it), as it looks, but
    # not under another bot's
    seats = [{"account": "Lookalike Ada", "name": "Lookalike Eda"}, {"bot": "random"}]
    body = {"ruleset": DEFAULT, "seats": seats, "deadline_s": 60}
    made = client.post("/v1/games", json=body)
    assert made.status_code == 409 and made.json()["field"] == "seats[0].name", made.text
    seats[0]["name"] = "LOOKALIKE ADA"
    made = client.post("/v1/games", json=body)
    assert made.status_code == 201 and made.json()["seats"][0]["name"] == "LOOKALIKE ADA"
    assert client.get("/v1/me/next", headers=auth(token)).status_code == 200


def test_the_bots_made_before_their_looks_were_kept_are_put_in_them_first(own_valkey):
    """A bot kept before its name's looks were (a store of an earlier version) is put in
    them before any name is compared with them: a look-alike of it is refused from the
    first on, and the bots are read once for all replicas (a flag in the store)."""

    async def run() -> None:
        store = open_store(own_valkey)
        try:
            doc = BotDoc("Old Timer", "", "a127.0.0.1", bot_token_hash("bot-x"), 0, "active")
            assert await store.league.save_bot(bot_key(doc.name), "", encode(doc))
            assert await store.league.looks_held(name_looks("0ld Timer")) == [None, None]
            first, second = Services(store, LOADED).league, Services(store, LOADED).league
            with pytest.raises(Refusal, match="looks like"):
                await first.create_bot("0ld Timer", "", "a127.0.0.1")
            assert "old timer" in await store.league.looks_held(name_looks("0ld Timer"))
            with pytest.raises(Refusal, match="looks like"):
                await second.refuse_bot_names([("name", "0ld Timer")])
            assert await second.is_bot_name("OLD TIMER")
            assert await store.league.index_looks(lambda blob: ["x"]) == 0  # done once
        finally:
            await store.aclose()

    asyncio.run(run())


def test_an_entrant_that_is_no_bot_account_may_not_take_a_bots_name(client):
    """Entrant names are unique in a tournament, and a bot account enters under its own
    name: an anonymous entrant who registered "squatted bot" first kept the bot out. A
    bot account's name is now the bot's alone (409 bot-name-taken naming the field)."""
    token = _bot(client, "Squatted Bot")
    made = client.post("/v1/tournaments", json={"ruleset": DEFAULT, "entrants": 3}).json()
    path = f"/v1/tournaments/{made['id']}/entrants"
    squat = client.post(path, json={"name": "squatted bot"})
    assert squat.status_code == 409, squat.text
    assert squat.json()["code"] == "bot-name-taken" and squat.json()["field"] == "name"
    entered = client.post(path, json={"name": "x"}, headers=auth(token))
    assert entered.status_code == 201 and entered.json()["name"] == "Squatted Bot"
    assert client.post(path, json={"name": "someone else"}).status_code == 201
    twin = client.post(path, json={"name": "Some\u043ene e1se"})  # a Cyrillic о, a one
    assert twin.status_code == 409 and twin.json()["code"] == "entrant-name-taken", twin.text
