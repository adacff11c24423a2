"""The contract is complete: a client generated from it by openapi-python-client (during this
test, never committed) plays a whole game of every ruleset, reading the views through typed
fields only: the generated classes' attributes, never a dict."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONTRACT = Path(__file__).parents[2] / "openapi" / "openapi.json"
GENERATOR = shutil.which("openapi-python-client")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated package, imported from a temporary folder."""
    folder = tmp_path_factory.mktemp("generated")
    result = subprocess.run(
        [
            GENERATOR,
            "generate",
            "--path",
            str(CONTRACT),
            "--meta",
            "none",
            "--output-path",
            str(folder / "generated_referee"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Warning" not in output and "warning" not in output, output
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("generated_referee")
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n.startswith("generated_referee")]:
            del sys.modules[name]


def _choose(models, turn):
    """A move read from the typed view: CHOICE's highest fifth die already on the sheet, a
    CHOPTA die from the seat's own pool; else the first legal move."""
    view = turn.view
    if isinstance(view, models.ChoptaSeatView):
        pool = view.you.pool
        placed = [m for m in turn.legal_moves if isinstance(m, models.Place) and m.die in pool]
        assert all(isinstance(m, (models.Place, models.Swap)) for m in turn.legal_moves)
        return max(placed, key=lambda m: m.die) if placed else turn.legal_moves[0]
    assert isinstance(view, (models.ChoiceSeatView, models.ChoiceSpecialsSeatView))
    chosen = {fifth.value for fifth in view.you.sheet.fifth_dice}
    assert view.you.sheet.score.total <= view.you.sheet.score.plus
    marks = [m for m in turn.legal_moves if isinstance(m, models.Mark) and m.fifth in chosen]
    return max(marks, key=lambda m: m.fifth) if marks else turn.legal_moves[0]


@pytest.mark.skipif(GENERATOR is None, reason="openapi-python-client is not installed")
@pytest.mark.parametrize("ruleset", ["choice", "choice-specials", "chopta"])
def test_a_generated_client_plays_every_ruleset_through_typed_fields(generated, server, ruleset):
    from generated_referee import models
    from generated_referee.api.games import create_game, get_game, get_record, get_turn, submit_move

    create = {
        "choice": models.CreateChoiceGame,
        "choice-specials": models.CreateChoiceSpecialsGame,
        "chopta": models.CreateChoptaGame,
    }[ruleset]
    public_view, record_type = {
        "choice": (models.ChoiceGameView, models.ChoiceRecord),
        "choice-specials": (models.ChoiceSpecialsGameView, models.ChoiceSpecialsRecord),
        "chopta": (models.ChoptaGameView, models.ChoptaRecord),
    }[ruleset]
    client = generated.Client(base_url=server.url)
    game = create_game.sync(
        client=client,
        body=create(
            ruleset=ruleset,
            seats=[models.SeatSpec(name="a"), models.SeatSpec(name="b")],
            deadline_s=0,
        ),
    )
    assert isinstance(game, models.GameCreated), game
    seats = [generated.AuthenticatedClient(base_url=server.url, token=s.token) for s in game.seats]
    decisions = 0
    for _ in range(2000):
        view = get_game.sync(game.id, client=client)
        assert isinstance(view, public_view), view
        if view.status == "finished":
            break
        for seat in view.to_decide:
            turn = get_turn.sync(game.id, client=seats[seat])
            while isinstance(turn, models.Turn) and turn.status == "your_turn":
                assert turn.view.ruleset == ruleset
                move = _choose(models, turn)
                accepted = submit_move.sync(
                    game.id,
                    client=seats[seat],
                    body=models.OneMove(seq=turn.seq, move=move),
                    wait=0,
                )
                assert isinstance(accepted, models.MoveAccepted) and accepted.accepted, accepted
                decisions += 1
                turn = accepted.turn  # the next turn came with the answer
    assert view.status == "finished" and len(view.ranking) == 2 and view.seed
    record = get_record.sync(game.id, client=client)
    assert isinstance(record, record_type), record
    assert record.finished and record.seed == view.seed
    assert len(record.decisions) == decisions and record.dice and len(record.final) == 2


@pytest.mark.skipif(GENERATOR is None, reason="openapi-python-client is not installed")
def test_the_organizer_key_is_optional_in_the_generated_client(generated, server):
    """Where the referee has no organizer keys anyone creates: the contract's security for
    the creations is optional (``[{}, {organizer: []}]``), so the generated functions take a
    plain ``Client`` as well as an ``AuthenticatedClient`` (whose empty token would send a
    bare ``Bearer`` that HTTP libraries refuse to send)."""
    import inspect
    import typing

    from generated_referee import models
    from generated_referee.api.games import create_game
    from generated_referee.api.tournaments import create_tournament

    for module in (create_game, create_tournament):
        annotation = inspect.signature(module.sync).parameters["client"].annotation
        assert generated.Client in typing.get_args(annotation), (module.__name__, annotation)
    client = generated.Client(base_url=server.url)
    tournament = create_tournament.sync(
        client=client, body=models.CreateChoiceTournament(ruleset="choice", entrants=2)
    )
    assert isinstance(tournament, models.TournamentCreated), tournament
