"""SIGTERM with event streams, long-polls and moves open: the referee stops taking
connections, ends each stream with a ``retry:`` hint, answers each long-poll at once as a wait
that ran out would, finishes the moves in flight, stops its embedded Valkey and exits; what it
accepted is there when it starts again on the same data."""

from __future__ import annotations

import signal
import threading
import time

import httpx
from helpers import auth, create

from referee.tools.launch import LOAD_LIMITS, free_port, start_referee


def _serve(data, log, port):
    env = {**LOAD_LIMITS, "REFEREE_DATA_DIR": str(data)}
    with log.open("a") as out:
        return start_referee(None, env=env, port=port, stdout=out, stderr=out)


def test_sigterm_ends_streams_and_long_polls_finishes_moves_and_loses_nothing(tmp_path):
    data, log, port = tmp_path / "data", tmp_path / "referee.log", free_port()
    referee, url = _serve(data, log, port)
    http = httpx.Client(base_url=url, timeout=30)
    try:
        game = create(http, "choice", 3)
        path = f"/v1/games/{game['id']}"
        tokens = [seat["token"] for seat in game["seats"]]
        turns = [http.get(path + "/turn", headers=auth(t)).json() for t in tokens]
        assert [t["status"] for t in turns] == ["your_turn"] * 3, turns

        def move(seat: int) -> httpx.Response:
            body = {"seq": turns[seat]["seq"], "move": turns[seat]["legal_moves"][0]}
            return httpx.post(url + path + "/moves", headers=auth(tokens[seat]), json=body)

        assert move(0).status_code == 200  # seat 0 has decided: it waits for the others

        stream_lines: list[str] = []
        polled: list[httpx.Response] = []
        moved: list[httpx.Response | Exception] = []
        streaming = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", url + path + "/events", timeout=30) as reply:
                assert reply.status_code == 200
                streaming.set()
                stream_lines.extend(reply.iter_lines())  # until the referee ends it

        def long_poll(wait: str) -> None:
            turn = f"{url}{path}/turn?wait={wait}"
            polled.append(httpx.get(turn, headers=auth(tokens[0]), timeout=30))

        def late_move() -> None:
            try:
                moved.append(move(1))
            except httpx.HTTPError as exc:  # sent after the listener closed: never accepted
                moved.append(exc)

        # one long-poll answered by the protocol (web.hot), one by the handler (seven
        # decimals: not a query the hot route takes)
        threads = [
            threading.Thread(target=listen),
            threading.Thread(target=long_poll, args=("30",)),
            threading.Thread(target=long_poll, args=("30.0000001",)),
        ]
        for thread in threads:
            thread.start()
        assert streaming.wait(10)
        time.sleep(0.5)  # the long-poll is waiting
        assert not polled, "the long-poll did not wait"
        mover = threading.Thread(target=late_move)
        mover.start()
        time.sleep(0.005)
        began = time.monotonic()
        referee.send_signal(signal.SIGTERM)
        assert referee.wait(timeout=15) == 0
        assert time.monotonic() - began < 10, "the referee took over 10 s to stop"
        for thread in [*threads, mover]:
            thread.join(timeout=10)
            assert not thread.is_alive()
        assert "retry: 1000" in stream_lines, stream_lines
        assert [reply.status_code for reply in polled] == [200, 200], polled
        for reply in polled:
            answered = reply.json()
            assert answered["status"] == "waiting" or answered["seq"] > turns[0]["seq"], answered

        referee, url = _serve(data, log, port)
        http = httpx.Client(base_url=url, timeout=30)
        after = http.get(path + "/turn", headers=auth(tokens[0])).json()
        assert after["status"] == "waiting" or after["seq"] > turns[0]["seq"], "move 0 was lost"
        if isinstance(moved[0], httpx.Response) and moved[0].status_code == 200:
            again = http.get(path + "/turn", headers=auth(tokens[1])).json()
            assert again["status"] == "waiting" or again["seq"] > turns[1]["seq"], "move 1 lost"
    finally:
        referee.terminate()
        referee.wait(timeout=20)
    assert "Traceback" not in log.read_text(), log.read_text()
