"""A Java client generated from the committed contract by openapi-generator-plus with its
JAX-RS client generator (the locked devDependencies of ``openapi/package.json``; settings in
``openapi/java-client.yaml``; nothing generated is committed), compiled by javac against
Debian's jars alone (no Maven), plays a whole game with ``openapi/java-bot/PlayGame.java`` on
RESTEasy 3.0's JAX-RS client, and reads a record that ``verify`` accepts.

Debian 12 has all the client needs but two things, which the build makes up for: its
swagger-annotations (2.1) predate ``@Schema(requiredMode = ...)``, which is written as the
older ``required = ...``; and ``ApiProviders.java``, a convenience that registers Jackson's
Java 8 modules (not packaged before Debian 13), is left out: PlayGame sets up its own provider,
with Optional support through databind's public API. The test is skipped only without a JDK
or those jars (``.ci/run`` installs them)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from openapi_tools import OPENAPI, openapi_tool

from referee.games import verify

#: on the worker (pytest-xdist) of test_generated_typescript_clients.py: each empties what the
#: other generates into openapi/generated/
pytestmark = pytest.mark.xdist_group("openapi-generated")

#: JSON Schema keywords that mainstream client generators fail on (openapi-generator-plus:
#: "Missing schema type in schema"); the contract says such rules in words instead
_UNREAD = ("contains", "minContains", "maxContains")

_JARS = Path("/usr/share/java")
#: what the generated client and PlayGame compile against, from Debian's packages
#: (libjaxrs-api-java, libjackson2-*-java, libjaxb-api-java, libgeronimo-annotation-1.3-spec-java,
#: libgeronimo-validation-1.1-spec-java, libswagger-core-java, libresteasy3.0-java)
_COMPILE = (
    "jaxrs-api",
    "jackson-annotations",
    "jackson-core",
    "jackson-databind",
    "jackson-jaxrs-base",
    "jackson-jaxrs-json-provider",
    "jaxb-api",
    "geronimo-annotation-1.3-spec",
    "geronimo-validation-1.1-spec",
    "swagger-annotations",
    "resteasy-client",
    "resteasy-jaxrs",
)
#: what RESTEasy's client needs besides, at run time (its Debian package's dependencies)
_RUN = ("jboss-logging", "httpclient", "httpcore", "commons-logging", "commons-codec")


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


def _classpath(names: tuple[str, ...]) -> str:
    return ":".join(str(_JARS / f"{name}.jar") for name in names)


def test_the_contract_uses_no_keyword_generators_fail_on():
    contract = json.loads((OPENAPI / "openapi.json").read_text())
    assert not _keywords(contract), _keywords(contract)
    seats = contract["components"]["schemas"]["CreateChoiceGame"]["properties"]["seats"]
    assert "house-bot-limit" in seats["description"] and "At most 3" in seats["description"]


@pytest.fixture(scope="module")
def generated() -> Path:
    """The client's sources, generated from openapi.json into openapi/generated/java."""
    openapi_tool("openapi-generator-plus")
    out = OPENAPI / "generated" / "java"
    shutil.rmtree(out, ignore_errors=True)
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
    return out


def test_openapi_generator_plus_generates_the_java_client(generated):
    package = generated / "org" / "referee" / "client"
    games = (package / "GamesApi.java").read_text()
    for operation in ("createGame", "claimSeat", "getTurn", "submitMove", "getRecord"):
        assert re.search(rf"\b{operation}\(", games), operation
    turn = (package / "model" / "Turn.java").read_text()
    assert "getRuleset()" in turn and "getLegalMoves()" in turn
    # javax, as Debian's JAX-RS 2.1 and RESTEasy 3.0 have it (java-client.yaml: useJakarta)
    assert "@javax.ws.rs.Path(" in (package / "spec" / "GamesApiSpec.java").read_text()


@pytest.fixture(scope="module")
def compiled(generated, tmp_path_factory) -> Path:
    """The generated client and PlayGame, compiled against Debian's jars."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK here (Debian: default-jdk-headless)")
    missing = [name for name in _COMPILE + _RUN if not (_JARS / f"{name}.jar").exists()]
    if missing:
        pytest.skip(f"Debian's jars are missing from {_JARS}: {', '.join(missing)}")
    sources = []
    for path in sorted(generated.rglob("*.java")):
        if path.name == "ApiProviders.java":  # Jackson's Java 8 modules: not in Debian 12
            continue
        text = path.read_text()
        # swagger-annotations 2.1 (Debian 12) says required = true|false
        text = re.sub(
            r"requiredMode = io\.swagger\.v3\.oas\.annotations\.media\.Schema\.RequiredMode\."
            r"(NOT_)?REQUIRED",
            lambda match: f"required = {'false' if match[1] else 'true'}",
            text,
        )
        path.write_text(text)
        sources.append(str(path))
    classes = tmp_path_factory.mktemp("java-classes")
    bot = OPENAPI / "java-bot" / "PlayGame.java"
    javac = ["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(classes)]
    result = subprocess.run(
        [*javac, "-cp", _classpath(_COMPILE), *sources, str(bot)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    return classes


def test_the_generated_java_client_compiles_and_plays_a_game(compiled, server):
    classpath = f"{compiled}:{_classpath(_COMPILE + _RUN)}"
    result = subprocess.run(
        ["java", "-cp", classpath, "PlayGame", server.url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-5000:]
    read = json.loads(result.stdout)  # the record as the Java client read it, written back
    assert read["ruleset"] == "choice" and read["finished"] is True
    assert read["seats"][0] == "java" and len(read["decisions"]) > 0
    # nothing lost or changed by the client's models: the referee's record, field for field
    game = re.search(r"game (\w+): (\d+) decisions, finished", result.stderr)
    assert game, result.stderr
    served = httpx.get(f"{server.url}/v1/games/{game[1]}/record", timeout=30)
    assert read == served.json()
    report = verify(result.stdout.encode())
    assert report.ok, report.problems
