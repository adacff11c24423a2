"""A referee process with the Liar's dice distribution installed (as in
tests/test_liars_dice_plugin.py: its folder and a ``.dist-info`` from its pyproject.toml on the
path) finds it by its entry point as it starts, and lists it over HTTP with its distribution
and version. Playing it over HTTP waits for issue 35's contract change; until then a game of it
is refused with a problem, never a 500."""

from __future__ import annotations

import os
import sys

import httpx
from test_liars_dice_plugin import EXAMPLE, _dist_info

from referee.tools.launch import start_referee


def test_an_installed_plugin_is_listed_with_its_distribution_and_version(valkey, tmp_path):
    name, release = _dist_info(tmp_path)
    path = os.pathsep.join([str(tmp_path), str(EXAMPLE), *sys.path])
    process, url = start_referee(valkey, env={"PYTHONPATH": path})
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            listed = {r["id"]: r for r in http.get("/v1/rulesets").json()}
            game = http.post(
                "/v1/games",
                json={"ruleset": "liars-dice", "seats": [{"name": "a"}, {"name": "b"}]},
            )
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
    assert game.status_code != 500, game.text
    assert game.status_code == 201 or game.headers["content-type"].startswith(
        "application/problem+json"
    )
