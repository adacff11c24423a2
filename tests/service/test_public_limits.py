"""What keeps one client from using up the referee: every key it writes expires, quotas and
rate limits shared through Redis, caps on what one address may hold open."""

from __future__ import annotations

import contextlib
import hashlib
import socket
import threading
import time

import httpx
import pytest
from conftest import ThreadServer
from helpers import Monitor, auth, create, play_out, wait_until

from referee.service.limits import LEASE_AHEAD
from referee.settings import key_hashes
from referee.tools.launch import start_referee

JSON = {"content-type": "application/json"}


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


# -- who may create ------------------------------------------------------------------------------

KEYS = "first-organizer-key,sha256:" + hashlib.sha256(b"second-organizer-key").hexdigest()


@pytest.fixture(scope="module")
def keyed(valkey):
    with ThreadServer(valkey, organizer_keys=key_hashes(KEYS)) as running:
        yield running


def _body(seats=2, **extra):
    return {"ruleset": "choice", "seats": [{"name": f"s{i}"} for i in range(seats)], **extra}


def test_with_organizer_keys_creating_needs_one_and_nothing_else_does(keyed, redis_client):
    with httpx.Client(base_url=keyed.url) as http:
        missing = http.post("/v1/games", json=_body())
        assert missing.status_code == 401 and missing.json()["code"] == "organizer-key-required"
        assert missing.headers["content-type"] == "application/problem+json"
        wrong = http.post("/v1/games", json=_body(), headers=auth("not-a-key"))
        assert wrong.status_code == 403 and wrong.json()["code"] == "organizer-key-refused"
        # the key is checked before the body: no key and a bad body is 401, not 400
        assert http.post("/v1/games", content=b"{", headers=JSON).status_code == 401
        assert (
            http.post("/v1/games", content=b"{", headers={**JSON, **auth("x")}).status_code == 403
        )
        assert http.post("/v1/tournaments", content=b"{", headers=JSON).status_code == 401
        assert (
            http.post("/v1/tournaments", content=b"{", headers={**JSON, **auth("x")}).status_code
            == 403
        )
        spec = {"ruleset": "choice", "entrants": 2}
        assert http.post("/v1/tournaments", json=spec).status_code == 401
        assert http.post("/v1/tournaments", json=spec, headers=auth("x")).status_code == 403
        game = http.post("/v1/games", json=_body(), headers=auth("first-organizer-key"))
        assert game.status_code == 201, game.text
        other = http.post("/v1/games", json=_body(), headers=auth("second-organizer-key"))
        assert other.status_code == 201, "a key given as its SHA-256 works"
        made = http.post("/v1/tournaments", json=spec, headers=auth("first-organizer-key"))
        assert made.status_code == 201
        # everything else stays public: reading, registering, playing
        game_id = game.json()["id"]
        assert http.get(f"/v1/games/{game_id}").status_code == 200
        entrant = http.post(f"/v1/tournaments/{made.json()['id']}/entrants", json={"name": "a"})
        assert entrant.status_code == 201
    stored = b"".join(
        value
        for key in redis_client.scan_iter(match=f"{{game:{game_id}}}:*")
        if redis_client.type(key) == b"hash"
        for value in redis_client.hvals(key)
    )
    assert stored and b"first-organizer-key" not in stored, "keys are never stored in clear"


def test_invite_codes_guard_open_seats_and_registration(http):
    body = {"ruleset": "choice", "seats": [{"name": "host"}, {}], "invite_code": "let-me-in"}
    game = http.post("/v1/games", json=body).json()
    seats = f"/v1/games/{game['id']}/seats"
    for given in (None, "wrong"):
        claim = {"name": "guest"} | ({"invite_code": given} if given else {})
        refused = http.post(seats, json=claim)
        assert refused.status_code == 403 and refused.json()["code"] == "invite-code-refused"
        assert refused.json()["field"] == "invite_code"
    assert http.get(f"/v1/games/{game['id']}").json()["status"] == "waiting", "nothing changed"
    taken = http.post(seats, json={"name": "guest", "invite_code": "let-me-in"})
    assert taken.status_code == 201
    assert "let-me-in" not in http.get(f"/v1/games/{game['id']}").text
    spec = {"ruleset": "choice", "entrants": 2, "invite_code": "club"}
    tournament = http.post("/v1/tournaments", json=spec).json()
    entrants = f"/v1/tournaments/{tournament['id']}/entrants"
    assert http.post(entrants, json={"name": "a"}).status_code == 403
    assert http.post(entrants, json={"name": "a", "invite_code": "pub"}).status_code == 403
    assert http.post(entrants, json={"name": "a", "invite_code": "club"}).status_code == 201
    view = http.get(f"/v1/tournaments/{tournament['id']}").text
    assert "club" not in view and "invite" not in view


# -- quotas and rates, shared by replicas ---------------------------------------------------------


def test_a_token_past_its_rate_is_refused_with_retry_after_across_replicas(valkey):
    with (
        ThreadServer(valkey, rate_per_token=3) as one,
        ThreadServer(valkey, rate_per_token=3) as two,
        httpx.Client(base_url=one.url) as http,
    ):
        game = create(http, "choice", 2)
        token = auth(game["seats"][0]["token"])
        path = f"/v1/games/{game['id']}/turn"
        answers = []
        stop = time.time() + 3  # three seconds: each grants at most 3, whichever replica asks
        while time.time() < stop:
            url = (one if len(answers) % 2 else two).url + path
            sent = time.time()
            reply = httpx.get(url, headers=token)
            # counted in a second only if sent and answered within it (as the referee saw it)
            second = int(sent) if int(sent) == int(time.time()) else None
            answers.append((second, reply.status_code, reply))
        by_second: dict = {}
        for second, status, _ in answers:
            if second is not None:
                by_second.setdefault(second, []).append(status)
        for statuses in by_second.values():
            assert statuses.count(200) <= 3 and set(statuses) <= {200, 429}
        refused = next(reply for _, status, reply in answers if status == 429)
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["code"] == "rate-limited"
        other = httpx.get(one.url + path, headers=auth(game["seats"][1]["token"]))
        assert other.status_code == 200, "another token keeps its own budget"


def _leases_a_second_apart(server, valkey: str) -> int | None:
    """A new token's requests, one in each of ``LEASE_AHEAD`` + 1 seconds in a row: the
    leases that named its budget, watched with the server's MONITOR; None if a request was
    not sent and answered within its own second of the window (a stalled machine)."""
    with httpx.Client(base_url=server.url) as http:
        game = create(http, "choice", 2)
        token = game["seats"][0]["token"]
        name = "t" + hashlib.sha256(token.encode()).digest()[:10].hex()
        path = f"/v1/games/{game['id']}/turn"
        second = int(time.time())
        while int(time.time()) == second:  # start at the beginning of a second
            time.sleep(0.01)
        with Monitor(valkey) as monitor:
            start = int(time.time())
            for ahead in range(LEASE_AHEAD + 1):  # the middle of each second
                time.sleep(max(0.0, start + ahead + 0.5 - time.time()))
                sent = int(time.time())
                assert http.get(path, headers=auth(token)).status_code == 200
                if not sent == int(time.time()) == start + ahead:
                    return None
    return sum(c.startswith("EVALSHA") and f"{{{name}}}" in c for c in monitor.commands)


def test_a_bot_asking_about_once_a_second_leases_its_rate_once_for_several_seconds(valkey):
    """A bot that thinks between its requests finds a second of its own at each. Each lease
    takes a slice of the next ``LEASE_AHEAD`` seconds' budgets too, so requests a second apart
    lease once, not before each request (a Redis round trip each). Watched from outside: the
    leases that name the token's budget."""
    with ThreadServer(valkey, rate_per_token=100) as server:
        for _ in range(3):  # a window a stalled machine spoiled is played again
            leases = _leases_a_second_apart(server, valkey)
            if leases is not None:
                break
    assert leases == 1


def test_live_games_per_organizer_are_capped_until_one_finishes(valkey):
    with (
        ThreadServer(valkey, live_games_per_owner=2) as server,
        httpx.Client(
            base_url=server.url, transport=httpx.HTTPTransport(local_address="127.0.0.3")
        ) as http,
    ):
        body = {"ruleset": "chopta", "options": {"target": 1}, "deadline_s": 0}
        body["seats"] = [{"name": "a"}, {"name": "b"}]
        first = http.post("/v1/games", json=body).json()
        assert http.post("/v1/games", json=body).status_code == 201
        third = http.post("/v1/games", json=body)
        assert third.status_code == 429 and third.json()["code"] == "quota-exceeded"
        assert int(third.headers["retry-after"]) > 0
        play_out(http, first)
        assert http.post("/v1/games", json=body).status_code == 201, "a finished game frees one"


def test_seats_and_entrants_are_capped(valkey):
    with (
        ThreadServer(valkey, max_seats=3, max_entrants=4) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        too_many = http.post("/v1/games", json=_body(seats=4))
        assert too_many.status_code == 422 and too_many.json()["code"] == "too-many-seats"
        spec = {"ruleset": "choice", "entrants": 5}
        refused = http.post("/v1/tournaments", json=spec)
        assert refused.status_code == 422 and refused.json()["code"] == "too-many-entrants"


def test_open_streams_and_long_polls_per_address_are_capped_across_replicas(valkey):
    with (
        ThreadServer(valkey, max_waiting_per_address=3) as one,
        ThreadServer(valkey, max_waiting_per_address=3) as two,
        httpx.Client(transport=_from("127.0.0.4")) as http,
    ):
        game = http.post(one.url + "/v1/games", json=_body()).json()
        events = f"/v1/games/{game['id']}/events"
        with contextlib.ExitStack() as streams:
            for server in (one, one, two):
                reply = streams.enter_context(http.stream("GET", server.url + events))
                assert reply.status_code == 200
            for server in (one, two):
                refused = http.get(server.url + events)
                assert refused.status_code == 429, refused.text
                assert refused.json()["code"] == "too-many-waiting"
            # a long-poll is counted too; a turn that does not wait is not
            token = auth(game["seats"][0]["token"])
            turn = f"/v1/games/{game['id']}/turn"
            assert http.get(two.url + turn + "?wait=1", headers=token).status_code == 429
            assert http.get(two.url + turn, headers=token).status_code == 200
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the streams' ends are seen by their servers
            if http.get(two.url + turn + "?wait=0.1", headers=token).status_code == 200:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("closed streams were not given back")


# -- one abusive client beside a well-behaved bot -------------------------------------------------

PUBLIC_LIMITS = {
    "REFEREE_HEADER_TIMEOUT_S": "1",
    "REFEREE_MAX_CONNECTIONS_PER_ADDRESS": "64",
    "REFEREE_RATE_PER_TOKEN": "100",
    "REFEREE_RATE_PER_ADDRESS": "150",
    "REFEREE_MAX_WAITING_PER_ADDRESS": "20",
    "REFEREE_LIVE_GAMES_PER_ORGANIZER": "30",
}
ABUSER = "127.0.0.2"  # loopback answers on all of 127/8: a second client address
BOT = "127.0.0.5"


def _from(address: str) -> httpx.HTTPTransport:
    """Requests from another loopback address: each test's clients count on their own (the
    other tests' servers on the same Valkey hold some of 127.0.0.1's shared counts)."""
    return httpx.HTTPTransport(local_address=address)


def _bot(url: str, game_id: str, token: str, errors: list) -> None:
    """A well-behaved bot: long-poll its turn, post the first legal move, until the end."""
    with httpx.Client(base_url=url, headers=auth(token), timeout=30, transport=_from(BOT)) as http:
        while True:
            reply = http.get(f"/v1/games/{game_id}/turn?wait=5")
            if reply.status_code != 200:
                errors.append(reply.text)
                return
            turn = reply.json()
            if turn["status"] == "finished":
                return
            if turn["status"] != "your_turn":
                continue
            move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
            time.sleep(0.01)  # it thinks a moment, as a bot does
            reply = http.post(f"/v1/games/{game_id}/moves", json=move)
            if reply.status_code != 200:
                errors.append(reply.text)
                return


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the referee closed (or refused) the connection within a few seconds."""
    sock.settimeout(4)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_an_abusive_client_is_refused_while_a_bot_plays_on(valkey):
    referee, url = start_referee(valkey, env={**PUBLIC_LIMITS, "REFEREE_SWEEP_INTERVAL_S": "0.1"})
    port = int(url.rsplit(":", 1)[1])
    statuses: dict[str, list[int]] = {"create": [], "read": [], "streams": []}
    stop = threading.Event()
    try:
        # 1. connections that never finish their headers: past 64 refused at once, the rest
        #    closed at the header deadline; the referee answers others meanwhile
        held = []
        for _ in range(100):
            sock = socket.create_connection(("127.0.0.1", port), source_address=(ABUSER, 0))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            held.append(sock)
        assert httpx.get(url + "/healthz").status_code == 200
        began = time.monotonic()
        assert all(_closed_by_server(sock) for sock in held), "a connection was held open"
        assert time.monotonic() - began < 4
        for sock in held:
            sock.close()

        # 2. the abuser opens streams and floods creations and reads from its address...
        def flood(kind: str) -> None:
            transport = httpx.HTTPTransport(local_address=ABUSER)
            with httpx.Client(base_url=url, transport=transport, timeout=10) as http:
                while not stop.is_set():
                    if kind == "create":
                        reply = http.post("/v1/games", json=_body())
                    else:
                        reply = http.get("/v1/rulesets")
                    statuses[kind].append(reply.status_code)

        with httpx.Client(transport=_from(BOT)) as http:
            game = http.post(url + "/v1/games", json=_body(deadline_s=30)).json()
        streams = contextlib.ExitStack()
        for _ in range(30):
            client = streams.enter_context(
                httpx.Client(transport=httpx.HTTPTransport(local_address=ABUSER))
            )
            reply = streams.enter_context(
                client.stream("GET", f"{url}/v1/games/{game['id']}/events")
            )
            statuses["streams"].append(reply.status_code)
        flooders = [threading.Thread(target=flood, args=(k,)) for k in ["create", "read"] * 4]
        for thread in flooders:
            thread.start()
        # 3. ...while a bot plays a whole game from another address, undisturbed
        errors: list[str] = []
        bots = [
            threading.Thread(target=_bot, args=(url, game["id"], seat["token"], errors))
            for seat in game["seats"]
        ]
        for thread in bots:
            thread.start()
        for thread in bots:
            thread.join(timeout=120)
        # the floods go on until the limits have shown (a game played fast on a quiet machine
        # may end before a flood from a busy one has filled its budget)
        wait_until(lambda: 429 in statuses["read"] and 429 in statuses["create"], 20)
        stop.set()
        for thread in flooders:
            thread.join(timeout=30)
        streams.close()
        assert not errors, errors[:3]
        assert httpx.get(f"{url}/v1/games/{game['id']}").json()["status"] == "finished"
        # the abuser: streams past 20 and creations past 30 refused, its floods rate-limited
        assert statuses["streams"].count(200) == 20 and statuses["streams"].count(429) == 10
        assert statuses["create"].count(201) <= 30 and 429 in statuses["create"]
        assert 429 in statuses["read"]
        assert httpx.get(url + "/healthz").status_code == 200
    finally:
        stop.set()
        referee.terminate()
        referee.wait(timeout=20)


def test_requests_arriving_together_share_one_lease_instead_of_each_taking_one(valkey):
    """Fifty requests of one address at once, well within its budget, and twenty long-polls
    well within its cap: none is refused (each leasing a slice of its own would have taken
    the whole second's budget, and the cap, in an instant)."""
    with ThreadServer(valkey, rate_per_address=400, max_waiting_per_address=64) as server:
        with httpx.Client(base_url=server.url, transport=_from("127.0.0.6")) as http:
            game = http.post("/v1/games", json=_body()).json()
        turn = f"{server.url}/v1/games/{game['id']}/turn"
        token = auth(game["seats"][1]["token"])
        second = int(time.time())
        while int(time.time()) == second:  # start at the beginning of a second
            time.sleep(0.01)
        statuses: list[int] = []

        def ask(wait: float) -> None:
            with httpx.Client(transport=_from("127.0.0.6"), timeout=10) as http:
                statuses.append(http.get(f"{turn}?wait={wait}", headers=token).status_code)

        threads = [threading.Thread(target=ask, args=(0,)) for _ in range(50)]
        threads += [threading.Thread(target=ask, args=(0.5,)) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert statuses.count(200) == 70, statuses
