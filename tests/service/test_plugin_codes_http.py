"""A plug-in's own refusal codes over HTTP: a referee process started with a plug-in that
declares two (one at the default 422, one at 409) answers each refusal as a problem+json whose
``type`` ends in the code, at the status declared, and lists both in ``GET /v1/rulesets`` and
in its contract's ``Problem.code``. Liar's dice's own codes: test_liars_dice_served.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest
from test_plugins import _distribution

from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, start_referee

#: CHOICE, refusing its seat 0's first decision with codes of its own: its first legal move
#: is a broken rule (422), its second a move the game's state does not allow yet (409)
PLUGIN = """
from referee.games import RefusalCode, RuleViolation
from referee.rulesets.choice.engine import ChoiceRuleset


class Coded(ChoiceRuleset):
    id = "coded-choice"
    title = "CHOICE with refusals of its own"
    codes = {
        "too-eager": "seat 0 may not open with its first legal move",
        "not-yet": RefusalCode("seat 0 may not open with its second legal move yet", 409),
    }

    def decide(self, state, seat, moves):
        if seat == 0 and self.seq(state, 0) == 0 and len(moves) == 1:
            legal = self.legal_moves(state, 0)
            if moves[0] == legal[0]:
                raise RuleViolation("too-eager", "not the first legal move", field="move")
            if moves[0] == legal[1]:
                raise RuleViolation("not-yet", "not the second legal move, not yet")
        return super().decide(state, seat, moves)
"""


@pytest.fixture(scope="module")
def coded_referee(tmp_path_factory):
    """On a Valkey of its own: its games must not show in the other referees' listings."""
    root = tmp_path_factory.mktemp("coded-plugin")
    _distribution(root, "plugin_coded", "0.7", {"coded": "plugin_coded:Coded"}, PLUGIN)
    path = os.pathsep.join([str(root), str(Path(__file__).parents[2]), *sys.path])
    own = start_embedded(tmp_path_factory.mktemp("coded-valkey"))
    process, url = start_referee(own.url, env={**LOAD_LIMITS, "PYTHONPATH": path})
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        own.stop()


def test_a_plugins_refusals_have_its_codes_at_their_declared_status(coded_referee):
    with httpx.Client(base_url=coded_referee, timeout=30) as http:
        listed = {r["id"]: r for r in http.get("/v1/rulesets").json()}
        contract = http.get("/docs/openapi.json").json()
        for _ in range(50):  # a first roll with three legal moves at least (most have more)
            game = http.post(
                "/v1/games",
                json={"ruleset": "coded-choice", "seats": [{"name": "a"}, {"name": "b"}]},
            ).json()
            auth = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
            url = f"/v1/games/{game['id']}/moves"
            turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth).json()
            if len(turn["legal_moves"]) >= 3:
                break
        first, second, third = turn["legal_moves"][:3]
        replies = [
            http.post(url, headers=auth, json={"seq": 0, "move": move})
            for move in (first, second, third)
        ]
    assert [r.status_code for r in replies] == [422, 409, 200], [r.text for r in replies]
    for reply, code, status in zip(replies, ["too-eager", "not-yet"], [422, 409], strict=False):
        assert reply.headers["content-type"].startswith("application/problem+json")
        problem = reply.json()
        assert problem["code"] == code and problem["status"] == status
        assert problem["type"] == f"https://referee.invalid/problems/{code}"
    assert replies[0].json()["field"] == "move"
    assert listed["coded-choice"]["codes"] == [
        {
            "code": "too-eager",
            "status": 422,
            "meaning": "seat 0 may not open with its first legal move",
        },
        {
            "code": "not-yet",
            "status": 409,
            "meaning": "seat 0 may not open with its second legal move yet",
        },
    ]
    assert listed["choice"]["codes"] == []
    enum = contract["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
    assert {"too-eager", "not-yet", "illegal-move"} <= set(enum)
