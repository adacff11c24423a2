"""Twelve house-bot accounts (4 strong, 4 greedy, 4 random) play the default ruleset's arena
through ``referee.tools.arena`` (the loop of ``referee bot --bot-token --arena``) on one
referee with a Valkey of its own, until the leaderboard ranks every strong bot above every
random one with a few rated games each (at most 50 s): the ratings tell the bots apart."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
import redis

from referee.core.league import LogEntry, decode
from referee.games import DEFAULT
from referee.store.embedded import start_embedded
from referee.tools.arena import play_arena
from referee.tools.launch import LOAD_LIMITS, start_referee

KINDS = ("strong", "greedy", "random")


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    """A referee in a process of its own (its GIL not shared with the twelve bots), on a
    Valkey of its own."""
    valkey = start_embedded(tmp_path_factory.mktemp("arena-valkey"))
    process, url = start_referee(valkey.url, env=dict(LOAD_LIMITS))
    yield url, valkey.url
    process.terminate()
    process.wait(timeout=10)
    valkey.stop()


def _apart(board: dict) -> bool:
    """Every strong bot above every random one, each with 5 rated games or more."""
    rows = board["bots"]
    if len(rows) < 12 or min(row["games"] for row in rows) < 5:
        return False
    ranks = {row["name"]: row["rank"] for row in rows}
    worst_strong = max(r for name, r in ranks.items() if name.startswith("strong"))
    best_random = min(r for name, r in ranks.items() if name.startswith("random"))
    return worst_strong < best_random


def test_the_arena_ranks_strong_bots_above_random_ones(arena):
    url, valkey_url = arena
    stop = threading.Event()
    threads = []
    with httpx.Client(base_url=url, timeout=30) as http:
        for kind in KINDS:
            for i in range(4):
                made = http.post("/v1/bots", json={"name": f"{kind} {i}"})
                assert made.status_code == 201, made.text
                thread = threading.Thread(
                    target=play_arena,
                    args=(url, made.json()["token"], DEFAULT, kind),
                    kwargs={"seed": i, "stop": stop},
                )
                thread.start()
                threads.append(thread)
        board: dict = {}
        try:
            deadline = time.monotonic() + 50
            while time.monotonic() < deadline:
                time.sleep(1)
                board = http.get(f"/v1/leaderboards/{DEFAULT}").json()
                if _apart(board):
                    break
        finally:
            stop.set()
            for thread in threads:
                thread.join(30)
        assert _apart(board), board
        # every bot left the pool when it stopped
        for kind in KINDS:
            assert not http.get(f"/v1/bots/{kind} 0").json()["in_arena"]
        # every rated game in the league's log once, and counted once for each of its two
        # seats (read between two reads of the log that agree: a game left in play may end
        # by its deadlines meanwhile)
        client = redis.Redis.from_url(valkey_url)
        try:
            for _ in range(20):
                before = client.llen("{league}:log")
                rows = http.get(f"/v1/leaderboards/{DEFAULT}").json()["bots"]
                entries = client.lrange("{league}:log", 0, -1)
                if len(entries) == before:
                    break
        finally:
            client.close()
        for row in rows:
            assert row["wins"] + row["draws"] + row["losses"] == row["games"]
    log = [decode(entry, LogEntry) for entry in entries]
    assert len({entry.game_id for entry in log}) == len(log)
    assert sum(row["games"] for row in rows) == 2 * len(log)
