"""The contract's Node tools (linters, client generators: the locked devDependencies of
``openapi/package.json``), installed by ``npm ci`` when a test first needs them, so that the
tests that use them run rather than skip (.ci/run installs them first anyway). The suite's
workers (pytest-xdist) are processes: one ``npm ci`` at a time, under a file lock."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

OPENAPI = Path(__file__).parents[1] / "openapi"
BIN = OPENAPI / "node_modules" / ".bin"
_installing = threading.Lock()


@contextlib.contextmanager
def _one_install() -> Iterator[None]:
    """This checkout's ``npm ci`` in openapi/, by one thread of one process at a time: two
    workers of the suite installing at once would empty each other's node_modules."""
    name = hashlib.sha256(str(OPENAPI.resolve()).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"openapi-npm-ci-{name}.lock"
    with _installing, path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def openapi_tool(name: str) -> Path:
    """The path of ``name`` in ``openapi/node_modules/.bin``, after ``npm ci`` if it is not
    there yet; the test is skipped only where Node.js or npm is missing."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("Node.js and npm are not installed here")
    with _one_install():
        if not (BIN / name).exists():
            if (OPENAPI / "node_modules").is_symlink():
                # npm ci would empty the checkout it links to
                pytest.skip(f"openapi/node_modules is a link without {name}: run npm ci there")
            result = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=OPENAPI,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (BIN / name).exists(), f"npm ci in openapi/ installed no {name}"
    return BIN / name
