"""The committed contract is the one the app generates now: every body, answer and view as
its Structs state it (the rulesets' views among them, so a bound, a field or a field's type
changed in a ruleset's ``views.py`` shows here). No server: the app's contract is built in
process."""

from __future__ import annotations

from pathlib import Path

from referee.web import openapi_document

CONTRACT = Path(__file__).parents[1] / "openapi" / "openapi.json"


def test_committed_contract_matches_the_app():
    assert CONTRACT.read_text() == openapi_document(), (
        "openapi/openapi.json drifted from the app: run `referee openapi -o openapi/openapi.json`"
    )
