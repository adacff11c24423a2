"""The referee's own wake times (``REFEREE_WAKE_TIMES``, ``referee.service.wakes``): a
long-poll woken by the other seat's decision is counted once, within the time the client saw
it take; a long-poll that ran out and a decision that waited for nothing are not counted."""

from __future__ import annotations

import json
import random
import threading
import time

import httpx
from helpers import auth, create, wait_until

from referee.service.wakes import WakeTimes, percentile
from referee.tools.launch import LOAD_LIMITS, start_referee


def test_the_histogram_gives_quantiles_within_its_buckets():
    times, rnd = WakeTimes(), random.Random(3)
    values = sorted(rnd.randint(1, 2 * 10**9) for _ in range(20_000))
    for value in values:
        times.add(value)
    for q in (0.5, 0.9, 0.99):
        exact = values[int(q * len(values)) - 1] / 1e6
        assert abs(percentile(times.counts, q) - exact) <= 0.05 * exact, q
    assert percentile({}, 0.5) is None


def _counts(path) -> dict[int, int]:
    files = [p for p in path.parent.glob(path.name + ".*") if not p.name.endswith(".partial")]
    counts: dict[int, int] = {}
    for each in files:
        for bucket, count in json.loads(each.read_text()).items():
            counts[int(bucket)] = counts.get(int(bucket), 0) + count
    return counts


def test_a_woken_long_poll_is_timed_by_the_referee(valkey, tmp_path):
    times = tmp_path / "wakes"
    env = {**LOAD_LIMITS, "REFEREE_WAKE_TIMES": str(times)}
    referee, url = start_referee(valkey, env=env)
    http = httpx.Client(base_url=url, timeout=30)
    try:
        game = create(http, "choice", 2)
        path = f"/v1/games/{game['id']}"
        tokens = [seat["token"] for seat in game["seats"]]

        def decide(seat: int, wait: str = "") -> httpx.Response:
            turn = http.get(path + "/turn", headers=auth(tokens[seat])).json()
            body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
            return http.post(path + "/moves" + wait, headers=auth(tokens[seat]), json=body)

        assert decide(0).status_code == 200  # seat 0 waits for seat 1
        # a wait that runs out, and a decision whose answer waited for no commit: not counted
        ran_out = http.get(path + "/turn?wait=0.3", headers=auth(tokens[0]))
        assert ran_out.json()["status"] == "waiting"
        polled: list[httpx.Response] = []
        answered_at: list[float] = []

        def long_poll() -> None:
            reply = httpx.get(url + path + "/turn?wait=20", headers=auth(tokens[0]), timeout=30)
            answered_at.append(time.perf_counter())
            polled.append(reply)

        waiter = threading.Thread(target=long_poll)
        waiter.start()
        time.sleep(0.5)  # waiting
        assert not polled
        sent_at = time.perf_counter()
        assert decide(1).status_code == 200
        waiter.join(30)
        assert polled and polled[0].status_code == 200
        assert wait_until(lambda: sum(_counts(times).values()) == 1, 10), _counts(times)
        counts = _counts(times)
        # the referee's own figure lies within what the client saw: from seat 1's decision
        # sent to seat 0's answer
        assert percentile(counts, 1.0) <= (answered_at[0] - sent_at) * 1000 * 1.05
        time.sleep(1.5)  # written again: still one
        assert sum(_counts(times).values()) == 1
    finally:
        http.close()
        referee.terminate()
        referee.wait(timeout=15)
