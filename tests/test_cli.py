"""The command line a newcomer meets: `referee` alone prints its help, every flag of every
command says what it is (and its default where it has one), a missing record is one line."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from referee.cli import build_parser, main


def test_referee_alone_prints_its_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: referee") and "serve" in out and "bot" in out


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (group,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(group.choices)


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_flag_of_every_command_has_help(name):
    command = _commands()[name]
    assert command.description
    for action in command._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"referee {name} {action.option_strings or action.dest}"
    shown = command.format_help()
    for action in command._actions:
        if action.default not in (None, False, argparse.SUPPRESS) and not action.required:
            assert f"(default: {action.default})" in shown, (name, action.dest)


def test_verify_of_a_missing_file_is_one_line():
    result = subprocess.run(
        [sys.executable, "-m", "referee.cli", "verify", "missing.json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == "cannot read missing.json: No such file or directory"
    assert result.stdout == ""


def test_ratings_rebuild_runs_on_the_server_at_redis_url(tmp_path, monkeypatch, capsys):
    """``referee ratings --rebuild`` (``referee.tools.ratings``) on a Valkey of its own, with
    no settled game: every rating rebuilt from none."""
    from referee.store.embedded import start_embedded

    server = start_embedded(tmp_path / "valkey", keep_alive=False)
    try:
        monkeypatch.setenv("REDIS_URL", server.url)
        assert main(["ratings", "--rebuild"]) == 0
    finally:
        server.stop()
    assert "rebuilt the ratings from 0 rated games" in capsys.readouterr().err
