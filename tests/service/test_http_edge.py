"""The HTTP edge, seen on raw connections: a request's head and body are bounded as they
arrive (431, 414, 413, 408, each a problem, and the connection closed), a request that offers
an upgrade the referee does not speak (``Upgrade: h2c``) is served as HTTP/1.1 with its body,
and a ``Last-Event-ID`` that is no event id is a 400."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time

import httptools
import httpx
import pytest
from helpers import auth, create

from referee.tools.launch import LOAD_LIMITS, start_referee
from referee.web.edge_refusals import MAX_PIPELINED

#: the headers curl --http2 and Java's HttpClient send on a plain http:// URL
H2C = (
    "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
    "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"
)


class _Answers:
    """Responses read off a raw connection, and whether the server closed it after them."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.parser = httptools.HttpResponseParser(self)
        self.done: list[tuple[int, dict[str, str], bytes]] = []
        self.headers: dict[str, str] = {}
        self.body = b""
        self.closed = False

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode().lower()] = value.decode()

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        self.done.append((self.parser.get_status_code(), self.headers, self.body))
        self.headers, self.body = {}, b""

    def read(self, count: int = 1, seconds: float = 10.0) -> list:
        """Until ``count`` responses came, or the connection closed, within ``seconds``."""
        stop = time.monotonic() + seconds
        while len(self.done) < count and not self.closed and time.monotonic() < stop:
            self.sock.settimeout(max(0.01, stop - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                self.closed = True
                break
            if not data:
                self.closed = True
                break
            self.parser.feed_data(data)
        return self.done

    def closes(self, seconds: float = 5.0) -> bool:
        """Whether the server closes the connection (sending nothing more) within
        ``seconds``."""
        if self.closed:
            return True
        self.sock.settimeout(seconds)
        try:
            return self.sock.recv(65536) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _refused(answers: _Answers, status: int, code: str, names: str) -> dict:
    """The one answer is the problem ``code`` naming ``names``, and the connection closed."""
    done = answers.read()
    assert len(done) == 1, done
    got, headers, body = done[0]
    assert got == status, body
    assert headers["content-type"] == "application/problem+json"
    assert headers["connection"] == "close"
    problem = json.loads(body)
    assert problem["status"] == status and problem["code"] == code
    assert names in problem["detail"], problem
    assert answers.closes(), "the connection stayed open"
    return problem


def _get(path: str, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: referee\r\n{extra}\r\n".encode()


# -- 1. a request's head ----------------------------------------------------------------------


def test_a_header_line_over_8_kib_is_431_and_the_connection_closed(server):
    with _connect(server.url) as sock:
        sock.sendall(_get("/healthz", f"X-Big: {'a' * 9000}\r\n"))
        problem = _refused(
            _Answers(sock), 431, "headers-too-large", "REFEREE_MAX_HEADER_LINE_BYTES"
        )
        assert problem["field"] == "x-big"


def test_more_than_100_header_fields_is_431(server):
    fields = "".join(f"X-{i}: {i}\r\n" for i in range(101))
    with _connect(server.url) as sock:
        sock.sendall(_get("/healthz", fields))
        _refused(_Answers(sock), 431, "headers-too-large", "REFEREE_MAX_HEADER_FIELDS")


def test_more_than_64_kib_of_headers_in_all_is_431(server):
    fields = "".join(f"X-{i}: {'a' * 7000}\r\n" for i in range(10))  # each line within 8 KiB
    with _connect(server.url) as sock:
        sock.sendall(_get("/healthz", fields))
        _refused(_Answers(sock), 431, "headers-too-large", "REFEREE_MAX_HEADER_BYTES")


def test_a_request_line_over_8_kib_is_414(server):
    with _connect(server.url) as sock:
        sock.sendall(_get("/v1/games?x=" + "a" * 9000))
        _refused(_Answers(sock), 414, "uri-too-long", "REFEREE_MAX_HEADER_LINE_BYTES")


def test_headers_within_the_limits_are_served(server, http):
    game = create(http, "choice", 2)
    near = "".join(f"X-{i}: {'a' * 500}\r\n" for i in range(96))  # 98 fields, ~50 KiB
    near += f"X-Long: {'b' * 8000}\r\n"
    token = game["seats"][0]["token"]
    with _connect(server.url) as sock:
        sock.sendall(
            _get(f"/v1/games/{game['id']}/turn", f"Authorization: Bearer {token}\r\n{near}")
        )
        answers = _Answers(sock)
        assert [status for status, _, _ in answers.read()] == [200]
        sock.sendall(_get("/healthz", near))  # the connection serves on
        assert [status for status, _, _ in answers.read(2)] == [200, 200]


def test_a_header_that_never_ends_is_refused_as_its_bytes_arrive(server):
    """A 1 MiB header was served 200 (and 100 MB of headers held ~167 MB): the referee
    answers once the head passes its limit, long before the client is done sending."""
    with _connect(server.url) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: referee\r\nX-Big: ")
        answers = _Answers(sock)
        sent = 0
        while sent < 16 << 20 and not answers.done and not answers.closed:
            try:
                sock.sendall(b"a" * 16384)
            except OSError:  # the server closed: what it answered is read below
                break
            sent += 16384
            sock.setblocking(False)
            try:
                data = sock.recv(65536)
                if data:
                    answers.parser.feed_data(data)
                else:
                    answers.closed = True
            except BlockingIOError:
                pass
            sock.setblocking(True)
        _refused(answers, 431, "headers-too-large", "REFEREE_MAX_HEADER")
        assert sent < 4 << 20, f"refused only after {sent} bytes"


# -- 2. a request's body ----------------------------------------------------------------------


def _post(path: str, length: int | None, extra: str = "", body: bytes = b"") -> bytes:
    size = f"Content-Length: {length}\r\n" if length is not None else ""
    head = f"POST {path} HTTP/1.1\r\nHost: referee\r\nContent-Type: application/json\r\n"
    return (head + size + extra + "\r\n").encode() + body


@pytest.mark.parametrize("route", ["create", "moves"])
def test_a_content_length_over_the_limit_is_413_before_any_body_is_sent(server, http, route):
    game = create(http, "choice", 2)
    path, extra = "/v1/games", ""
    if route == "moves":
        path = f"/v1/games/{game['id']}/moves"
        extra = f"Authorization: Bearer {game['seats'][0]['token']}\r\n"
    with _connect(server.url) as sock:
        sock.sendall(_post(path, 100_000_000, extra))  # the head alone
        problem = _refused(_Answers(sock), 413, "body-too-large", "REFEREE_MAX_BODY_BYTES")
        assert problem["instance"] == path


def test_a_chunked_body_is_413_once_its_bytes_pass_the_limit(server):
    with _connect(server.url) as sock:
        sock.sendall(_post("/v1/games", None, "Transfer-Encoding: chunked\r\n"))
        answers = _Answers(sock)
        sent = 0
        chunk = b"4000\r\n" + b" " * 0x4000 + b"\r\n"
        while sent < 1 << 20 and not answers.done:  # never the last chunk
            try:
                sock.sendall(chunk)
            except OSError:
                break
            sent += 0x4000
            answers.read(seconds=0.05)
        _refused(answers, 413, "body-too-large", "REFEREE_MAX_BODY_BYTES")
        assert sent <= 160 * 1024, f"refused only after {sent} bytes"


@pytest.fixture(scope="module")
def impatient(valkey, tmp_path_factory):
    """A referee that waits 1 s for a body, and 1 s for the next request on a connection
    (keep-alive): its URL and its log."""
    env = {**LOAD_LIMITS, "REFEREE_BODY_TIMEOUT_S": "1", "REFEREE_KEEP_ALIVE_S": "1"}
    log = tmp_path_factory.mktemp("impatient") / "referee.log"
    with log.open("w") as out:
        referee, url = start_referee(valkey, env=env, stdout=out, stderr=out)
    yield url, log
    referee.terminate()
    referee.wait(timeout=20)


@pytest.mark.parametrize("route", ["create", "moves"])
def test_a_trickling_body_is_408_and_the_connection_closed(impatient, route):
    impatient, log = impatient
    with httpx.Client(base_url=impatient) as http:
        game = create(http, "choice", 2)
    path, extra = "/v1/games", ""
    if route == "moves":
        path = f"/v1/games/{game['id']}/moves"
        extra = f"Authorization: Bearer {game['seats'][0]['token']}\r\n"
    with _connect(impatient) as sock:
        sock.sendall(_post(path, 100, extra, b'{"seq": '))
        began = time.monotonic()
        answers = _Answers(sock)
        while not answers.done and time.monotonic() - began < 8:
            try:
                sock.sendall(b" ")  # a byte now and then: never the whole body
            except OSError:
                break
            answers.read(seconds=0.3)
        problem = _refused(answers, 408, "body-timeout", "REFEREE_BODY_TIMEOUT_S")
        assert problem["field"] == "body" and problem["instance"] == path
        assert time.monotonic() - began < 6
    with httpx.Client(base_url=impatient) as http:
        assert http.get("/healthz").status_code == 200
    # the handler that was reading the body saw its client leave: nothing logged
    assert "Traceback" not in log.read_text()


def test_a_body_that_arrives_in_time_is_served(impatient):
    impatient, _ = impatient
    body = json.dumps({"ruleset": "choice", "seats": [{"name": "a"}, {"name": "b"}]}).encode()
    with _connect(impatient) as sock:
        sock.sendall(_post("/v1/games", len(body), body=body[:10]))
        time.sleep(0.5)
        sock.sendall(body[10:])
        assert [status for status, _, _ in _Answers(sock).read()] == [201]


def test_a_connection_idle_past_the_keep_alive_timeout_is_closed(impatient):
    impatient, _ = impatient
    with _connect(impatient) as sock:
        sock.sendall(_get("/healthz"))
        answers = _Answers(sock)
        assert [status for status, _, _ in answers.read()] == [200]
        answered = time.monotonic()
        assert answers.closes(seconds=5), "an idle connection stayed open"
        assert 0.8 < time.monotonic() - answered < 3


def test_a_connection_that_keeps_asking_is_kept_past_the_keep_alive_timeout(impatient):
    """The connection's keep-alive timer runs on from request to request: it closes only a
    connection idle for the whole timeout, however long the connection has lived."""
    impatient, _ = impatient
    with httpx.Client(base_url=impatient) as http:
        game = create(http, "choice", 2)
    bearer = f"Authorization: Bearer {game['seats'][0]['token']}\r\n"
    with _connect(impatient) as sock:
        answers = _Answers(sock)
        began = time.monotonic()
        count = 0
        while time.monotonic() - began < 3.5:  # past three timeouts, never idle for one
            # the hot route and one Litestar answers, in turn
            path = "/healthz" if count % 2 else f"/v1/games/{game['id']}/turn"
            sock.sendall(_get(path, bearer))
            count += 1
            assert len(answers.read(count)) == count and not answers.closed
            time.sleep(0.6)
        assert [status for status, _, _ in answers.done] == [200] * count
        assert answers.closes(seconds=5)  # and once idle, it closes


# -- 3. an upgrade the referee does not speak -------------------------------------------------


def test_a_post_offering_h2c_is_served_as_http_1_1_with_its_body(server, http):
    body = json.dumps({"ruleset": "choice", "seats": [{"name": "a"}, {"name": "b"}]}).encode()
    with _connect(server.url) as sock:
        sock.sendall(_post("/v1/games", len(body), H2C, body))
        answers = _Answers(sock)
        status, _, created = answers.read()[0]
        assert status == 201, created
        game = json.loads(created)
        # the hot routes, on the same connection: the turn, then a move, each offering h2c
        token = game["seats"][0]["token"]
        bearer = f"Authorization: Bearer {token}\r\n"
        sock.sendall(_get(f"/v1/games/{game['id']}/turn", bearer + H2C))
        status, _, turn = answers.read(2)[1]
        assert status == 200, turn
        turn = json.loads(turn)
        move = json.dumps({"seq": turn["seq"], "move": turn["legal_moves"][0]}).encode()
        sock.sendall(_post(f"/v1/games/{game['id']}/moves", len(move), bearer + H2C, move))
        status, _, accepted = answers.read(3)[2]
        assert status == 200, accepted
        assert json.loads(accepted)["seq"] == turn["seq"]
        sock.sendall(_get("/healthz", H2C))  # and a plain GET after them
        assert answers.read(4)[3][0] == 200
        # each request answered once: an offer declined never answers the one before again
        assert len(answers.read(5, seconds=0.5)) == 4
    assert "legal_moves" in turn and "legal_moves" not in json.loads(accepted)
    after = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    assert (after["seq"], after["status"]) != (turn["seq"], turn["status"]), "the move counted"


def test_a_chunked_post_offering_h2c_keeps_its_body(server):
    body = json.dumps({"ruleset": "choice", "seats": [{"name": "a"}, {"name": "b"}]}).encode()
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    with _connect(server.url) as sock:
        sock.sendall(_post("/v1/games", None, H2C + "Transfer-Encoding: chunked\r\n", chunked))
        status, _, created = _Answers(sock).read()[0]
        assert status == 201, created


# -- 4. answers on one connection: each request's once, in order ---------------------------

#: absolute-form targets the parser takes and the referee cannot serve: a 400 refused as its
#: head completes, before the request has a cycle of its own (no host: the URL parser refuses
#: it; no path: nothing to route, nor to name in the problem's ``instance``)
NO_HOST = b"GET http:///x HTTP/1.1\r\nHost: x\r\n\r\n"
NO_PATH = b"GET http://h?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"
CREATE = json.dumps({"ruleset": "choice", "seats": [{"name": "a"}, {"name": "b"}]}).encode()


def _games_listed(http: httpx.Client) -> set[str]:
    return {g["id"] for g in http.get("/v1/games", params={"limit": 100}).json()["games"]}


def _first_turn(http: httpx.Client) -> tuple[str, str, dict]:
    """A new game's path, its first seat's token, and that seat's first turn."""
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    path = f"/v1/games/{game['id']}"
    return path, token, http.get(path + "/turn", headers=auth(token)).json()


def _first_move(path: str, token: str, turn: dict, query: str = "") -> bytes:
    """The seat's first legal move on ``turn``, as raw bytes to send."""
    move = json.dumps({"seq": turn["seq"], "move": turn["legal_moves"][0]}).encode()
    return _post(path + "/moves" + query, len(move), f"Authorization: Bearer {token}\r\n", move)


@pytest.mark.parametrize("refused", [NO_HOST, NO_PATH], ids=["no-host", "no-path"])
def test_a_request_refused_behind_an_answer_to_come_is_answered_after_it(server, http, refused):
    """A hot move, then a request refused as its head completes, in one write: the move's
    answer, then the refusal's, then the connection closes; the move counts once."""
    path, token, turn = _first_turn(http)
    with _connect(server.url) as sock:
        sock.sendall(_first_move(path, token, turn) + refused)
        answers = _Answers(sock)
        done = answers.read(3, seconds=3)
        assert [status for status, _, _ in done] == [200, 400], done
        assert json.loads(done[0][2])["seq"] == turn["seq"]
        assert json.loads(done[1][2])["code"] == "invalid-request"
        assert answers.closes()
    after = http.get(path + "/turn", headers=auth(token)).json()
    assert after["seq"] == turn["seq"] + 1


def test_a_long_poll_answers_before_a_later_request_s_refusal(server, http):
    """The refused request arrives while a decision long-polls for its next turn: the
    refusal waits for that answer."""
    path, token, turn = _first_turn(http)
    with _connect(server.url) as sock:
        # the other seat has not decided: the next turn is long-polled for a second
        sock.sendall(_first_move(path, token, turn, "?wait=1"))
        time.sleep(0.3)
        sock.sendall(NO_PATH)
        answers = _Answers(sock)
        done = answers.read(3, seconds=5)
        assert [status for status, _, _ in done] == [200, 400], done
        assert json.loads(done[0][2])["turn"]["status"] == "waiting"
        assert answers.closes()


def test_a_creation_then_a_refused_one_in_one_write(server, http):
    """The first creation is answered, then the second's 413; one game is made."""
    big = CREATE[:-1] + b', "x": "' + b"a" * 70_000 + b'"}'
    before = _games_listed(http)
    with _connect(server.url) as sock:
        sock.sendall(
            _post("/v1/games", len(CREATE), "", CREATE) + _post("/v1/games", len(big), "", big)
        )
        answers = _Answers(sock)
        done = answers.read(3, seconds=3)
        assert [status for status, _, _ in done] == [201, 413], done
        assert answers.closes()
    made = _games_listed(http) - before
    assert made == {json.loads(done[0][2])["id"]}


@pytest.mark.parametrize("apart", [False, True], ids=["one-write", "two-writes"])
def test_connect_is_refused_and_what_follows_it_is_never_a_request(server, http, apart):
    """CONNECT asks for a tunnel: 501, and the connection closes; the bytes after its head
    (here a creation) are never served as a request."""
    head = b"CONNECT /healthz HTTP/1.1\r\nHost: referee\r\nContent-Length: %d\r\n\r\n" % len(CREATE)
    inner = _post("/v1/games", len(CREATE), "", CREATE)
    before = _games_listed(http)
    with _connect(server.url) as sock:
        sock.sendall(head if apart else head + inner)
        if apart:
            time.sleep(0.3)
            with contextlib.suppress(OSError):  # closed already
                sock.sendall(inner)
        _refused(_Answers(sock), 501, "not-a-proxy", "CONNECT")
    assert _games_listed(http) == before


@pytest.mark.parametrize("offer", ["", H2C], ids=["plain", "h2c"])
def test_requests_pipelined_past_the_queue_are_refused_once_those_before_are_answered(
    server, offer
):
    """Requests sent ahead of their answers were queued without end: 300,000 pipelined
    ``GET /healthz`` grew the process by 700 MB. The first request and ``MAX_PIPELINED``
    queued behind it are answered, in order; the next is 400 ``too-many-pipelined``, and the
    connection is closed (an h2c offer declined is parsed again in a loop, and queued the
    same way)."""
    with _connect(server.url) as sock:
        sock.sendall(_get("/healthz", offer) * 600)
        answers = _Answers(sock)
        done = answers.read(600, seconds=20)
        statuses = [status for status, _, _ in done]
        assert statuses == [200] * (MAX_PIPELINED + 1) + [400], statuses
        assert json.loads(done[-1][2])["code"] == "too-many-pipelined"
        assert answers.closes()


def test_pipelined_requests_within_the_queue_are_each_answered_and_the_connection_kept(server):
    with _connect(server.url) as sock:
        for _ in range(3):
            sock.sendall(_get("/healthz", H2C) * MAX_PIPELINED)
            answers = _Answers(sock)
            done = answers.read(MAX_PIPELINED, seconds=20)
            assert [status for status, _, _ in done] == [200] * MAX_PIPELINED
            assert not answers.closed


def test_a_trailer_field_is_refused_and_nothing_is_played(server, http):
    """A chunked body's trailer fields were added to the request's headers, unbounded: a
    stream of them grew the process by gigabytes until the body's timeout, and an
    ``Authorization`` sent as a trailer played a move. Now the first trailer field is 400
    naming ``trailers``, and the connection is closed."""
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
    body = json.dumps({"seq": 0, "move": turn["legal_moves"][0]}).encode()
    chunked = b"%x\r\n%s\r\n0\r\n" % (len(body), body)
    path = f"/v1/games/{game['id']}/moves"
    for head, trailers in (
        (
            f"POST {path} HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\n",
            f"Authorization: Bearer {token}\r\n\r\n",
        ),
        (
            f"POST {path} HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {token}\r\n",
            "X-T: a\r\n" * 5000,
        ),
    ):
        with _connect(server.url) as sock:
            sock.sendall(
                head.encode() + b"Transfer-Encoding: chunked\r\n\r\n" + chunked + trailers.encode()
            )
            problem = _refused(_Answers(sock), 400, "invalid-request", "trailer")
            assert problem["field"] == "trailers"
    assert http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()["seq"] == 0


def test_header_fields_past_the_limit_are_refused_before_the_head_ends(server):
    """The fields were counted once the head was whole: a head of 17,000 empty fields, within
    the bytes allowed but never ended, was kept whole until the header timeout. Now the
    101st field is refused as it comes."""
    with _connect(server.url) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: r\r\n" + b"a:\r\n" * 2000)
        _refused(_Answers(sock), 431, "headers-too-large", "REFEREE_MAX_HEADER_FIELDS")


def test_an_http_1_1_request_without_host_is_400(server):
    with _connect(server.url) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
        problem = _refused(_Answers(sock), 400, "invalid-request", "Host")
        assert problem["field"] == "host"
    with _connect(server.url) as sock:
        sock.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")  # 1.0 names none
        assert _Answers(sock).read()[0][0] == 200


def test_a_number_out_of_range_is_400_naming_the_body(http):
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    for path, body in (
        (f"/v1/games/{game['id']}/moves", b'{"seq": 1e400, "move": {"type": "mark"}}'),
        ("/v1/games", b'{"ruleset": "choice", "seats": [{}, {}], "deadline_s": 1e400}'),
    ):
        reply = http.post(
            path, content=body, headers={**auth(token), "content-type": "application/json"}
        )
        assert reply.status_code == 400, reply.text
        assert reply.json()["field"] == "body" and "out of range" in reply.json()["detail"]


# -- 5. Last-Event-ID -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "last_id",
    ["1" * 5000, "garbage", "1-2-3", "-1", "18446744073709551616-0", "1-18446744073709551616"],
)
def test_a_last_event_id_that_is_no_event_id_is_400_naming_the_header(http, last_id):
    game = create(http, "choice", 2)
    reply = http.get(f"/v1/games/{game['id']}/events", headers={"Last-Event-ID": last_id})
    assert reply.status_code == 400, reply.text
    assert reply.headers["content-type"] == "application/problem+json"
    assert reply.json()["code"] == "invalid-request"
    assert reply.json()["field"] == "Last-Event-ID"


def _event_ids(http: httpx.Client, url: str) -> list[str]:
    """The ids a game's stream tells from its start, until it is quiet for a second."""
    ids: list[str] = []
    timeout = httpx.Timeout(10, read=1.0)
    head = {"Last-Event-ID": "0-0"}
    with (
        contextlib.suppress(httpx.ReadTimeout),
        http.stream("GET", url, headers=head, timeout=timeout) as reply,
    ):
        for line in reply.iter_lines():
            if line.startswith("id: "):
                ids.append(line[4:])
    return ids


def test_a_last_event_id_the_referee_sent_resumes_the_stream(http):
    game = create(http, "choice", 2)
    url = f"/v1/games/{game['id']}/events"
    ids = _event_ids(http, url)
    for sent in (ids[0], ids[-1]):  # the newest: nothing after it yet
        with http.stream("GET", url, headers={"Last-Event-ID": sent}) as reply:
            assert reply.status_code == 200


@pytest.mark.parametrize("later", ["18446744073709551615-0", "{next_ms}-0", "{next_ms}"])
def test_a_last_event_id_after_the_newest_event_is_400_not_a_stream_that_tells_nothing(http, later):
    """An id after the game's newest event's millisecond is none the stream sent: it was
    taken, and the stream told nothing after it (a later event's id is smaller) until the
    game's ids caught up with it; now 400, naming the header. (An id within the newest's
    millisecond is taken: ``test_hidden_step_ids``.)"""
    game = create(http, "choice", 2)
    url = f"/v1/games/{game['id']}/events"
    ms, seq = (int(part) for part in _event_ids(http, url)[-1].split("-"))
    last_id = later.format(ms=ms, next_seq=seq + 1, next_ms=ms + 1)
    reply = http.get(url, headers={"Last-Event-ID": last_id})
    assert reply.status_code == 400, (last_id, reply.text)
    assert reply.json()["field"] == "Last-Event-ID"


# -- 5. a timeout that runs out as a request comes ---------------------------------------------


def _busy_reading(busy: socket.socket, loop: asyncio.AbstractEventLoop) -> None:
    loop.remove_reader(busy.fileno())
    busy.recv(1)
    time.sleep(0.6)


@pytest.mark.parametrize("timer", ["keep-alive", "header", "body"])
def test_a_request_that_comes_as_a_timeout_runs_out_is_answered_not_reset(
    valkey, monkeypatch, timer
):
    """An event loop runs its due timers before it reads its sockets. When it was busy as a
    connection's keep-alive (or its header period) ran out, and the next request came
    meanwhile, closing the connection under the unread request would reset it: its client,
    with a move on its way, could not tell whether it was taken. The request is read and
    answered; a connection idle for the whole timeout is still closed. A body whose rest
    came so as its time ran out is read too, not refused with 408."""
    from conftest import ThreadServer

    from referee.web.serving import PublicHttp

    # the protocol reads the process's settings: its class's, in this process
    monkeypatch.setattr(PublicHttp, "header_timeout_s", 1.0 if timer == "header" else 30.0)
    monkeypatch.setattr(PublicHttp, "body_timeout_s", 1.0 if timer == "body" else 30.0)
    running = ThreadServer(valkey)
    running.server.config.timeout_keep_alive = 1 if timer == "keep-alive" else 30
    body = json.dumps({"ruleset": "choice", "seats": [{"name": "a"}, {"name": "b"}]}).encode()
    with running, _connect(running.url) as sock:
        connected = time.monotonic()
        loop = running.server.servers[0].get_loop()
        answers = _Answers(sock)
        sock.sendall(_get("/healthz"))
        assert [status for status, _, _ in answers.read()] == [200]
        # when the connection would be closed: idle for the keep-alive's 1 s, a whole header
        # period (1 s) in which no request began, looked at every period, or 1 s after the
        # head of a body that has not come whole
        due = time.monotonic() + 1.0 if timer == "keep-alive" else connected + 2.0
        if timer == "body":
            sock.sendall(_post("/v1/games", len(body), body=body[:10]))
            due = time.monotonic() + 1.0
        time.sleep(max(0.0, due - 0.3 - time.monotonic()))
        # the loop busy reading a socket (as it is with other requests) until the timeout
        # is due: a reader runs within the loop's reading of its sockets, after its timers
        busy, wake = socket.socketpair()
        with busy, wake:
            loop.call_soon_threadsafe(loop.add_reader, busy.fileno(), _busy_reading, busy, loop)
            time.sleep(0.05)
            wake.send(b"x")
            time.sleep(0.1)
        # it comes while the loop is busy
        sock.sendall(body[10:] if timer == "body" else _get("/healthz"))
        statuses = [status for status, _, _ in answers.read(2)]
        assert statuses == [200, 201 if timer == "body" else 200], "reset, or 408"
        if timer != "body":
            assert answers.closes(seconds=5), "an idle connection stayed open"
