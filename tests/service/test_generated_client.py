"""The contract is complete: a client generated from it by openapi-python-client (during this
test, never committed) plays a whole CHOICE game."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONTRACT = Path(__file__).parents[2] / "openapi" / "openapi.json"
GENERATOR = shutil.which("openapi-python-client")


@pytest.mark.skipif(GENERATOR is None, reason="openapi-python-client is not installed")
def test_generated_client_plays_a_full_choice_game(server, tmp_path):
    result = subprocess.run(
        [
            GENERATOR,
            "generate",
            "--path",
            str(CONTRACT),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / "generated_referee"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Warning" not in output and "warning" not in output, output
    sys.path.insert(0, str(tmp_path))
    try:
        generated = importlib.import_module("generated_referee")
        from generated_referee.api.games import create_game, get_game, get_turn, submit_move
        from generated_referee.models import CreateChoiceGame, OneMove, SeatSpec

        client = generated.Client(base_url=server.url)
        game = create_game.sync(
            client=client,
            body=CreateChoiceGame(
                ruleset="choice", seats=[SeatSpec(name="a"), SeatSpec(name="b")], deadline_s=0
            ),
        )
        seats = [
            generated.AuthenticatedClient(base_url=server.url, token=s.token) for s in game.seats
        ]
        for _ in range(200):
            view = get_game.sync(game.id, client=client).to_dict()
            if view["status"] == "finished":
                break
            for seat in view["to_decide"]:
                turn = get_turn.sync(game.id, client=seats[seat])
                assert turn.status == "your_turn"
                accepted = submit_move.sync(
                    game.id,
                    client=seats[seat],
                    body=OneMove(seq=turn.seq, move=turn.legal_moves[0]),
                )
                assert accepted.accepted, accepted
        assert view["status"] == "finished" and view["ranking"]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("generated_referee")]:
            del sys.modules[name]
