"""Local programs as bots (``Program``, ``run_program``, ``referee bot --exec``, ``referee
tournament --exec``), and the example stdin bots of ``examples/bots/``: each plays a game of
every registered ruleset to its end against a house bot over a real referee."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "clients" / "python"))

from referee_client import Program, ProgramFailed, run_program

from referee.cli import main
from referee.games import RULESETS, verify

EXAMPLES = Path(__file__).parents[2] / "examples" / "bots"


def _game(url: str, ruleset: str, deadline_s: float = 10) -> tuple[str, str]:
    """A game of ``ruleset``: one seat for the program, the rest (at least one) house bots."""
    seats = max(2, RULESETS[ruleset].min_seats)
    body = {
        "ruleset": ruleset,
        "seats": [{"name": "program"}] + [{"bot": "random"}] * (seats - 1),
        "deadline_s": deadline_s,
    }
    created = httpx.post(url + "/v1/games", json=body, timeout=30)
    assert created.status_code == 201, created.text
    game = created.json()
    return game["id"], game["seats"][0]["token"]


def _finished(url: str, game_id: str) -> dict:
    record = httpx.get(f"{url}/v1/games/{game_id}/record", timeout=30).json()
    assert record["finished"] and verify(record).ok
    return record


@pytest.fixture(scope="module")
def go_bot(tmp_path_factory) -> str:
    """The Go example, built once (skipped, saying why, without Debian's golang-go)."""
    if shutil.which("go") is None:
        pytest.skip("needs Go (Debian's golang-go) to build examples/bots/go")
    out = tmp_path_factory.mktemp("go") / "bot"
    subprocess.run(
        ["go", "build", "-o", str(out), "."], cwd=EXAMPLES / "go", check=True, timeout=240
    )
    return str(out)


def _command(language: str, request: pytest.FixtureRequest) -> list[str]:
    if language == "python":
        return [sys.executable, str(EXAMPLES / "python" / "bot.py")]
    if language == "node":
        if shutil.which("node") is None:
            pytest.skip("needs Node")
        return ["node", str(EXAMPLES / "node" / "bot.js")]
    if language == "shell":
        if shutil.which("jq") is None:
            pytest.skip("needs jq")
        return ["sh", str(EXAMPLES / "shell" / "bot.sh")]
    return [request.getfixturevalue("go_bot")]


@pytest.mark.parametrize("ruleset", list(RULESETS))
@pytest.mark.parametrize("language", ["python", "node", "shell", "go"])
def test_an_example_plays_a_game_of_every_ruleset(server, language, ruleset, request, tmp_path):
    game_id, token = _game(server.url, ruleset)
    log = tmp_path / "bot.log"
    program = run_program(server.url, token, _command(language, request), log_path=log)
    record = _finished(server.url, game_id)
    mine = [d for d in record["decisions"] if d.get("seat") == 0]
    assert program.defaults == 0 and program.restarts == 0, program.report()
    assert len(program.times) >= len(mine) > 0
    if language != "shell":  # jq writes nothing to stderr
        assert "legal moves" in log.read_text()


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "bot.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def test_a_longer_first_turn_is_allowed_and_a_late_one_restarts(server, tmp_path):
    """The first turn may take ``first_move_s`` (the program loads); a later one that takes
    longer than ``move_s`` gets the default move, and the program is started again (which
    again gets its first-turn allowance)."""
    once = tmp_path / "late-once"
    slow_start = _script(
        tmp_path,
        f"""
        import json, os, sys, time
        time.sleep(0.8)  # loading
        for n, line in enumerate(sys.stdin):
            turn = json.loads(line)
            if n == 2 and not os.path.exists({str(once)!r}):
                open({str(once)!r}, "w").close()
                time.sleep(1.5)  # late once: killed, started again (and loading again)
            print(json.dumps(turn["legal_moves"][-1]), flush=True)
        """,
    )
    game_id, token = _game(server.url, "choice")
    program = run_program(
        server.url, token, slow_start, first_move_s=5, move_s=0.5, log_path=tmp_path / "log"
    )
    _finished(server.url, game_id)
    assert program.restarts == 1 and program.defaults == 1, program.report()
    assert max(program.times) > 0.7  # the first turns, loading, were answered


def test_the_watchdog_restarts_a_dying_program_up_to_its_limit(server, tmp_path):
    dies = _script(
        tmp_path,
        """
        import json, sys
        line = sys.stdin.readline()
        print(json.dumps(json.loads(line)["legal_moves"][0]), flush=True)
        sys.exit(3)  # one move per life
        """,
    )
    game_id, token = _game(server.url, "choice")
    program = run_program(server.url, token, dies, max_restarts=1000)
    _finished(server.url, game_id)
    # each life answers once; a turn that finds a life exiting goes to the next one
    assert program.defaults == 0 and program.restarts == len(program.times) - 1 >= 2

    game_id, token = _game(server.url, "choice")
    with pytest.raises(ProgramFailed, match="after 2 restarts"):
        run_program(server.url, token, dies, max_restarts=2)


def test_a_line_that_is_not_json_gets_the_default_move(server, tmp_path):
    garbled = _script(
        tmp_path,
        """
        import sys
        for line in sys.stdin:
            print("my move!", flush=True)
        """,
    )
    with Program(garbled) as program:
        from referee_client import run_bot

        game_id, token = _game(server.url, "choice")
        run_bot(server.url, token, program.choose)
    _finished(server.url, game_id)
    assert program.restarts == 0 and program.defaults == len(program.times) > 0


def test_referee_bot_exec_plays_a_seat(server, tmp_path, capsys):
    game_id, token = _game(server.url, "choice")
    log = tmp_path / "bot.log"
    code = main(
        [
            "bot",
            "--url",
            server.url,
            "--seat-token",
            token,
            "--exec",
            f"{sys.executable} {EXAMPLES / 'python' / 'bot.py'}",
            "--log",
            str(log),
        ]
    )
    assert code == 0
    _finished(server.url, game_id)
    assert "ms mean" in capsys.readouterr().err and "legal moves" in log.read_text()


def test_referee_tournament_seats_programs_beside_house_bots(server, tmp_path, capsys):
    command = f"{sys.executable} {EXAMPLES / 'python' / 'bot.py'}"
    args = ["tournament", "--url", server.url, "--ruleset", "choice", "--bots", "random"]
    args += ["--exec", f"mine={command}", "--games-per-pairing", "2", "--log-dir", str(tmp_path)]
    assert main([*args, "--json"]) == 0
    standings = json.loads(capsys.readouterr().out.splitlines()[-1])["standings"]
    assert sorted(s["name"] for s in standings) == ["0-random", "1-mine"]
    assert all(s["games"] == 2 for s in standings)
    assert "legal moves" in (tmp_path / "mine.log").read_text()
    assert main(args) == 0
    assert "win rate" in capsys.readouterr().out


def test_referee_tournament_games_n_plays_n_games_and_prints_win_rates(server, tmp_path, capsys):
    """``--games N``: N games in all (each table plays N / tables, rounded up), a program
    beside two house bots, and the win-rate table; more than a tournament may hold, or a
    swiss run, is refused before anything is created."""
    command = f"{sys.executable} {EXAMPLES / 'python' / 'bot.py'}"
    args = ["tournament", "--url", server.url, "--ruleset", "choice", "--bots", "random", "greedy"]
    args += ["--exec", f"mine={command}", "--log-dir", str(tmp_path), "--deadline", "20"]
    assert main([*args, "--games", "5", "--json"]) == 0  # 3 tables: 2 games each
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result["games"] == result["scheduled"] == 6
    assert sorted(s["games"] for s in result["standings"]) == [4, 4, 4]
    # a first place is a win, shared or not (core.pairing.rate): each 2-seat game gives one
    # win, or two on a tie
    assert 6 <= sum(s["wins"] for s in result["standings"]) <= 12

    assert main([*args, "--games", "61"]) == 2
    assert "at most 20 per table (60 games here)" in capsys.readouterr().err
    assert main([*args, "--games", "4", "--format", "swiss"]) == 2
    assert "swiss plays --rounds" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # one or the other
        main([*args, "--games", "4", "--games-per-pairing", "2"])
