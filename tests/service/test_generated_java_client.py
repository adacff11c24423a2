"""A Java client generated from the committed contract by openapi-generator-plus with its
JAX-RS client generator (the locked devDependencies of ``openapi/package.json``; settings in
``openapi/java-client.yaml``; nothing generated is committed).

Only its generation is tested here: the generated project compiles against JAX-RS, Jakarta
XML Binding, Bean Validation, Jackson's JAX-RS provider and Swagger's annotations, and runs
on a JAX-RS client implementation (Jersey, RESTEasy or CXF), all from Maven Central, which
this project's machines do not reach, and which no npm or PyPI package ships."""

from __future__ import annotations

import json
import re
import subprocess

from openapi_tools import OPENAPI, openapi_tool

#: JSON Schema keywords that mainstream client generators fail on (openapi-generator-plus:
#: "Missing schema type in schema"); the contract says such rules in words instead
_UNREAD = ("contains", "minContains", "maxContains")


def _keywords(node: object, path: str = "") -> list[str]:
    """Where the contract uses a keyword of ``_UNREAD`` as a schema keyword."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _UNREAD and not path.endswith("/properties"):
                found.append(f"{path}/{key}")
            found += _keywords(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _keywords(value, f"{path}/{index}")
    return found


def test_the_contract_uses_no_keyword_generators_fail_on():
    contract = json.loads((OPENAPI / "openapi.json").read_text())
    assert not _keywords(contract), _keywords(contract)
    seats = contract["components"]["schemas"]["CreateChoiceGame"]["properties"]["seats"]
    assert "house-bot-limit" in seats["description"] and "At most 3" in seats["description"]


def test_openapi_generator_plus_generates_the_java_client():
    openapi_tool("openapi-generator-plus")
    out = OPENAPI / "generated" / "java"
    result = subprocess.run(
        ["npm", "run", "-s", "generate-java"],
        cwd=OPENAPI,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Failed" not in result.stdout + result.stderr, result.stdout + result.stderr
    package = out / "org" / "referee" / "client"
    games = (package / "GamesApi.java").read_text()
    for operation in ("createGame", "claimSeat", "getTurn", "submitMove", "getRecord"):
        assert re.search(rf"\b{operation}\(", games), operation
    turn = (package / "model" / "Turn.java").read_text()
    assert "getRuleset()" in turn and "getLegalMoves()" in turn
