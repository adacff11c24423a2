"""What the server refuses in a body, the committed contract states: each case below is
checked against ``openapi/openapi.json`` itself, so Schemathesis' positive phase (which
trusts it) sends none of them. No server is needed."""

from __future__ import annotations

import re

import pytest
from contract_schema import body_validator
from hypothesis import example, given
from hypothesis import strategies as st

from referee.core.documents import NAME_PATTERN, check_name
from referee.core.refusals import Refusal


def _valid(path: str, body: object) -> bool:
    return body_validator(path).is_valid(body)


MOVE = {"type": "mark", "fifth": 1, "pairs": [[2, 3], [4, 5]]}


@pytest.mark.parametrize(
    ("path", "body", "valid"),
    [
        ("/v1/games/{game_id}/moves", {"seq": 0, "move": MOVE}, True),
        ("/v1/games/{game_id}/moves", {"seq": 0, "moves": [MOVE]}, True),
        ("/v1/games/{game_id}/moves", {"seq": 0, "move": None, "moves": None}, False),
        ("/v1/games/{game_id}/moves", {"seq": 0, "move": MOVE, "moves": [MOVE]}, False),
        ("/v1/games/{game_id}/moves", {"seq": 0}, False),
        ("/v1/rulesets/choice/score", {"marks": {"7": 3}}, True),
        ("/v1/rulesets/choice/score", {}, False),
        ("/v1/rulesets/choice/score", {"area": [1, 2]}, False),
        ("/v1/rulesets/chopta/score", {"area": [1, 2]}, True),
        ("/v1/rulesets/chopta/score", {"marks": {}}, False),
        ("/v1/games", {"ruleset": "choice", "seats": [{"name": "a"}]}, True),
        ("/v1/games", {"ruleset": "", "seats": [{"name": "a"}]}, False),
        ("/v1/games", {"ruleset": "choice", "seats": [{}], "options": {"colour": 1}}, False),
        ("/v1/games", {"ruleset": "choice", "seats": [{}], "options": {"target": 9}}, False),
        ("/v1/games", {"ruleset": "chopta", "seats": [{}, {}], "options": {"target": 9}}, True),
        ("/v1/games", {"ruleset": "chopta", "seats": [{}]}, False),
        ("/v1/games", {"ruleset": "chopta", "seats": [{}] * 9}, False),
        ("/v1/games", {"ruleset": "choice", "seats": [{"name": " "}]}, False),
        ("/v1/games", {"ruleset": "choice", "seats": [{"name": "a\u202eb"}]}, False),
        ("/v1/games", {"ruleset": "chopta", "seats": [{}, {"bot": "strong"}]}, True),
        # house bots' limits are said in words, not in the schema: client generators fail
        # on contains/maxContains (the server refuses them: 422 house-bot-limit, tested in
        # tests/service/test_house_bots.py)
        ("/v1/games", {"ruleset": "chopta", "seats": [{"bot": "strong"}] * 2}, True),
        ("/v1/games", {"ruleset": "choice", "seats": [{}] + [{"bot": "random"}] * 4}, True),
        ("/v1/games", {"ruleset": "choice", "seats": [{}, {"bot": "wizard"}]}, False),
        ("/v1/tournaments", {"ruleset": "chopta", "options": {"schedule": [1]}}, False),
        ("/v1/tournaments", {"ruleset": "choice", "options": {"schedule": [1]}}, True),
        ("/v1/tournaments/{tournament_id}/entrants", {"name": "x\ny"}, False),
    ],
)
def test_the_contract_refuses_what_the_server_refuses(path, body, valid):
    assert _valid(path, body) is valid


def _refused(name: str) -> bool:
    try:
        check_name(name, "name")
    except Refusal:
        return True
    return False


@example("0\n")
@given(
    st.text(max_size=8)
    | st.text(alphabet=" \t\x85\u2028\u202ea\xa0\u3000\u200b\u2800\u3164\ufeff", max_size=4)
)
def test_what_the_names_pattern_refuses_check_name_refuses(name):
    """What the contract's pattern refuses, the server's check refuses too; the check also
    applies RFC 8266's Nickname profile, which no pattern states whole (unassigned code
    points, a joiner out of its context, ...). The pattern is read as JSON Schema reads it
    (ECMA-262), where ``$`` is the end of the string: Python's ``$`` also matches before a
    final newline, so its end is spelt ``\\Z`` here ("0\\n" is refused by both)."""
    ecma = NAME_PATTERN.removesuffix("$") + r"\Z"
    if re.search(ecma, name) is None:
        assert _refused(name)
