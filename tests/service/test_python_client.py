"""The Python client and its bot loop against a real referee over HTTP."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

# The client is its own distribution (clients/python); use it in place, as an editable
# install of clients/python would.
sys.path.insert(0, str(Path(__file__).parents[2] / "clients" / "python"))

from referee_client import (
    AsyncClient,
    Client,
    RefereeError,
    run_arena,
    run_bot,
    run_bot_async,
    run_entrant_async,
)

from referee.bots import get_bot
from referee.games import verify
from referee.tools.launch import free_port


@pytest.fixture
def referee_url(server):
    return server.url


def test_a_bot_is_one_function(referee_url):
    """A reference bot is handed to run_bot as it is (it reads ``turn["legal_moves"]``; a
    TypeError before), and each decision is one request: the move, answered with the next
    turn."""
    sent: list[str] = []
    http = httpx.Client(
        base_url=referee_url,
        timeout=75,
        event_hooks={"request": [lambda request: sent.append(request.method)]},
    )
    with Client(referee_url) as client, Client(referee_url, http=http) as bot_client:
        game = client.create_game("choice", [{"name": "me"}], deadline_s=0)
        bot = get_bot("choice", "greedy")
        final = run_bot(referee_url, game.seats[0].token, bot, client=bot_client)
        assert final.status == "finished"
        record = client.record(game.id)
    assert record["finished"] and verify(record).ok
    assert sent.count("GET") == 1 and sent.count("POST") == len(record["decisions"])


def test_async_bots_play_a_chopta_game(referee_url):
    async def scenario():
        async with AsyncClient(referee_url) as client:
            game = await client.create_game("chopta", 2, {"target": 15}, deadline_s=0)
            bots = [get_bot("chopta", "strong"), get_bot("chopta", "random", 1)]

            async def play(seat):
                async def choose(turn):
                    return bots[seat]({"legal_moves": turn.legal_moves, "view": turn.view})

                return await run_bot_async(referee_url, game.seats[seat].token, choose)

            finals = await asyncio.gather(play(0), play(1))
            return finals, await client.game(game.id)

    finals, public = asyncio.run(scenario())
    assert all(f.status == "finished" for f in finals)
    assert public["status"] == "finished" and public["ranking"]


def test_refusals_raise_with_the_rule(referee_url):
    with Client(referee_url) as client:
        with pytest.raises(RefereeError) as refused:
            client.create_game("choice", [{"name": "a"}], {"schedule": [0]})
        assert refused.value.code == "invalid-option"
        assert refused.value.problem.field == "options.schedule[0]"
        game = client.create_game("choice", 1)
        token = game.seats[0].token
        turn = client.turn(game.id, token)
        with pytest.raises(RefereeError) as stale:
            client.move(game.id, token, turn.seq + 3, turn.legal_moves[0])
        assert stale.value.status == 409 and stale.value.problem.current_seq == turn.seq


def test_run_bot_logs_a_refused_move_and_plays_on(referee_url, caplog):
    with Client(referee_url) as client:
        game = client.create_game("choice", 1, deadline_s=0)

    def stubborn(turn):
        return {"type": "mark", "fifth": 6, "pairs": [[6, 6], [6, 6]]}  # rarely legal

    with caplog.at_level(logging.ERROR, logger="referee_client"):
        final = run_bot(referee_url, game.seats[0].token, stubborn)
    assert final.status == "finished"
    assert any("refused" in r.message and "dice-not-in-roll" in r.message for r in caplog.records)


def test_the_client_waits_out_a_rate_limit_and_a_restart(valkey):
    """A 429 (with Retry-After) and a referee that cannot be reached for a moment are waited
    out: every call answers, none raises."""
    from conftest import ThreadServer

    with ThreadServer(valkey, rate_per_token=3) as limited, Client(limited.url) as client:
        game = client.create_game("choice", 2)
        token = game.seats[0].token
        began = time.monotonic()
        turns = [client.turn(game.id, token) for _ in range(8)]
        assert all(t.seq == 0 for t in turns)
        assert time.monotonic() - began >= 1, "some calls waited for the next second"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    later = threading.Timer(
        1.5, lambda: started.append(ThreadServer(valkey, port=port).__enter__())
    )
    started: list = []
    later.start()
    try:
        with Client(url, patience=30) as client:  # nothing listens yet: connection refused
            assert client.rulesets()
    finally:
        later.join()
        if started:
            started[0].__exit__()


def test_the_async_client_plays_a_tournament(referee_url):
    """The async client has the tournament calls: create, register, the entrants' loop, the
    standings."""
    spec = {"ruleset": "chopta", "entrants": 2, "deadline_s": 0, "options": {"target": 10}}

    async def scenario():
        async with AsyncClient(referee_url) as client:
            tournament = (await client.create_tournament(spec))["id"]
            entrants = [await client.register(tournament, f"bot{i}") for i in range(2)]
            bots = [get_bot("chopta", "greedy"), get_bot("chopta", "random", 1)]
            await asyncio.gather(
                *(
                    run_entrant_async(referee_url, entrant.token, bots[i])
                    for i, entrant in enumerate(entrants)
                )
            )
            return await client.tournament(tournament)

    view = asyncio.run(scenario())
    assert view["status"] == "finished"
    assert sorted(row["games"] for row in view["standings"]) == [1, 1]


class _LosesFirstAnswers(httpx.BaseTransport):
    """Sends each request on, but loses the first answer to each POST (as a connection cut
    after the referee answered would): the client cannot tell what was made."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.seen: set[str] = set()
        self.replayed: list[bool] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        reply = self.inner.handle_request(request)
        if request.method == "POST":
            reply.read()
            self.replayed.append(reply.headers.get("idempotent-replayed") == "true")
            key = request.headers["idempotency-key"]
            if key not in self.seen:
                self.seen.add(key)
                raise httpx.ReadError("the answer was lost", request=request)
        return reply


def test_a_creation_whose_answer_was_lost_is_retried_and_made_once(referee_url):
    """The client sends an Idempotency-Key with every creation, so its own retry after a lost
    answer gets the first answer again: one game, one seat, one entrant, and tokens that
    work."""
    from referee_client._client import PatientTransport

    transport = PatientTransport(patience=30)
    transport.inner = flaky = _LosesFirstAnswers()
    http = httpx.Client(base_url=referee_url, timeout=30, transport=transport)
    with Client(referee_url, http=http) as client:
        before = {g["id"] for g in http.get("/v1/games", params={"limit": 100}).json()["games"]}
        game = client.create_game("choice", [{"name": "a"}, {}], deadline_s=0)
        after = {g["id"] for g in http.get("/v1/games", params={"limit": 100}).json()["games"]}
        assert after - before == {game.id}
        seat = client.claim_seat(game.id, "b")
        seats = client.game(game.id)["seats"]
        assert [s["claimed"] for s in seats] == [True, True] and seat.seat == 1
        assert client.turn(game.id, seat.token).seat == 1  # the replayed token is the seat's
        tournament = client.create_tournament({"ruleset": "choice", "entrants": 2})
        entrant = client.register(tournament["id"], "c")
        assert client.tournament(tournament["id"])["entrants"] == ["c"] and entrant.entrant == 0
    # each lost answer was followed by its replay
    assert flaky.replayed == [False, True] * 4


def test_the_arena_loop_plays_a_bot_accounts_games_and_leaves_when_stopped(referee_url):
    """run_arena: two bot accounts seek games, play them one request per decision (a random
    choice each), and leave the pool when stopped; their games are rated."""
    suffix = str(time.monotonic_ns())[-8:]
    names = [f"client {suffix} {i}" for i in range(2)]
    with httpx.Client(base_url=referee_url) as http:
        tokens = [http.post("/v1/bots", json={"name": name}).json()["token"] for name in names]
        stop = threading.Event()
        made: list[int] = []
        threads = [
            threading.Thread(
                target=lambda token=token, seed=seed: made.append(
                    run_arena(
                        referee_url,
                        token,
                        "choice",
                        get_bot("choice", "random", seed),
                        deadline_s=30,
                        wait=1,
                        stop=stop,
                    )
                )
            )
            for seed, token in enumerate(tokens)
        ]
        for thread in threads:
            thread.start()

        def rated() -> bool:
            profiles = [http.get(f"/v1/bots/{name}").json() for name in names]
            return all(p["ratings"] and p["ratings"][0]["games"] >= 1 for p in profiles)

        deadline = time.monotonic() + 60
        while not rated() and time.monotonic() < deadline:
            time.sleep(0.5)
        stop.set()
        for thread in threads:
            thread.join(30)
        assert rated()
        assert len(made) == 2 and all(made)
        assert not any(http.get(f"/v1/bots/{name}").json()["in_arena"] for name in names)


def test_a_bot_challenges_another_which_accepts_and_one_it_withdraws(referee_url):
    """Challenges through the client: made, withdrawn by the challenger (a refusal for the
    other bot), made again and accepted: the game reaches both bots."""
    with Client(referee_url) as client, httpx.Client(base_url=referee_url) as http:
        tokens = []
        for name in ("Client Challenger", "Client Challenged"):
            tokens.append(http.post("/v1/bots", json={"name": name}).json()["token"])
        offer = {"rated": False, "deadline_s": 30}
        first = client.challenge(tokens[0], "Client Challenged", "choice", **offer)
        with pytest.raises(RefereeError) as theirs:
            client.cancel_challenge(tokens[1], first["id"])
        assert theirs.value.code == "not-challenger"
        assert client.cancel_challenge(tokens[0], first["id"])["status"] == "canceled"
        assert client.challenge_of(first["id"])["status"] == "canceled"
        second = client.challenge(tokens[0], "Client Challenged", "choice", **offer)
        accepted = client.accept_challenge(tokens[1], second["id"])
        assert accepted["status"] == "accepted" and accepted["game_id"]
        steps = [client.next_decision(token, wait=5) for token in tokens]
        assert accepted["game_id"] in {step.game_id for step in steps}


def test_the_async_client_does_what_a_bot_account_does(referee_url):
    """The league's operations, awaitable: a challenge withdrawn, one declined, one accepted
    and its game's first decision made with ``decide_next``; the arena joined and left."""

    async def run() -> None:
        async with AsyncClient(referee_url) as client:
            tokens = []
            for name in ("Async Challenger", "Async Challenged"):
                made = await client.http.post("/v1/bots", json={"name": name})
                tokens.append(made.json()["token"])
            offer = {"rated": False, "deadline_s": 30}
            first = await client.challenge(tokens[0], "Async Challenged", "choice", **offer)
            withdrawn = await client.cancel_challenge(tokens[0], first["id"])
            assert withdrawn["status"] == "canceled"
            second = await client.challenge(tokens[0], "Async Challenged", "choice", **offer)
            await client.decline_challenge(tokens[1], second["id"], "later")
            assert (await client.challenge_of(second["id"]))["reason"] == "later"
            third = await client.challenge(tokens[0], "Async Challenged", "choice", **offer)
            accepted = await client.accept_challenge(tokens[1], third["id"])
            assert accepted["status"] == "accepted"
            for token in tokens:
                step = await client.next_decision(token, wait=5)
                if step.status == "your_turn":
                    assert step.game_id == accepted["game_id"] and step.turn is not None
                    turn = step.turn
                    after = await client.decide_next(
                        token, step.game_id, turn.seq, turn.legal_moves[0]
                    )
                    assert after.status in ("your_turn", "waiting")
                    break
            else:
                raise AssertionError("no bot had the game's first decision")
            assert (await client.join_arena(tokens[0], "choice", deadline_s=30))["ruleset"]
            await client.leave_arena(tokens[0])
            with pytest.raises(RefereeError) as theirs:
                await client.cancel_challenge(tokens[1], third["id"])
            assert theirs.value.code == "not-challenger"

    asyncio.run(run())


def test_an_idle_connection_is_opened_anew_before_the_referees_keep_alive_closes_it():
    """The referee closes a connection idle for ``REFEREE_KEEP_ALIVE_S`` (5 s, httpx's own
    expiry too): a request sent on it as it closes is lost unread, and a creation without an
    Idempotency-Key is not sent again. The client opens a new connection after 4 s idle."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    ports: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive

        def do_GET(self) -> None:
            ports.append(self.client_address[1])
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with Client(f"http://127.0.0.1:{server.server_port}") as client:
            for idle in (0.0, 1.0, 4.5):
                time.sleep(idle)
                assert client.http.get("/healthz").status_code == 200
    finally:
        server.shutdown()
        server.server_close()
    assert ports[0] == ports[1], "a connection idle for 1 s was not kept"
    assert ports[2] != ports[1], "a connection idle for 4.5 s was used again"
