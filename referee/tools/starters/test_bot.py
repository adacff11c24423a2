"""This bot's own test: a local referee (its own embedded Valkey, in a temporary folder), and
one game of every ruleset it knows against a house bot, played to its end by this bot with
no move decided for it by a deadline. Run it with `python -m pytest test_bot.py` (or `python
test_bot.py`); it needs the referee installed (`pip install -e .` in its checkout)."""

import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from referee.games import RULESETS
from referee.tools.launch import free_port, start_referee

HERE = Path(__file__).resolve().parent
STYLE = "__STYLE__"  # stdin | poll | webhook
COMMAND = ["__COMMAND__"]  # how the bot runs, in this folder


def _game(http, ruleset, me):
    seats = max(2, RULESETS[ruleset].min_seats)
    body = {"ruleset": ruleset, "seats": [me] + [{"bot": "random"}] * (seats - 1)}
    created = http.post("/v1/games", json={**body, "deadline_s": 20})
    assert created.status_code == 201, created.text
    return created.json()


def _play(url, http, ruleset):
    """One game of ``ruleset``, this bot in seat 0; its record."""
    if STYLE == "webhook":
        port = free_port()
        game = _game(http, ruleset, {"webhook": {"url": f"http://127.0.0.1:{port}/"}})
        env = {**os.environ, "WEBHOOK_SECRET": game["seats"][0]["webhook_secret"]}
        bot = subprocess.Popen([*COMMAND, str(port)], cwd=HERE, env=env)
        try:
            for _ in range(1200):  # the referee calls the bot until the game is over
                if http.get(f"/v1/games/{game['id']}").json()["status"] == "finished":
                    break
                time.sleep(0.05)
        finally:
            bot.kill()
            bot.wait()
    else:
        game = _game(http, ruleset, {"name": "me"})
        token = game["seats"][0]["token"]
        if STYLE == "stdin":  # `referee bot --exec` runs it: a Turn JSON line in, a move out
            argv = [sys.executable, "-m", "referee.cli", "bot", "--url", url]
            argv += ["--seat-token", token, "--exec", shlex.join(COMMAND), "--log", "bot.log"]
        else:
            argv = [*COMMAND, url, token]
        subprocess.run(argv, cwd=HERE, check=True, timeout=300)
    return http.get(f"/v1/games/{game['id']}/record").json()


def test_the_bot_plays_a_game_of_every_ruleset():
    with tempfile.TemporaryDirectory() as data:
        env = {"REFEREE_DATA_DIR": data, "REFEREE_WEBHOOK_ALLOW": "127.0.0.1"}
        referee, url = start_referee(None, env=env)
        try:
            with httpx.Client(base_url=url, timeout=60) as http:
                for ruleset in RULESETS:
                    record = _play(url, http, ruleset)
                    assert record["finished"], ruleset
                    mine = [d for d in record["decisions"] if d.get("seat") == 0]
                    assert mine and not any(d.get("timeout") for d in mine), ruleset
        finally:
            referee.terminate()
            referee.wait(timeout=15)


if __name__ == "__main__":
    test_the_bot_plays_a_game_of_every_ruleset()
    print("ok: the bot played a game of every ruleset to its end")
