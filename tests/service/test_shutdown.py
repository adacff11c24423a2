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


def test_sigterm_with_hundreds_of_waiting_seats_and_streams_stops_within_seconds(tmp_path):
    """200 seats long-polling (60 s) and 50 event streams, each on a connection of its own,
    none holding a Redis connection: SIGTERM answers every long-poll and ends every stream,
    and the referee exits within 10 s (a generous bound: it sat on its waiters for minutes
    when each held a blocked read)."""
    import asyncio

    data, log, port = tmp_path / "data", tmp_path / "referee.log", free_port()
    referee, url = _serve(data, log, port)
    try:
        http = httpx.Client(base_url=url, timeout=30)
        waiting = []
        for _ in range(40):
            game = create(http, "choice", 2)
            path = f"/v1/games/{game['id']}"
            token = game["seats"][0]["token"]
            turn = http.get(path + "/turn", headers=auth(token)).json()
            move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
            assert http.post(path + "/moves", headers=auth(token), json=move).is_success
            waiting += [(path, token)] * 5

        async def scenario():
            limits = httpx.Limits(max_connections=400, max_keepalive_connections=0)
            async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
                polls = [
                    asyncio.create_task(client.get(path + "/turn?wait=60", headers=auth(token)))
                    for path, token in waiting
                ]

                async def stream(path: str) -> list[str]:
                    async with client.stream("GET", path + "/events") as reply:
                        return [line async for line in reply.aiter_lines()]

                streams = [asyncio.create_task(stream(p)) for p, _ in waiting[::4]]
                await asyncio.sleep(2.0)  # every wait has begun
                assert not any(t.done() for t in [*polls, *streams])
                began = time.monotonic()
                referee.send_signal(signal.SIGTERM)
                answered = await asyncio.gather(*polls)
                ended = await asyncio.gather(*streams)
                return answered, ended, time.monotonic() - began

        answered, ended, took = asyncio.run(scenario())
        assert referee.wait(timeout=15) == 0
        assert took < 10, f"the waits took {took:.1f} s to end"
        assert [r.status_code for r in answered] == [200] * len(waiting)
        assert all(r.json()["status"] == "waiting" for r in answered)
        assert all("retry: 1000" in lines for lines in ended)
    finally:
        if referee.poll() is None:
            referee.terminate()
            referee.wait(timeout=20)
    assert "Traceback" not in log.read_text(), log.read_text()
