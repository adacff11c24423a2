"""How a connection ends, seen on raw sockets: a client that half-closes after its requests
(``shutdown(SHUT_WR)``: HTTP/1.1 lets it still read) gets every answer, then the connection
closes; a client that stops reading the answers it asked for is cut off within two periods of
``REFEREE_HEADER_TIMEOUT_S``, while one that reads slowly but steadily is served to the end."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest
from helpers import auth
from test_http_edge import _Answers, _connect, _first_move, _first_turn, _get, _post

from referee.tools.launch import LOAD_LIMITS, start_referee
from referee.web.edge_refusals import MAX_PIPELINED

CREATE = json.dumps({"ruleset": "choice", "seats": [{"name": "a"}, {"name": "b"}]}).encode()
#: the contract, uncompressed: about 350 KB an answer
CONTRACT = _get("/docs/openapi.json")


# -- a half-close -------------------------------------------------------------------------------


def test_a_move_then_a_half_close_is_played_answered_and_the_connection_closed(server, http):
    """The move was played, and its answer lost: the referee closed the connection as the
    client's FIN arrived."""
    path, token, turn = _first_turn(http)
    with _connect(server.url) as sock:
        sock.sendall(_first_move(path, token, turn))
        sock.shutdown(socket.SHUT_WR)
        answers = _Answers(sock)
        done = answers.read(1, seconds=5)
        assert [status for status, _, _ in done] == [200], done
        assert json.loads(done[0][2])["seq"] == turn["seq"]
        # (with "Connection: close" if the FIN was read before the answer was written)
        assert answers.closes()
    assert http.get(path + "/turn", headers=auth(token)).json()["seq"] == turn["seq"] + 1


def test_a_long_poll_then_a_half_close_is_answered_when_its_turn_comes(server, http):
    """A decision that long-polls for the next turn is answered when it is ready, though the
    client sent its FIN before."""
    path, token, turn = _first_turn(http)
    with _connect(server.url) as sock:
        sock.sendall(_first_move(path, token, turn, "?wait=1"))
        sock.shutdown(socket.SHUT_WR)
        answers = _Answers(sock)
        done = answers.read(1, seconds=5)
        assert [status for status, _, _ in done] == [200], done
        assert json.loads(done[0][2])["turn"]["status"] == "waiting"
        assert answers.closes()


def test_a_creation_then_a_half_close_is_answered(server, http):
    """Through Litestar's cycle as well as the hot routes'."""
    with _connect(server.url) as sock:
        sock.sendall(_post("/v1/games", len(CREATE), "", CREATE))
        sock.shutdown(socket.SHUT_WR)
        answers = _Answers(sock)
        done = answers.read(1, seconds=5)
        assert [status for status, _, _ in done] == [201], done
        game = json.loads(done[0][2])
        assert answers.closes()
    assert http.get(f"/v1/games/{game['id']}").status_code == 200


def test_pipelined_requests_then_a_half_close_are_each_answered_in_order(server, http):
    path, token, turn = _first_turn(http)
    with _connect(server.url) as sock:
        sock.sendall(_get("/healthz") + _first_move(path, token, turn) + _get("/healthz"))
        sock.shutdown(socket.SHUT_WR)
        answers = _Answers(sock)
        done = answers.read(3, seconds=5)
        assert [status for status, _, _ in done] == [200, 200, 200], done
        assert json.loads(done[1][2])["seq"] == turn["seq"]
        assert answers.closes()


def test_a_refusal_behind_a_long_poll_then_a_half_close_is_answered_after_it(server, http):
    """The long-poll's end closed the connection, and the refusal waiting behind it was never
    written."""
    path, token, turn = _first_turn(http)
    with _connect(server.url) as sock:
        sock.sendall(_first_move(path, token, turn, "?wait=1"))
        time.sleep(0.2)
        sock.sendall(_get("/v1/games/%2F"))
        sock.shutdown(socket.SHUT_WR)
        answers = _Answers(sock)
        done = answers.read(2, seconds=5)
        assert [status for status, _, _ in done] == [200, 400], done
        assert answers.closes()


def test_a_half_close_inside_a_request_s_body_closes_and_plays_nothing(server, http):
    path, token, turn = _first_turn(http)
    move = _first_move(path, token, turn)
    with _connect(server.url) as sock:
        sock.sendall(move[:-3])
        sock.shutdown(socket.SHUT_WR)
        answers = _Answers(sock)
        assert answers.closes()
    assert http.get(path + "/turn", headers=auth(token)).json()["seq"] == turn["seq"]


# -- a client that stops reading ----------------------------------------------------------------


@pytest.fixture(scope="module")
def watchful(valkey):
    """A referee that looks at its connections every second (``REFEREE_HEADER_TIMEOUT_S``)."""
    env = {**LOAD_LIMITS, "REFEREE_HEADER_TIMEOUT_S": "1"}
    referee, url = start_referee(valkey, env=env)
    yield url
    referee.terminate()
    referee.wait(timeout=20)


def _reader(url: str) -> socket.socket:
    """A connection whose receive buffer is small: the answers it does not read wait at the
    referee."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket()
    # before the connection is made: shrunk on an open connection, the window stalled the
    # kernel's own sending for tens of seconds, whatever the reader did
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect((host, int(port)))
    return sock


def _contract_size(url: str) -> int:
    return len(httpx.get(url + "/docs/openapi.json").content)


def _drain(sock: socket.socket, seconds: float) -> tuple[int, bool]:
    """Bytes read within ``seconds``, and whether the referee ended the connection."""
    stop, got = time.monotonic() + seconds, 0
    while time.monotonic() < stop:
        sock.settimeout(max(0.01, stop - time.monotonic()))
        try:
            data = sock.recv(1 << 20)
        except TimeoutError:
            return got, False
        except ConnectionResetError:
            return got, True
        if not data:
            return got, True
        got += len(data)
    return got, False


#: one request answered and the rest queued: 6 MB of answers, more than the kernel's buffers
#: of a loopback connection hold (4 MB at most by default), so that the rest waits at the
#: referee
ASKED = 1 + MAX_PIPELINED


def test_a_client_that_stops_reading_is_cut_off(watchful):
    """Answers of 200 KB asked for and none read: the connection was held for as long as the
    client liked, with megabytes of answers waiting in the process."""
    size = _contract_size(watchful)
    with _reader(watchful) as sock:
        sock.sendall(CONTRACT * ASKED)
        time.sleep(4)  # past two periods of reading nothing
        got, ended = _drain(sock, seconds=10)
    assert ended
    assert got < ASKED * size, "every answer was delivered: the connection was never cut"


def test_a_client_that_reads_slowly_but_steadily_is_served_to_the_end(watchful):
    size = _contract_size(watchful)
    with _reader(watchful) as sock:
        sock.sendall(CONTRACT * ASKED)
        got, began = 0, time.monotonic()
        while got < ASKED * size and time.monotonic() - began < 30:
            step = 0
            while step < 128 * 1024:  # 128 KB every 0.1 s: 5 s for the lot
                data = sock.recv(min(128 * 1024 - step, ASKED * size + 1 - got - step))
                if not data:
                    break  # ended: every byte there is, or cut off (below)
                step += len(data)
            got += step
            if not step:
                break
            time.sleep(0.1)
        assert got > ASKED * size, f"{got} bytes read in {time.monotonic() - began:.1f} s"
        assert time.monotonic() - began > 2, "read too fast to have waited at the referee"


def test_a_client_that_reads_slower_than_its_answers_drain_is_served_on(watchful):
    """Answers waiting past the kernel's buffers (the client read nothing for a while), then
    read at 64 KB a second: the connection's writing stayed paused at two looks, and the
    client was cut off though it read all the while. What counts is that it reads."""
    size = _contract_size(watchful)
    with _reader(watchful) as sock:
        sock.sendall(CONTRACT * ASKED)
        time.sleep(1.5)  # the kernel's buffers fill; the rest waits at the referee
        got, ended = _trickle(sock, 64 * 1024, seconds=3.5)  # past two looks, reading
        assert not ended, f"cut off after {got} bytes read"
        rest, ended = _drain(sock, seconds=30)
        assert got + rest >= ASKED * size, f"{got + rest} of {ASKED * size} bytes"


def _trickle(sock: socket.socket, per_second: int, seconds: float) -> tuple[int, bool]:
    """Bytes read at ``per_second`` (in eighths of a second) for ``seconds``, and whether the
    referee ended the connection meanwhile."""
    got, began, step = 0, time.monotonic(), per_second // 8
    while time.monotonic() - began < seconds:
        want = step
        while want > 0:
            try:
                data = sock.recv(min(4096, want))
            except (ConnectionResetError, TimeoutError):
                data = b""
            if not data:
                return got, True
            got, want = got + len(data), want - len(data)
        time.sleep(0.125)
    return got, False


def test_a_client_that_reads_a_trickle_or_for_too_long_is_cut_off(watchful):
    """A reader of 2 KB a second (less than MIN_READ_BYTES a look) held a connection, its
    answers and the kernel's buffers as long as it liked; so did one that read enough each
    look, but behind megabytes of answers: at most MAX_STALLED_LOOKS looks in a row. Cut
    off, the connection's answers left in the process are dropped (what the kernel holds
    already still reaches the client)."""
    size = _contract_size(watchful)
    for per_second, seconds in ((2 * 1024, 4.0), (64 * 1024, 9.0)):
        with _reader(watchful) as sock:
            sock.sendall(CONTRACT * ASKED)
            time.sleep(1.5)  # the kernel's buffers fill; the rest waits at the referee
            got, _ = _trickle(sock, per_second, seconds)
            rest, ended = _drain(sock, seconds=30)
            assert ended and got + rest < ASKED * size, (per_second, got, rest)
