"""A referee process with the Liar's dice distribution installed (as in
tests/test_liars_dice_plugin.py: its folder and a ``.dist-info`` from its pyproject.toml on the
path) finds it by its entry point as it starts, lists it over HTTP with its distribution and
version, and plays a game of it over HTTP to a record that ``referee verify`` accepts."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import httpx
from test_liars_dice_plugin import EXAMPLE, _dist_info

from referee.tools.launch import LOAD_LIMITS, start_referee


def test_an_installed_plugin_is_listed_with_its_distribution_and_version(valkey, tmp_path):
    name, release = _dist_info(tmp_path)
    path = os.pathsep.join([str(tmp_path), str(EXAMPLE), *sys.path])
    # the bench's limits, as the suite's other servers on this Valkey: the limits per address
    # are counted across processes, and the tests before this one spent the second's budget
    process, url = start_referee(valkey, env={**LOAD_LIMITS, "PYTHONPATH": path})
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            rulesets = http.get("/v1/rulesets")
            assert rulesets.status_code == 200, rulesets.text
            listed = {r["id"]: r for r in rulesets.json()}
            game = http.post(
                "/v1/games",
                json={"ruleset": "liars-dice", "seats": [{"name": "a"}, {"name": "b"}]},
            )
            assert game.status_code == 201, game.text
            final = _play(http, game.json(), random.Random(3))
            record = http.get(f"/v1/games/{final['id']}/record").content
    finally:
        process.terminate()
        process.wait(timeout=10)
    liars = listed["liars-dice"]
    assert (liars["distribution"], liars["version"]) == (name, release)
    assert liars["title"] == "Liar's dice"
    assert (liars["min_seats"], liars["max_seats"]) == (2, 8)
    assert sorted(liars["move_types"]) == ["bid", "liar"]
    options = {o["name"]: o["default"] for o in liars["options"]}
    assert options == {"dice_per_seat": 5, "bidding_rule": "reset-face"}
    assert listed["chopta"]["distribution"] == "referee"
    assert final["status"] == "finished" and sorted(final["ranking"]) in ([1, 2], [1, 1])
    saved = tmp_path / "record.json"
    saved.write_bytes(record)
    verified = subprocess.run(
        [sys.executable, "-m", "referee.cli", "verify", str(saved)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=60,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _play(http: httpx.Client, game: dict, rnd: random.Random) -> dict:
    """Each seat, as a bot over HTTP does: its turn, a random legal move, until the end."""
    for _ in range(500):
        public = http.get(f"/v1/games/{game['id']}").json()
        if public["status"] == "finished":
            return public
        for seat in public["to_decide"]:
            auth = {"Authorization": f"Bearer {game['seats'][seat]['token']}"}
            turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth).json()
            body = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
            reply = http.post(f"/v1/games/{game['id']}/moves", headers=auth, json=body)
            assert reply.status_code == 200, reply.text
    raise AssertionError("the game did not end")
