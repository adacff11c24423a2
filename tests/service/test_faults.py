"""Faults a referee on a public address meets: signals, a killed referee, a dead or
unreachable Redis. Each leaves the referee serving (or stopped cleanly), its log one line
per fault, never a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest
import redis
from helpers import auth, create, ready, wait_until

from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, free_port, start_referee


def _valkey_of(data_dir: Path) -> psutil.Process:
    pid = int((data_dir / "valkey.pid").read_text())
    process = psutil.Process(pid)
    assert "valkey-server" in " ".join(process.cmdline())
    return process


def _serve(data_dir: Path, log: Path):
    """``referee serve`` on its embedded Valkey in ``data_dir``, its output in ``log``."""
    with log.open("a") as out:
        return start_referee(None, env={"REFEREE_DATA_DIR": str(data_dir)}, stdout=out, stderr=out)


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_stops_the_embedded_valkey_and_the_next_start_serves(tmp_path, stop_signal):
    data, log = tmp_path / "data", tmp_path / "referee.log"
    referee, url = _serve(data, log)
    valkey = _valkey_of(data)
    game = create(httpx.Client(base_url=url), "choice", 2)
    referee.send_signal(stop_signal)
    assert referee.wait(timeout=20) == 0
    valkey.wait(timeout=10)  # stopped with the referee, not left holding the socket
    referee, url = _serve(data, log)
    try:
        reply = httpx.get(f"{url}/v1/games/{game['id']}")
        assert reply.status_code == 200, "the game outlived the restart (append-only file)"
    finally:
        referee.terminate()
        referee.wait(timeout=20)
    assert "Traceback" not in log.read_text()


def test_after_a_kill_9_the_next_start_stops_the_orphaned_valkey_with_one_line(tmp_path):
    data, log = tmp_path / "data", tmp_path / "referee.log"
    referee, url = _serve(data, log)
    orphan = _valkey_of(data)
    game = create(httpx.Client(base_url=url), "choice", 2)
    referee.kill()
    referee.wait(timeout=10)
    assert orphan.is_running()
    referee, url = _serve(data, log)
    try:
        orphan.wait(timeout=10)
        assert httpx.get(f"{url}/v1/games/{game['id']}").status_code == 200
    finally:
        referee.terminate()
        referee.wait(timeout=20)
    text = log.read_text()
    assert text.count(f"stopping the embedded Valkey (pid {orphan.pid})") == 1, text
    assert "Traceback" not in text


def test_a_dead_embedded_valkey_is_started_again_and_the_games_replay(tmp_path):
    data, log = tmp_path / "data", tmp_path / "referee.log"
    referee, url = _serve(data, log)
    try:
        http = httpx.Client(base_url=url)
        game = create(http, "choice", 2)
        token = game["seats"][0]["token"]
        turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
        move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
        assert http.post(f"/v1/games/{game['id']}/moves", headers=auth(token), json=move)
        time.sleep(1.2)  # everysec: the append-only file holds the decision
        first = _valkey_of(data)
        first.kill()
        assert wait_until(lambda: ready(url), 10), "/readyz did not come back"
        assert _valkey_of(data).pid != first.pid
        after = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
        assert after["seq"] == turn["seq"] + 1, "the accepted decision survived"
    finally:
        referee.terminate()
        referee.wait(timeout=20)
    text = log.read_text()
    assert text.count("the embedded Valkey exited") == 1, text
    assert text.count("the embedded Valkey is back") == 1, text
    assert "Traceback" not in text


def test_event_streams_and_long_polls_on_a_dead_redis_log_one_line_not_a_traceback(
    tmp_path,
):
    valkey = start_embedded(tmp_path / "valkey", keep_alive=False)
    log = tmp_path / "referee.log"
    with log.open("w") as out:
        referee, url = start_referee(valkey.url, stdout=out, stderr=out)
    try:
        game = create(httpx.Client(base_url=url), "choice", 2)

        def listen():
            try:
                with httpx.stream("GET", f"{url}/v1/games/{game['id']}/events", timeout=20) as r:
                    for _ in r.iter_lines():
                        pass
            except httpx.HTTPError:
                pass

        def poll():
            token = auth(game["seats"][1]["token"])
            for _ in range(3):
                httpx.get(f"{url}/v1/games/{game['id']}/turn?wait=2", headers=token, timeout=20)

        threads = [threading.Thread(target=f) for f in (listen, listen, listen, poll, poll)]
        for thread in threads:
            thread.start()
        time.sleep(1)
        os.kill(valkey.pid, signal.SIGKILL)
        for thread in threads:
            thread.join(timeout=30)
        assert httpx.get(f"{url}/readyz").status_code == 503
    finally:
        referee.terminate()
        referee.wait(timeout=20)
        valkey.stop()
    text = log.read_text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text
    # one line for the outage, however many streams it ended (``store.availability``)
    assert text.count("Redis is unavailable (") == 1, text


def test_an_unreachable_redis_url_is_one_line_with_its_password_hidden(tmp_path):
    log = tmp_path / "referee.log"
    unused = f"redis://:hunter2@127.0.0.1:{_closed_port()}/0"
    with log.open("w") as out:  # it starts: /healthz, never /readyz
        referee, url = start_referee(unused, stdout=out, stderr=out, ready="/healthz")
    try:
        assert httpx.get(f"{url}/readyz").status_code == 503
        time.sleep(3.5)  # three retries
        assert httpx.get(f"{url}/readyz").status_code == 503
    finally:
        referee.terminate()
        referee.wait(timeout=20)
    text = log.read_text()
    assert "hunter2" not in text
    lines = [line for line in text.splitlines() if "does not answer" in line]
    assert len(lines) == 1 and "redis://:***@127.0.0.1" in lines[0], text


def _closed_port() -> int:
    return free_port()  # nothing listens on it


def test_referee_tournament_bots_keep_playing_through_a_restart_of_the_referee(tmp_path):
    """``referee tournament --url``: its bots keep their tokens and wait out a referee that
    was killed (-9) and started again on the same data; the tournament finishes."""
    data, log = tmp_path / "data", tmp_path / "referee.log"
    port = free_port()
    env = {**LOAD_LIMITS, "REFEREE_DATA_DIR": str(data)}
    with log.open("a") as out:
        referee, url = start_referee(None, env=env, port=port, stdout=out, stderr=out)
    command = [sys.executable, "-m", "referee.cli", "tournament", "--url", url, "--json"]
    command += ["--ruleset", "chopta", "--options", '{"target": 15}', "--deadline", "0"]
    command += ["--bots", "random", "greedy", "strong", "greedy"]
    tournament = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        http = httpx.Client(base_url=url)
        assert wait_until(lambda: _games_played(http, data) >= 2, 60), (
            "the tournament did not start"
        )
        referee.kill()
        referee.wait(timeout=10)
        time.sleep(1)
        with log.open("a") as out:
            referee, url = start_referee(None, env=env, port=port, stdout=out, stderr=out)
        out, err = tournament.communicate(timeout=180)
        assert tournament.returncode == 0, err.decode()[-2000:]
        standings = json.loads(out)["standings"]
        assert sum(row["games"] for row in standings) == 12 * 2  # 6 pairings x 2 games x 2 seats
    finally:
        tournament.kill()
        referee.terminate()
        referee.wait(timeout=20)


def _games_played(http: httpx.Client, data: Path) -> int:
    """Games with a result in the tournaments on the referee (found in its store)."""
    with redis.Redis(unix_socket_path=str(data / "valkey.sock")) as store:
        keys = list(store.scan_iter(match="{tournament:*}:doc"))
    played = 0
    for key in keys:
        tournament_id = key.decode().split(":")[1].rstrip("}")
        view = http.get(f"/v1/tournaments/{tournament_id}").json()
        played += sum(1 for r in view["rounds"] for t in r if t["result"])
    return played
