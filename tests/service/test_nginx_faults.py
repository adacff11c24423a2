"""Two replicas behind nginx (the deploy/ configuration) play a tournament of reference bots
while one replica is killed (-9) and started again, Valkey is stopped (SIGSTOP) for 5 s, and
Valkey is killed and started again on its append-only file. Nothing accepted is lost, nothing
is decided twice, and every record verifies. nginx is Debian's package: started by the test
when it is installed (`.ci/run` installs it), else the test is skipped with the reason."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from helpers import ready, wait_until

sys.path.insert(0, str(Path(__file__).parents[2] / "clients" / "python"))

from referee_client import Client, RefereeError

from referee.bots import get_bot
from referee.games import verify
from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, free_port, start_referee

ROOT = Path(__file__).parents[2]
NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None
)
pytestmark = pytest.mark.skipif(
    NGINX is None, reason="nginx is not installed (apt-get install nginx-light; .ci/run does)"
)
BOTS = ["greedy", "random", "greedy", "random"]
#: each bot thinks this long per decision, so that the faults fall in the middle of play
THINK_S = 0.2
SPEC = {
    "ruleset": "choice",
    "entrants": 4,
    "games_per_pairing": 3,
    "deadline_s": 0,
    "options": {"schedule": [1]},
}


def _nginx_conf(prefix: Path, listen: int, replicas: list[int]) -> Path:
    """deploy/nginx.conf with loopback ports, and its files in ``prefix``."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    servers = "".join(
        f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;\n" for p in replicas
    )
    conf = re.sub(r"(        server referee-\d:8000;\n)+", servers, conf)
    conf = conf.replace("listen 8080;", f"listen 127.0.0.1:{listen};")
    paths = "".join(
        f"    {kind}_temp_path {prefix / kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = conf.replace("http {\n", f"http {{\n    access_log off;\n{paths}", 1)
    head = f"daemon off;\npid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} warn;\n"
    if os.geteuid() == 0:
        head += "user root;\n"  # its workers read the temp paths of a root-owned directory
    path = prefix / "nginx.conf"
    path.write_text(head + conf)
    return path


class Entrants:
    """The reference bots, one thread each, through nginx; every decision the referee
    accepted is noted as (game, seat, seq)."""

    def __init__(self, url: str, tokens: list[str]) -> None:
        self.accepted: list[tuple[str, int, int]] = []
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._play, args=(url, token, BOTS[i], i), daemon=True)
            for i, token in enumerate(tokens)
        ]
        for thread in self.threads:
            thread.start()

    def _play(self, url: str, token: str, bot: str, seed: int) -> None:
        choose = get_bot("choice", bot, seed)
        try:
            with Client(url, timeout=90) as client:
                while True:
                    step = client.next_decision(token, wait=20)
                    if step.status == "finished":
                        return
                    if step.status != "your_turn" or step.turn is None:
                        continue
                    turn = step.turn
                    move = choose({"legal_moves": turn.legal_moves, "view": turn.view})
                    time.sleep(THINK_S)
                    try:
                        accepted = client.move(step.game_id, step.seat_token, turn.seq, move)
                    except RefereeError as error:
                        if error.code not in ("seq-already-decided", "seq-mismatch"):
                            raise
                        continue  # decided by an earlier attempt whose answer was lost
                    with self.lock:
                        self.accepted.append((step.game_id, accepted.seat, accepted.seq))
        except BaseException as error:
            self.errors.append(error)

    def count(self) -> int:
        with self.lock:
            return len(self.accepted)

    def alive(self) -> bool:
        return any(thread.is_alive() for thread in self.threads)


def test_a_tournament_behind_nginx_loses_nothing_through_replica_and_valkey_faults(tmp_path):
    data = Path(tempfile.mkdtemp(prefix="rf-"))  # short: the Unix socket's path stays here
    valkey = start_embedded(data, keep_alive=False)
    logs = [(tmp_path / f"replica-{i}.log").open("a") for i in range(2)]
    ports = [free_port(), free_port()]
    nginx_port = free_port()
    env = dict(LOAD_LIMITS)
    replicas = [
        start_referee(valkey.url, env=env, port=ports[i], stdout=logs[i], stderr=logs[i])[0]
        for i in range(2)
    ]
    nginx = subprocess.Popen([NGINX, "-c", str(_nginx_conf(tmp_path, nginx_port, ports))])
    url = f"http://127.0.0.1:{nginx_port}"
    try:
        assert wait_until(lambda: ready(url), 20), (tmp_path / "error.log").read_text()
        with Client(url) as organizer:
            tournament = organizer.create_tournament(SPEC)["id"]
            tokens = [organizer.register(tournament, f"bot{i}").token for i in range(4)]
        entrants = Entrants(url, tokens)

        # one replica killed mid-play, the other takes its games; then it comes back
        _plays_on(entrants)
        replicas[0].kill()
        replicas[0].wait(timeout=10)
        _plays_on(entrants)
        replicas[0] = start_referee(
            valkey.url, env=env, port=ports[0], stdout=logs[0], stderr=logs[0]
        )[0]

        # Valkey frozen for 5 s: requests wait, none is refused or lost
        os.kill(valkey.pid, signal.SIGSTOP)
        time.sleep(5)
        os.kill(valkey.pid, signal.SIGCONT)
        _plays_on(entrants)

        # Valkey killed and started again on its append-only file
        os.kill(valkey.pid, signal.SIGKILL)
        time.sleep(0.5)
        valkey = start_embedded(data, keep_alive=False)
        _plays_on(entrants)

        for thread in entrants.threads:
            thread.join(timeout=240)
        assert not entrants.alive(), "the tournament did not finish"
        assert entrants.errors == []
        with Client(url) as spectator:
            view = spectator.tournament(tournament)
            assert view["status"] == "finished"
            games = [table["game_id"] for rnd in view["rounds"] for table in rnd]
            assert len(games) == 18
            decided: dict[tuple[str, int, int], int] = {}
            for game in games:
                record = spectator.http.get(f"/v1/games/{game}/record")
                assert verify(record.content).ok, game
                for decision in record.json()["decisions"]:
                    key = (game, decision["seat"], decision["seq"])
                    decided[key] = decided.get(key, 0) + 1
        lost = [key for key in entrants.accepted if key not in decided]
        twice = [key for key, times in decided.items() if times > 1]
        assert lost == [] and twice == [], (lost[:5], twice[:5])
        assert len(set(entrants.accepted)) == len(entrants.accepted)
    finally:
        nginx.terminate()
        for replica in replicas:
            replica.kill()
            replica.wait(timeout=10)
        valkey.stop()
        shutil.rmtree(data, ignore_errors=True)
        nginx.wait(timeout=10)
        for log in logs:
            log.close()
    for i in range(2):
        text = (tmp_path / f"replica-{i}.log").read_text()
        assert "Traceback" not in text, text[-3000:]


def _plays_on(entrants: Entrants, decisions: int = 30, seconds: float = 60) -> None:
    """Play goes on: ``decisions`` more are accepted within ``seconds`` (else say where the
    bots stand)."""
    seen = entrants.count()
    moved = wait_until(lambda: entrants.count() >= seen + decisions, seconds)
    assert moved, f"play stopped at {entrants.count()} decisions; bots' errors: {entrants.errors}"
