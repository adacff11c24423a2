"""The files in deploy/ agree with the code: nginx routes each game to one replica, and the
image starts the referee with flags its command line takes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from referee.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
SOME_GAME = "0123456789abcdef"


def _game_key_pattern() -> re.Pattern[str]:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    pattern = re.search(r'"~(\^/v1/games/[^"]+)"\s+\$game;', conf).group(1)
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


def test_the_image_starts_the_referee_with_flags_it_takes():
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    command = json.loads(re.search(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE).group(1))
    assert command[0] == "referee"
    args = build_parser().parse_args(command[1:])
    assert args.command == "serve" and args.host == "0.0.0.0" and args.workers >= 1
