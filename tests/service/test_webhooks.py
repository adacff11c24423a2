"""Webhook bots: the referee calls the bot with each turn, signed (Standard Webhooks), through
the SSRF guard. Games of every ruleset played to their end by a webhook bot on loopback
(allowed by configuration) against a house bot; the guard's refusals, tested without a packet
sent anywhere but loopback; a timeout's default move; kill -9 of a referee mid-delivery."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time

import httpx
import msgspec
import pytest
from conftest import ProcessServer, ThreadServer
from helpers import wait_until
from webhook_bot import WebhookBot, wait_finished

from referee.games import RULESETS, verify
from referee.outbound import HOST_SHARES, Allowed, Failed, Outbound, Refused
from referee.service.delivery import (
    ATTEMPTS,
    Breaker,
    Delivery,
    Gone,
    Registration,
    signed_headers,
)
from referee.store.embedded import start_embedded


@pytest.fixture(scope="module")
def own_valkey(tmp_path_factory):
    """A Valkey of these tests' own: every referee on a Redis follows its webhook seats, and
    the other tests' referees (on the session's Valkey) allow no loopback webhook."""
    server = start_embedded(tmp_path_factory.mktemp("webhook-valkey"))
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def allowing(own_valkey):
    """A referee that lets webhooks call loopback."""
    with ThreadServer(own_valkey, webhook_allow=("127.0.0.1",), webhook_lease_s=1.0) as running:
        yield running


def _webhook_game(http: httpx.Client, ruleset: str, url: str, deadline_s: float = 10) -> dict:
    seats = max(2, RULESETS[ruleset].min_seats)
    body = {
        "ruleset": ruleset,
        "seats": [{"webhook": {"url": url}}] + [{"bot": "random"}] * (seats - 1),
        "deadline_s": deadline_s,
    }
    created = http.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    return created.json()


def _mine(record: dict) -> list[dict]:
    return [d for d in record["decisions"] if d.get("seat") == 0]


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_a_webhook_bot_plays_a_game_of_every_ruleset(allowing, ruleset):
    with WebhookBot() as bot, httpx.Client(base_url=allowing.url, timeout=30) as http:
        game = _webhook_game(http, ruleset, bot.url)
        seat = game["seats"][0]
        assert seat["token"] is None and seat["webhook_secret"].startswith("whsec_")
        bot.secrets[game["id"]] = seat["webhook_secret"]
        wait_finished(http, game["id"])
        record = http.get(f"/v1/games/{game['id']}/record").json()
        # the end notification follows the last commit
        assert wait_until(lambda: "end" in bot.types(game["id"]))
    assert record["finished"] and verify(record).ok
    mine = _mine(record)
    assert mine and not any(d.get("timeout") for d in mine), mine
    types = bot.types(game["id"])
    assert types.count("start") == 1 and types.count("end") == 1, types
    turns = [wid for wid, kind, _ in bot.calls if kind == "turn"]
    assert len(turns) == len(set(turns)) == len(mine)  # each turn delivered once
    assert bot.bad_signatures == 0


def test_a_late_answer_gets_the_default_move_at_the_deadline(allowing):
    """A bot that does not answer by the deadline: the ruleset's default move is played, as
    for a polled bot, and the game goes on."""
    late: list[int] = []

    def stall(message: dict) -> None:
        if not late:
            late.append(message["turn"]["seq"])
            time.sleep(3.0)  # past the 2 s deadline

    with WebhookBot(stall) as bot, httpx.Client(base_url=allowing.url, timeout=30) as http:
        game = _webhook_game(http, "choice", bot.url, deadline_s=2)
        bot.secrets[game["id"]] = game["seats"][0]["webhook_secret"]
        wait_finished(http, game["id"])
        record = http.get(f"/v1/games/{game['id']}/record").json()
    timed_out = [d["seq"] for d in _mine(record) if d.get("timeout")]
    assert late[0] in timed_out
    assert verify(record).ok


def test_creation_refuses_what_the_guard_refuses(http):
    """The referee without an allowance: a URL whose host is a refused address literal, or
    not http(s), is 422 webhook-url-refused at creation; a webhook seat needs a deadline and
    is not a house bot (422 webhook-seat-invalid). Nothing is created."""
    before = http.get("/v1/games").json()["games"]
    for url in (
        "http://127.0.0.1:9/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
        "http://100.64.0.1/",
        "http://[fd00::1]/",
        "http://[::1]/",
        "http://224.0.0.1/",
        "ftp://example.org/",
        "http://user:pw@example.org/",
        # an IPv4 address in any other form than dotted decimal: each is 127.0.0.1 to a
        # resolver (it passed creation before, and was refused only when called)
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        # a well-known port (SMTP, SSH) of a host that may be called, or port 0 (which
        # stood for the scheme's own)
        "http://example.org:25/",
        "https://example.org:22/",
        "http://example.org:0/",
        # hosts no resolver would look up as they are: accepted, then failed when called
        "http://ex ample.org/",
        "http://\u202eexample.org/",
        "http://example.org%09:8080/",
        "http://-example.org/",
        # IPv4 in full-width digits or ideographic dots: 127.0.0.1 once IDNA maps them
        "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",
        "http://127\u30020\u30020\u30021/",
        "http://\uff10\uff58\uff17\uff46.\uff11/",
    ):
        reply = http.post(
            "/v1/games",
            json={
                "ruleset": next(iter(RULESETS)),
                "seats": [{"webhook": {"url": url}}, {"bot": "random"}],
            },
        )
        assert reply.status_code == 422, (url, reply.text)
        problem = reply.json()
        assert problem["code"] == "webhook-url-refused", problem
        assert problem["field"] == "seats[0].webhook.url"
    for seats, deadline in (
        ([{"webhook": {"url": "https://example.org/"}}, {"bot": "random"}], 0),
        ([{"webhook": {"url": "https://example.org/"}, "bot": "random"}, {"name": "a"}], 5),
    ):
        body = {"ruleset": next(iter(RULESETS)), "seats": seats, "deadline_s": deadline}
        reply = http.post("/v1/games", json=body)
        assert reply.status_code == 422 and reply.json()["code"] == "webhook-seat-invalid"
    assert http.get("/v1/games").json()["games"] == before


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "0.0.0.0",
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "169.254.169.254",
        "224.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fd00:ec2::254",
        "ff02::1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        # IPv6 that carries an IPv4 address (Python calls these global): through a NAT64
        # gateway, 64:ff9b::a9fe:a9fe is 169.254.169.254
        "64:ff9b::a9fe:a9fe",
        "64:ff9b::a00:1",
        "64:ff9b:1::a00:1",
        "::127.0.0.1",
        "::ffff:0:127.0.0.1",
        "2002:a9fe:a9fe::",
        "fec0::1",
    ],
)
def test_the_guard_refuses_what_is_not_globally_routable(address):
    allowed = Allowed()
    assert not allowed.permits("somewhere", ipaddress.ip_address(address))


def test_the_guard_lets_global_and_allowed_addresses_through():
    assert Allowed().permits("x", ipaddress.ip_address("8.8.8.8"))
    assert Allowed().permits("x", ipaddress.ip_address("2606:4700::1111"))
    allowed = Allowed.parse("10.0.0.0/8, bots.internal ,::1")
    assert allowed.permits("x", ipaddress.ip_address("10.9.9.9"))
    assert allowed.permits("x", ipaddress.ip_address("::ffff:10.9.9.9"))
    assert allowed.permits("x", ipaddress.ip_address("::1"))
    assert allowed.permits("bots.internal", ipaddress.ip_address("192.168.0.5"))
    assert not allowed.permits("other.internal", ipaddress.ip_address("192.168.0.5"))


class _Listener:
    """A loopback socket that counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


def test_a_refused_host_gets_no_connection():
    """A name that resolves to loopback (localhost, from the hosts file: no DNS packet) and a
    loopback literal are refused before any connection is made; a private address literal
    is refused before any packet leaves."""
    listener = _Listener()

    async def scenario():
        outbound = Outbound(Allowed())
        try:
            for url in (
                f"http://localhost:{listener.port}/",
                f"http://127.0.0.1:{listener.port}/",
                f"http://[::ffff:127.0.0.1]:{listener.port}/",
                "http://10.255.255.1/",
                "http://169.254.169.254/",
            ):
                with pytest.raises(Refused):
                    await outbound.post(url, b"{}", {}, time.time() + 2)
        finally:
            await outbound.aclose()

    asyncio.run(scenario())
    time.sleep(0.1)
    assert listener.accepted == 0
    listener.sock.close()


class _Odd:
    """A loopback server answering each POST as ``answer(path)`` says: (status, headers,
    body, seconds to wait first)."""

    def __init__(self, answer) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        calls = self.calls = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                calls.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                status, headers, body, pause = answer(self.path)
                time.sleep(pause)
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_redirects_long_answers_and_slow_answers_fail():
    answers = {
        "/redirect": (302, {"location": "http://169.254.169.254/"}, b"", 0),
        "/long": (200, {}, b"x" * 5000, 0),
        "/slow": (200, {}, b"{}", 3),
        "/flaky": None,
        "/ok": (200, {}, b'{"type": "x"}', 0),
    }
    flaky = []

    def answer(path):
        if path == "/flaky":
            flaky.append(1)
            return (503, {}, b"", 0) if len(flaky) < 3 else (200, {}, b"{}", 0)
        return answers[path]

    odd = _Odd(answer)

    async def scenario():
        delivery = Delivery(Outbound(Allowed(["127.0.0.1"]), max_body=1000), Breaker())
        secret = "whsec_" + "A" * 44
        try:
            for path, why in (
                ("/redirect", "302"),
                ("/long", "more than 1000"),
                ("/slow", "before the deadline"),
            ):
                started = time.monotonic()
                with pytest.raises(Failed, match=why):
                    await delivery.send(odd.base + path, secret, "m", {}, time.time() + 1)
                assert time.monotonic() - started < 2.5  # the deadline, not the bot, ends it
            answer = await delivery.send(odd.base + "/flaky", secret, "m", {}, time.time() + 5)
            assert answer.status == 200 and len(flaky) == 3  # 5xx tried again in time
            answer = await delivery.send(odd.base + "/ok", secret, "m", {}, time.time() + 5)
            assert answer.body == b'{"type": "x"}'
        finally:
            await delivery.outbound.aclose()

    asyncio.run(scenario())
    odd.close()
    assert sum(1 for path, _ in odd.calls if path == "/redirect") == 1  # not followed
    headers = next(h for path, h in odd.calls if path == "/ok")
    assert headers["host"] == odd.base.removeprefix("http://")
    assert {"webhook-id", "webhook-timestamp", "webhook-signature"} <= set(headers)


def test_the_signature_is_standard_webhooks():
    from standardwebhooks.webhooks import Webhook

    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"type":"turn"}'
    headers = signed_headers(secret, "g.0.3", body, time.time())
    assert Webhook(secret).verify(body, headers) == {"type": "turn"}


def test_the_breaker_opens_after_failures_and_tries_again_after_its_cooldown():
    now = [0.0]
    breaker = Breaker(threshold=3, cooldown_s=10, clock=lambda: now[0])
    for _ in range(3):
        assert breaker.closed("h")
        breaker.failed("h")
    assert not breaker.closed("h") and breaker.closed("other")
    now[0] = 11
    assert breaker.closed("h")  # one trial
    assert not breaker.closed("h")  # and no other meanwhile
    breaker.succeeded("h")
    assert breaker.closed("h")


def test_a_host_whose_breaker_is_open_is_not_called():
    odd = _Odd(lambda path: (500, {}, b"", 0))

    async def scenario():
        delivery = Delivery(Outbound(Allowed(["127.0.0.1"])), Breaker(threshold=2))
        try:
            for _ in range(2):
                with pytest.raises(Failed, match="500"):
                    await delivery.send(odd.base, "whsec_" + "A" * 44, "m", {}, time.time() + 0.3)
            calls = len(odd.calls)
            with pytest.raises(Failed, match="too often"):
                await delivery.send(odd.base, "whsec_" + "A" * 44, "m", {}, time.time() + 0.3)
            assert len(odd.calls) == calls
        finally:
            await delivery.outbound.aclose()

    asyncio.run(scenario())
    odd.close()


def test_one_webhooks_failures_open_no_breaker_for_another_on_the_same_host():
    """The breaker was the host's alone: anyone could register a webhook of their own that
    fails on a bot's host, stop the bot's turn calls for the cooldown, and have their
    failures pause it. Calls signed with another secret are still made."""
    odd = _Odd(
        lambda path: (500, {}, b"", 0) if path.startswith("/theirs") else (200, {}, b"{}", 0)
    )

    async def scenario():
        delivery = Delivery(Outbound(Allowed(["127.0.0.1"])), Breaker(threshold=2))
        theirs, mine = "whsec_" + "A" * 44, "whsec_" + "B" * 44
        try:
            for _ in range(2):
                with pytest.raises(Failed, match="500"):
                    await delivery.send(odd.base + "/theirs", theirs, "m", {}, time.time() + 0.3)
            with pytest.raises(Failed, match="too often"):
                await delivery.send(odd.base + "/theirs", theirs, "m", {}, time.time() + 0.3)
            answer = await delivery.send(odd.base + "/mine", mine, "m", {}, time.time() + 0.3)
            assert answer.status == 200
        finally:
            await delivery.outbound.aclose()

    asyncio.run(scenario())
    odd.close()


def test_kill_9_mid_delivery_loses_and_duplicates_nothing(tmp_path):
    """Referee A delivers a turn and is killed while the bot holds the call; referee B (same
    Redis, of this test alone: no other replica there) claims the turn once A's lease lapses
    and delivers it again, with the same webhook-id; the game ends with every decision taken
    once, the bot's own (no timeout)."""
    held = threading.Event()
    release = threading.Event()
    stalled: list[int] = []

    def hold(message: dict) -> None:
        turn = message["turn"]
        if not stalled and turn["seq"] >= 2:
            stalled.append(turn["seq"])
            held.set()
            release.wait(30)  # A is killed meanwhile: this answer goes nowhere

    env = {"REFEREE_WEBHOOK_ALLOW": "127.0.0.1", "REFEREE_WEBHOOK_LEASE_S": "1"}
    store = start_embedded(tmp_path / "valkey")
    first = ProcessServer(store.url, env=env)
    second = None
    try:
        with WebhookBot(hold) as bot, httpx.Client(base_url=first.url, timeout=30) as http:
            game = _webhook_game(http, "choice", bot.url, deadline_s=20)
            bot.secrets[game["id"]] = game["seats"][0]["webhook_secret"]
            assert held.wait(20)
            second = ProcessServer(store.url, env=env)
            first.kill()  # SIGKILL, mid-delivery
            release.set()
            with httpx.Client(base_url=second.url, timeout=30) as other:
                wait_finished(other, game["id"])
                record = other.get(f"/v1/games/{game['id']}/record").json()
    finally:
        first.kill()
        if second is not None:
            second.kill()
        store.stop()
    assert verify(record).ok
    mine = _mine(record)
    assert not any(d.get("timeout") for d in mine)
    decided = [(d["seat"], d["seq"]) for d in record["decisions"]]
    assert len(decided) == len(set(decided))
    stalled_id = f"{game['id']}.0.{stalled[0]}"
    turn_ids = [wid for wid, kind, _ in bot.calls if kind == "turn"]
    assert turn_ids.count(stalled_id) == 2  # delivered again, by B, under the same id
    assert len(set(turn_ids)) == len(mine)
    (again,) = [d for d in mine if d["seq"] == stalled[0]]
    assert again["moves"] == [bot.answered[stalled_id]]


def test_a_410_unregisters_and_a_refused_connection_is_tried_again_a_bounded_number_of_times():
    """A 410 unregisters at once; a refused connection is tried ``ATTEMPTS`` times in all,
    not again and again until the deadline (nine calls in five seconds, before), and a
    deadline too near for the next try ends the tries sooner."""
    gone = _Odd(lambda path: (410, {}, b"", 0))
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    refused_url = f"http://127.0.0.1:{closed.getsockname()[1]}/"
    calls: list[float] = []

    class Counting(Outbound):
        async def post(self, *args, **kwargs):
            calls.append(time.monotonic())
            return await super().post(*args, **kwargs)

    async def scenario():
        delivery = Delivery(Counting(Allowed(["127.0.0.1"])), Breaker())
        secret = "whsec_" + "A" * 44
        try:
            with pytest.raises(Gone):
                await delivery.send(gone.base, secret, "m", {}, time.time() + 2)
            calls.clear()
            with pytest.raises(Failed) as failed:
                await delivery.send(refused_url, secret, "m", {}, time.time() + 5)
            assert failed.value.again
            assert len(calls) == ATTEMPTS == 3
            assert calls[-1] - calls[0] < 1.0
            calls.clear()
            with pytest.raises(Failed):
                await delivery.send(refused_url, secret, "m", {}, time.time() + 0.2)
            assert len(calls) == 2  # 0.05 s, then no time for 0.2 s more
        finally:
            await delivery.outbound.aclose()

    asyncio.run(scenario())
    gone.close()
    closed.close()


async def _posted_path(reader: asyncio.StreamReader) -> bytes:
    """A POST read whole off a local host's connection: its path."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    await reader.readexactly(length)
    return head.split(b" ")[1]


async def _local_host(serve, per_host: int) -> tuple[asyncio.Server, str, Outbound]:
    """A host on loopback served by ``serve``, its URL, and an outbound client allowed it."""
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    return server, base, Outbound(Allowed(["127.0.0.1"]), per_host=per_host)


def test_calls_reuse_keep_alive_connections_within_the_per_host_bound():
    """Calls to one host ride on kept-alive connections (one here, the calls one after
    another), at most ``per_host`` at a time; a connection the bot closed while idle is
    replaced without a failure; a chunked answer and one that ends with its connection are
    read whole."""
    state = {"connections": 0, "open": 0, "most": 0}

    async def scenario():
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            state["connections"] += 1
            try:
                while True:
                    path = await _posted_path(reader)
                    state["open"] += 1
                    state["most"] = max(state["most"], state["open"])
                    await asyncio.sleep(0.05 if path == b"/slow" else 0)
                    state["open"] -= 1
                    if path == b"/chunked":
                        writer.write(
                            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
                            b'3\r\n{"a\r\n5\r\n": 1}\r\n0\r\n\r\n'
                        )
                    elif path == b"/until-close":
                        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n{}")
                        await writer.drain()
                        writer.close()
                        return
                    else:
                        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                    if path == b"/then-close":
                        await writer.drain()
                        writer.close()  # as a bot's idle timeout would, unannounced
                        return
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()

        server, base, outbound = await _local_host(serve, per_host=2)
        try:
            for _ in range(5):
                answer = await outbound.post(base + "/", b"{}", {}, time.time() + 2)
                assert (answer.status, answer.body) == (200, b"{}")
            assert state["connections"] == 1  # one kept alive
            await outbound.post(base + "/then-close", b"{}", {}, time.time() + 2)
            await asyncio.sleep(0.05)
            answer = await outbound.post(base + "/", b"{}", {}, time.time() + 2)
            assert answer.status == 200 and state["connections"] == 2
            answer = await outbound.post(base + "/chunked", b"{}", {}, time.time() + 2)
            assert answer.body == b'{"a": 1}'
            answer = await outbound.post(base + "/until-close", b"{}", {}, time.time() + 2)
            assert answer.body == b"{}"
            calls = [outbound.post(base + "/slow", b"{}", {}, time.time() + 5) for _ in range(6)]
            assert all(a.status == 200 for a in await asyncio.gather(*calls))
            assert state["most"] == 2  # per_host
        finally:
            await outbound.aclose()
            server.close()

    asyncio.run(scenario())


def test_what_a_refused_or_unresolved_name_is_told_says_nothing_of_the_network():
    """A bot's webhook info call answers with the outbound failure's words: they named the
    address a refused name resolved to (an internal name's private address), the resolver's
    own error for a name that does not exist (so which internal names exist), and the
    socket's error (refused or unreachable: a port scanner). The same words now for a name
    refused and a name unknown, no address, and no socket error."""
    listener = _Listener()

    async def told(url: str) -> str:
        outbound = Outbound(Allowed())
        try:
            with pytest.raises((Refused, Failed)) as failure:
                await outbound.post(url, b"{}", {}, time.time() + 2)
            return str(failure.value)
        finally:
            await outbound.aclose()

    refused = asyncio.run(told(f"http://localhost:{listener.port}/"))
    unknown = asyncio.run(told("http://no-such-host.invalid/"))
    assert refused == "localhost resolves to no globally routable address"
    assert unknown == "no-such-host.invalid resolves to no globally routable address"

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused

    async def closed_port() -> str:
        outbound = Outbound(Allowed(["127.0.0.1"]))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/"
        try:
            with pytest.raises(Failed) as failure:
                await outbound.post(url, b"{}", {}, time.time() + 1)
            return str(failure.value)
        finally:
            await outbound.aclose()

    assert asyncio.run(closed_port()) in ("no connection", "no connection in time")
    closed.close()
    assert listener.accepted == 0


def test_one_callers_slow_calls_hold_no_slot_of_another_caller_on_the_same_host():
    """Each caller (a signing secret) gets ``per_host`` calls at a time to a host: one
    caller's calls that the host answers slowly, as many as it may make, left every slot
    of a shared bound held, so another bot's turn calls to that host waited behind them
    until their deadlines. The host's bound in all is ``HOST_SHARES`` times a caller's."""
    state = {"open": 0, "most": 0}

    async def scenario():
        held = asyncio.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:
                    path = await _posted_path(reader)
                    state["open"] += 1
                    state["most"] = max(state["most"], state["open"])
                    if path == b"/slow":
                        await held.wait()
                    state["open"] -= 1
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()

        server, base, outbound = await _local_host(serve, per_host=2)
        try:
            slow = [
                asyncio.ensure_future(
                    outbound.post(base + "/slow", b"{}", {}, time.time() + 5, "slow")
                )
                for _ in range(4)
            ]
            await asyncio.sleep(0.2)
            assert state["open"] == 2  # the slow caller's own bound
            answer = await asyncio.wait_for(
                outbound.post(base + "/", b"{}", {}, time.time() + 5, "other"), 1.0
            )
            assert answer.status == 200
            others = [
                asyncio.ensure_future(
                    outbound.post(base + "/slow", b"{}", {}, time.time() + 5, f"caller {n}")
                )
                for n in range(8)
            ]
            await asyncio.sleep(0.2)
            assert state["open"] == 2 * HOST_SHARES  # the host's bound in all
            held.set()
            assert all(a.status == 200 for a in await asyncio.gather(*slow, *others))
            # each caller's bound is forgotten with its last call, the host busy or not
            assert not any(h.shares for h in outbound._hosts.values())
        finally:
            await outbound.aclose()
            server.close()

    asyncio.run(scenario())


def test_a_seat_whose_token_was_rekeyed_leaves_the_webhook_and_ends_no_other_seats_play():
    """A bot's rotation rekeys its seats at its tables in play, while the game's webhook
    registration still holds the old token. That seat's play failed (``forbidden``), the
    game's other plays ran on, and the next scan followed the game again, each time with one
    more play. Now the seat is unregistered (for every replica) and its play ends alone; a
    play that fails any other way ends the game's other plays with it."""
    from referee.core.refusals import Refusal
    from referee.service.webhooks import WebhookSeats

    class Seats:
        memory = type("Memory", (), {"stopping": False})()

        async def wait_turn(self, game_id, token, wait_s):
            if token == "rekeyed":
                raise Refusal("forbidden", "this token holds no seat of this game")
            if token == "broken":
                raise Refusal("game-not-found", "gone")
            await asyncio.sleep(wait_s)
            return {"status": "waiting", "game_status": "waiting"}

    class Store:
        def __init__(self, registered):
            self.seats, self.unregistered, self.over_games = registered, [], []

        async def registered(self, game_id):
            return {s: msgspec.json.encode(r) for s, r in self.seats.items()}

        async def unregister(self, game_id, seat):
            self.unregistered.append((game_id, seat))

        async def over(self, game_id):
            self.over_games.append(game_id)

    def registration(token):
        return Registration("https://bot.example/", "whsec_" + "A" * 44, token)

    async def scenario():
        store = Store({0: registration("rekeyed")})
        hooks = WebhookSeats(store, Seats(), Delivery(Outbound(Allowed())), allowed=Allowed())
        await asyncio.wait_for(hooks._follow("g1"), 5)
        assert store.unregistered == [("g1", 0)] and store.over_games == ["g1"]

        store = Store({0: registration("broken"), 1: registration("steady")})
        hooks = WebhookSeats(store, Seats(), Delivery(Outbound(Allowed())), allowed=Allowed())
        await asyncio.wait_for(hooks._follow("g2"), 5)
        await asyncio.sleep(0)
        plays = [t for t in asyncio.all_tasks() if t.get_coro().__qualname__.endswith("._play")]
        assert plays == [], plays  # the steady seat's play ended with the broken one's

    asyncio.run(scenario())
