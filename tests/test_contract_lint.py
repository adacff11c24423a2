"""The committed contract lints clean: Redocly CLI (its recommended rules) and Spectral
(``spectral:oas``) report no error, with the rule sets committed beside it
(``openapi/redocly.yaml``, ``openapi/.spectral.yaml``; each rule turned off says why). The
linters are the locked devDependencies of ``openapi/package.json`` (``npm ci`` there;
``.ci/run`` does it, and so does the first test that needs them)."""

from __future__ import annotations

import subprocess

from openapi_tools import OPENAPI, openapi_tool


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=OPENAPI, capture_output=True, text=True, timeout=300, check=False
    )


def test_redocly_finds_no_error_and_no_warning():
    result = _run(str(openapi_tool("redocly")), "lint", "--format", "summary", "openapi.json")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Your API description is valid" in output, output
    assert "You have" not in output, output  # "You have N warnings."


def test_spectral_finds_no_error():
    result = _run(str(openapi_tool("spectral")), "lint", "--fail-severity=error", "openapi.json")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "No results with a severity of 'error'" in output, output
