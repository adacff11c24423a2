"""While Redis is down the log says so once, then a count now and then, and once when it is
back: never a line per refused request (under load that was thousands of lines a minute)."""

from __future__ import annotations

import logging
import os
import signal
import time

import httpx
from helpers import auth, create, ready, wait_until

from referee.store import Availability
from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, start_referee


def _about_redis(text: str) -> list[str]:
    return [line for line in text.splitlines() if "Redis" in line or "redis" in line]


def test_two_hundred_requests_refused_while_redis_is_down_make_a_handful_of_lines(tmp_path):
    valkey = start_embedded(tmp_path / "valkey", keep_alive=False)
    log = tmp_path / "referee.err"
    env = {**LOAD_LIMITS, "REFEREE_REDIS_TIMEOUT_S": "1"}
    with log.open("w") as err:
        referee, url = start_referee(valkey.url, env=env, stdout=err, stderr=err)
    back = None
    try:
        http = httpx.Client(base_url=url, timeout=30)
        game = create(http, "choice", 2)
        game_id, seat = game["id"], auth(game["seats"][0]["token"])
        turn = http.get(f"/v1/games/{game_id}/turn", headers=seat).json()
        move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
        os.kill(valkey.pid, signal.SIGKILL)  # its socket stays: connecting is refused
        valkey.stop()
        calls = [
            lambda: http.get(f"/v1/games/{game_id}"),
            lambda: http.get(f"/v1/games/{game_id}/turn", headers=seat),
            lambda: http.post(f"/v1/games/{game_id}/moves", headers=seat, json=move),
            lambda: http.get(f"/v1/games/{game_id}/record"),
        ]
        codes = []
        for i in range(200):
            reply = calls[i % len(calls)]()
            codes.append((reply.status_code, reply.json().get("code")))
        assert set(codes) == {(503, "redis-unavailable")}, set(codes)
        down = _about_redis(log.read_text())
        assert 1 <= len(down) <= 4, down
        assert sum("Redis is unavailable (" in line for line in down) == 1, down

        back = start_embedded(tmp_path / "valkey", keep_alive=False)
        assert back.url == valkey.url
        assert wait_until(lambda: ready(url), 15), "/readyz did not come back"
        again = create(http, "choice", 2)  # (the game before may be lost: everysec)
        seat = auth(again["seats"][0]["token"])
        assert http.get(f"/v1/games/{again['id']}/turn", headers=seat).status_code == 200
        assert wait_until(lambda: "Redis is available again" in log.read_text(), 10)
        time.sleep(1.5)  # more answers (the PINGs of the connection hearing commits) meanwhile
    finally:
        referee.terminate()
        referee.wait(timeout=20)
        if back is not None:
            back.stop()
    text = log.read_text()
    assert text.count("Redis is available again") == 1, text
    assert "200 requests were refused meanwhile" in text, text
    assert "Traceback" not in text, text


def test_the_count_of_refusals_is_logged_once_a_period(caplog):
    """The reporter on its own: with a period of 0.2 s, refusals spread over about a second
    make one line down, a handful of counts, and one line up."""
    availability = Availability(every_s=0.2, quiet_s=0.1)
    with caplog.at_level(logging.WARNING, logger="referee"):
        stop = time.monotonic() + 1.0
        refused = 0
        while time.monotonic() < stop:
            availability.refused(ConnectionError("refused"))
            refused += 1
            time.sleep(0.001)
        availability.answers()  # too soon after a refusal: still down
        assert availability.down
        time.sleep(0.15)
        availability.answers()
        availability.answers()
    lines = [record.getMessage() for record in caplog.records]
    assert sum("Redis is unavailable (refused)" in line for line in lines) == 1, lines
    counts = [line for line in lines if "requests refused in the last" in line]
    assert 3 <= len(counts) <= 6, lines
    assert sum(line.startswith("Redis is available again") for line in lines) == 1, lines
    assert f"{refused} requests were refused meanwhile" in lines[-1]
    assert len(lines) < 10
