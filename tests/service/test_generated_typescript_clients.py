"""TypeScript clients generated from the committed contract (during this test, never
committed), openapi-typescript's types with openapi-fetch and @hey-api/openapi-ts's SDK,
type-check under `strict` with the bots of ``openapi/bots/`` and play a whole game of every
ruleset, reading the views through typed fields (narrowed by ``ruleset`` and a move's
``type``). The generators are the locked devDependencies of ``openapi/package.json``."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from openapi_tools import BIN, OPENAPI, openapi_tool

#: on the worker (pytest-xdist) of test_generated_java_client.py: each empties what the other
#: generates into openapi/generated/
pytestmark = pytest.mark.xdist_group("openapi-generated")


def _run(*command: str) -> str:
    result = subprocess.run(
        command, cwd=OPENAPI, capture_output=True, text=True, timeout=300, check=False
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    return result.stdout


@pytest.fixture(scope="module")
def generated():
    """Both clients, generated from openapi.json into openapi/generated/, type-checked (the
    generators installed first by ``npm ci`` if they are not yet)."""
    openapi_tool("openapi-ts")
    shutil.rmtree(OPENAPI / "generated", ignore_errors=True)
    _run("npm", "run", "-s", "generate")
    _run(str(BIN / "tsc"), "-p", "tsconfig.json")


@pytest.mark.parametrize("bot", ["openapi_fetch_bot", "hey_api_bot"])
@pytest.mark.parametrize("ruleset", ["choice", "choice-specials", "chopta"])
def test_a_generated_typescript_client_plays_every_ruleset(generated, server, bot, ruleset):
    answer = json.loads(_run(str(BIN / "tsx"), f"bots/{bot}.ts", server.url, ruleset))
    assert answer["ruleset"] == ruleset and answer["decisions"] > 0
    assert sorted(answer["ranking"])[0] == 1
