"""The files in deploy/ agree with the code: nginx routes each game to one replica, and the
image starts the referee with flags its command line takes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from referee.cli import build_parser
from referee.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SOME_GAME = "0123456789abcdef"


def _game_key_pattern() -> re.Pattern[str]:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    pattern = re.search(r'"~(\^/v1/[^"]+)"\s+\$game;', conf).group(1)
    return re.compile(pattern.replace("(?<", "(?P<"))  # nginx (PCRE) names groups as (?<name>)


def test_nginx_hashes_every_game_route_on_its_game_id():
    pattern = _game_key_pattern()
    paths = json.loads((ROOT / "openapi" / "openapi.json").read_text())["paths"]
    game_paths = [path for path in paths if "{game_id}" in path]
    assert len(game_paths) >= 5
    for path in game_paths:
        match = pattern.search(path.replace("{game_id}", SOME_GAME))
        assert match is not None and match.group("game") == SOME_GAME, path
    for path in paths:
        if "{game_id}" not in path:
            assert pattern.search(path.replace("{tournament_id}", SOME_GAME)) is None, path


def test_nginx_lets_an_idle_connection_go_before_the_referee_closes_it():
    """nginx keeps its connections to a replica idle for less than the replica's keep-alive:
    else it may send a request on a connection as the replica closes it, and answer a POST
    that was never read with a 502 (it sends no POST again)."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    upstream = re.search(r"upstream referee \{(.*?)\}", conf, re.DOTALL).group(1)
    seconds = float(re.search(r"keepalive_timeout\s+(\d+)s;", upstream).group(1))
    assert seconds < Settings().keep_alive_s


def test_the_image_starts_the_referee_with_flags_it_takes():
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    command = json.loads(re.search(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE).group(1))
    assert command[0] == "referee"
    args = build_parser().parse_args(command[1:])
    assert args.command == "serve" and args.host == "0.0.0.0" and args.workers >= 1


MANIFESTS = sorted((ROOT / "deploy" / "kubernetes").rglob("*.yaml"))
#: the oldest Kubernetes the manifests are written for (autoscaling/v2, policy/v1)
KUBERNETES = "1.30.0"


def _manifests() -> dict[str, dict]:
    import yaml

    found = {}
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            found[doc["kind"]] = doc
    return found


def test_every_kubernetes_manifest_is_valid_against_the_schema_of_its_kind():
    import kubernetes_validate

    assert MANIFESTS
    for doc in _manifests().values():
        # strict: a field the schema does not know (a typo) is refused too
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)


def test_the_kubernetes_manifests_agree_with_each_other_and_with_the_referee():
    docs = _manifests()
    assert {
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "Secret",
    } <= (docs.keys())
    deployment = docs["Deployment"]
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == labels
    assert docs["Service"]["spec"]["selector"] == labels
    assert docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == labels
    target = docs["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    (container,) = pod["spec"]["containers"]
    args = build_parser().parse_args(container["command"][1:])
    assert args.command == "serve" and args.workers == 1
    assert container["ports"][0]["containerPort"] == args.port
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    (source,) = container["envFrom"]
    secret = docs["Secret"]
    assert source["secretRef"]["name"] == secret["metadata"]["name"]
    assert "REDIS_URL" in secret["stringData"]
    # a pod is given longer to stop than the longest long-poll (60 s) holds a request
    assert pod["spec"]["terminationGracePeriodSeconds"] > 60


def test_the_compose_file_is_one_docker_compose_accepts():
    import shutil
    import subprocess

    import pytest

    if shutil.which("docker") is None:
        pytest.skip("no docker on this machine: `docker compose config` cannot run")
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip("docker here has no compose plugin: `docker compose config` cannot run")
    result = subprocess.run(
        ["docker", "compose", "-f", str(ROOT / "deploy" / "compose.yaml"), "config", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
