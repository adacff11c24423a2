"""Rulesets installed from outside (``referee.plugins``): distributions made on disk for the
test, with entry points in the group ``referee.rulesets``, found as any installed one is."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.bots import bot_names
from referee.games import ORIGINS, RULESETS, DuplicateRuleset
from referee.plugins import load_plugins

PLUGIN = """
from referee.rulesets.choice.bots import random_bot
from referee.rulesets.choice.engine import ChoiceRuleset


class TinyChoice(ChoiceRuleset):
    id = "tiny-choice"
    title = "CHOICE for a test"
    bots = {"random": random_bot}


class Lacking:
    id = "lacking"
"""


def _distribution(root, name: str, version: str, points: dict[str, str], module: str) -> None:
    """A distribution as pip leaves one: a module and its ``.dist-info`` with entry points."""
    (root / f"{name}.py").write_text(textwrap.dedent(module))
    info = root / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "".join(f"{point} = {target}\n" for point, target in points.items())
    (info / "entry_points.txt").write_text(f"[referee.rulesets]\n{lines}")


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Put distributions on the path; afterwards, the registry as it was."""
    monkeypatch.syspath_prepend(str(tmp_path))
    rulesets, origins = dict(RULESETS), dict(ORIGINS)
    yield lambda *args: _distribution(tmp_path, *args)
    for registry, saved in ((RULESETS, rulesets), (ORIGINS, origins)):
        registry.clear()
        registry.update(saved)
    for name in [m for m in sys.modules if m.startswith("plugin_")]:
        del sys.modules[name]


def test_a_plugin_is_registered_with_its_distribution_and_bots(installed):
    installed("plugin_tiny", "1.2.3", {"tiny": "plugin_tiny:TinyChoice"}, PLUGIN)
    assert load_plugins(again=True) == ["tiny-choice"]
    ruleset = RULESETS["tiny-choice"]
    assert ORIGINS["tiny-choice"] == ("plugin_tiny", "1.2.3")
    assert ORIGINS["choice"][0] == "referee"
    assert bot_names("tiny-choice") == ["random"]
    state = ruleset.create({}, 2, b"k" * 32)  # it plays as the registry hands it out
    ruleset.decide(state, 0, [ruleset.legal_moves(state, 0)[0]])
    assert ruleset.public_seq(state, 0) == 1


def test_a_plugin_that_fails_is_disabled_with_a_line_and_the_others_load(installed, caplog):
    installed(
        "plugin_broken", "0.1", {"broken": "plugin_broken:Ruleset"}, "raise ImportError('no')"
    )
    installed("plugin_lacking", "0.2", {"lacking": "plugin_lacking:Lacking"}, PLUGIN)
    installed("plugin_good", "0.3", {"tiny": "plugin_good:TinyChoice"}, PLUGIN)
    with caplog.at_level(logging.ERROR, logger="referee"):
        assert load_plugins(again=True) == ["tiny-choice"]
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("broken (plugin_broken 0.1) is disabled: it failed to load" in x for x in lines)
    assert any("lacking (plugin_lacking 0.2) is disabled: it lacks" in x for x in lines)
    assert "lacking" not in RULESETS


def test_two_rulesets_with_one_name_are_an_error(installed):
    clash = PLUGIN + '\n\nclass Clash(TinyChoice):\n    id = "choice"\n'
    installed("plugin_clash", "9.9", {"clash": "plugin_clash:Clash"}, clash)
    with pytest.raises(DuplicateRuleset, match=r"'choice'.*referee.*plugin_clash 9\.9"):
        load_plugins(again=True)


def test_loading_twice_changes_nothing(installed):
    installed("plugin_twice", "1.0", {"tiny": "plugin_twice:TinyChoice"}, PLUGIN)
    assert load_plugins(again=True) == ["tiny-choice"]
    assert load_plugins() == []
    assert load_plugins(again=True) == ["tiny-choice"]  # the same distribution: replaced


def test_a_plugin_is_in_the_contract_its_bodies_built_from_the_registry(tmp_path):
    """A referee started with a plug-in installed states its game and tournament bodies, its
    moves and its score route in the contract, as the built-in rulesets'; the views it took
    from CHOICE by subclassing (tagged ``choice``) are not stated as its own."""
    _distribution(tmp_path, "plugin_tiny", "1.2.3", {"tiny": "plugin_tiny:TinyChoice"}, PLUGIN)
    out = tmp_path / "openapi.json"
    root = Path(__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)])}
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "openapi", "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    contract = json.loads(out.read_text())
    schemas = contract["components"]["schemas"]
    assert "CreateTinyChoiceGame" in schemas and "CreateTinyChoiceTournament" in schemas
    assert "tiny-choice" in schemas["CreateGame"]["discriminator"]["mapping"]
    assert "tiny-choice" in schemas["CreateTournament"]["discriminator"]["mapping"]
    score = contract["paths"]["/v1/rulesets/tiny-choice/score"]["post"]
    assert score["operationId"] == "scoreTinyChoice"
    assert "tiny-choice" not in schemas["GameView"]["discriminator"]["mapping"]
    assert set(schemas["GameView"]["discriminator"]["mapping"]) == {
        "choice",
        "choice-specials",
        "chopta",
    }


CLASHING = """
import msgspec
from referee.rulesets.choice.engine import ChoiceRuleset


class Mark(msgspec.Struct, frozen=True, tag="mark", tag_field="type"):
    value: int


class Clashing(ChoiceRuleset):
    id = "clashing"
    Move = Mark
"""


def test_a_plugin_whose_move_type_another_ruleset_names_is_disabled(installed, caplog):
    """Every ruleset's moves are decoded by one union told apart by ``type``: a plug-in that
    names a move ``mark`` that is not CHOICE's would make it unreadable, so it is left out."""
    installed("plugin_clashing", "0.4", {"clashing": "plugin_clashing:Clashing"}, CLASHING)
    with caplog.at_level(logging.ERROR, logger="referee"):
        assert load_plugins(again=True) == []
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("its move type 'mark' is another move of 'choice'" in x for x in lines), lines
    assert "clashing" not in RULESETS


def test_a_rulesets_score_calculator_is_a_frozen_value():
    """A scorer is shared by every request its route serves: nothing may change it."""
    scorers = [r.scorer for r in RULESETS.values() if getattr(r, "scorer", None) is not None]
    assert scorers
    for scorer in scorers:
        with pytest.raises(AttributeError):
            scorer.request = dict


CODED = """
from referee.games import RefusalCode
from referee.rulesets.choice.engine import ChoiceRuleset


class Coded(ChoiceRuleset):
    id = "coded"
    codes = {"too-eager": "a meaning", "not-yet": RefusalCode("another", status=409)}


class Taken(ChoiceRuleset):
    id = "taken"
    codes = {"illegal-move": "the referee's own code, declared again"}


class Again(ChoiceRuleset):
    id = "again"
    codes = {"too-eager": "another ruleset's code"}


class Shouting(ChoiceRuleset):
    id = "shouting"
    codes = {"Too-Eager": "not lower-case"}


class Failing(ChoiceRuleset):
    id = "failing"
    codes = {"too-late": RefusalCode("a refusal is never the referee's failure", status=500)}
"""


def test_a_plugins_refusal_codes_are_read_with_their_status(installed):
    from referee.games import RefusalCode, declared_codes
    from referee.web.codes import ruleset_codes

    installed("plugin_coded", "1.0", {"coded": "plugin_coded:Coded"}, CODED)
    assert load_plugins(again=True) == ["coded"]
    assert declared_codes(RULESETS["coded"]) == {
        "too-eager": RefusalCode("a meaning", 422),
        "not-yet": RefusalCode("another", 409),
    }
    assert declared_codes(RULESETS["choice"]) == {}  # the built-in ones: theirs are the table's
    assert ruleset_codes(RULESETS.values()) == {
        "too-eager": ("coded", RefusalCode("a meaning", 422)),
        "not-yet": ("coded", RefusalCode("another", 409)),
    }


def test_malformed_refusal_codes_disable_the_plugin_with_a_line(installed, caplog):
    installed("plugin_shouting", "1.0", {"shouting": "plugin_shouting:Shouting"}, CODED)
    installed("plugin_failing", "1.0", {"failing": "plugin_failing:Failing"}, CODED)
    with caplog.at_level(logging.ERROR, logger="referee"):
        assert load_plugins(again=True) == []
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("its code 'Too-Eager' is not lower-case words joined by '-'" in x for x in lines)
    assert any("its code 'too-late' has the status 500, not one of 422, 409" in x for x in lines)


@pytest.mark.parametrize(
    ("points", "said"),
    [
        (
            {"taken": "plugin_codes:Taken"},
            r"ruleset 'taken' \(plugin_codes 2\.0\) declares the refusal code 'illegal-move', "
            r"which is the referee's own",
        ),
        (
            {"coded": "plugin_codes:Coded", "again": "plugin_codes:Again"},
            r"rulesets '(coded|again)' \(plugin_codes 2\.0\) and '(coded|again)' \(plugin_codes "
            r"2\.0\) both declare the refusal code 'too-eager'",
        ),
    ],
)
def test_a_refusal_code_taken_already_stops_the_start(tmp_path, points, said):
    """A client tells a refusal by its code alone, and the referee gives it one status: a
    plug-in's code that is the referee's, or another plug-in's, stops a referee that has both
    from starting (``referee openapi`` builds the app as ``referee serve`` does)."""
    _distribution(tmp_path, "plugin_codes", "2.0", points, CODED)
    root = Path(__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)])}
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "openapi", "-o", str(tmp_path / "openapi.json")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("referee.web.codes.DuplicateCode: "), done.stderr[-2000:]
    assert re.search(said, last), last
