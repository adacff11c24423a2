"""The TypeScript client plays full games against a real referee (its own node test)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

CLIENT = Path(__file__).parents[2] / "clients" / "typescript"
NODE = shutil.which("node")
NPM = shutil.which("npm")
#: one worker of the suite (pytest-xdist) runs them all: the Liar's dice test writes other types
#: into the client's src/schema.d.ts while it runs, which the other tests would build against
pytestmark = pytest.mark.xdist_group("clients-typescript")


def _npm(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [NPM, *args],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def _installed() -> None:
    """The client's dependencies (``npm ci`` only where there are none: node_modules may be
    a link to another checkout's, which ``npm ci`` would empty), and its types generated
    from the committed contract, whatever was generated before."""
    if not (CLIENT / "node_modules").is_dir():
        installed = _npm("ci", "--no-audit", "--no-fund")
        assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    generated = _npm("run", "prepare")
    assert generated.returncode == 0, generated.stderr[-3000:]


@pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are not installed here")
def test_typescript_client_plays_full_games(server):
    _installed()
    typecheck = _npm("run", "typecheck")
    assert typecheck.returncode == 0, typecheck.stdout[-3000:] + typecheck.stderr[-3000:]
    result = _npm("test", env={"REFEREE_URL": server.url}, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "# pass 7" in result.stdout and "# fail 0" in result.stdout


@pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are not installed here")
def test_typescript_client_waits_out_a_rate_limit(valkey):
    """The same games against a referee that allows each token 10 requests a second: the
    bots go as fast as they can, are answered 429 with Retry-After, wait, and finish."""
    from conftest import ThreadServer

    _installed()
    with ThreadServer(valkey, rate_per_token=10) as limited:
        result = _npm("test", env={"REFEREE_URL": limited.url}, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "# pass 7" in result.stdout and "# fail 0" in result.stdout


@pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are not installed here")
def test_typescript_client_plays_liars_dice_typed_by_its_referees_contract(liars_referee, tmp_path):
    """Liar's dice, installed from outside: the client's types are generated from the contract
    of a referee that has it installed (which holds its bodies and moves), the plug-in's test
    file type-checks against them, and the client's bot loops play a game and a tournament of
    it. Afterwards the types are those of the committed contract again."""
    _installed()
    contract = tmp_path / "openapi.json"
    contract.write_bytes(httpx.get(f"{liars_referee.url}/docs/openapi.json").content)
    try:
        generated = _npm(
            "exec", "--", "openapi-typescript", str(contract), "-o", "src/schema.d.ts",
            "--default-non-nullable", "false",
        )  # fmt: skip
        assert generated.returncode == 0, generated.stderr[-3000:]
        typecheck = _npm("exec", "--", "tsc", "--noEmit", "-p", "tsconfig.plugins.json")
        assert typecheck.returncode == 0, typecheck.stdout[-3000:] + typecheck.stderr[-3000:]
        result = _npm(
            "exec", "--", "tsx", "--test", "plugins/liars-dice.test.ts",
            env={"REFEREE_URL": liars_referee.url}, timeout=300,
        )  # fmt: skip
    finally:
        restored = _npm("run", "prepare")
        assert restored.returncode == 0, restored.stderr[-3000:]
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "# pass 2" in result.stdout and "# fail 0" in result.stdout
