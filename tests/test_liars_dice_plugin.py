"""The fourth game, installed from outside: ``examples/liars-dice`` is a distribution of its
own, and the referee takes it as it takes any installed plug-in (``referee.plugins``).

It is installed here as pip would leave an editable install, without pip: its source folder on
the path, and beside it a ``.dist-info`` whose name, version and entry points are read from the
example's own pyproject.toml (a wheel that setuptools builds from it carries the same
``entry_points.txt``). Then the registry, the house bots, records and ``verify``, and the
noninterference property of tests/test_noninterference.py are checked against it. Its rules'
own tests are in examples/liars-dice/tests (in the pytest ``testpaths``).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_noninterference import a_point_of_play, seen_by_others

from referee.bots import bot_names, get_bot
from referee.core.game import LoadedGame, new_game
from referee.games import ORIGINS, RULESETS, Recorder, get_ruleset, verify
from referee.games._common import plain
from referee.plugins import GROUP, SURFACE, load_plugins

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "liars-dice"
KEY = b"liars-dice-noninterference-key"


def _dist_info(root: Path) -> tuple[str, str]:
    """The example's ``.dist-info``, from its pyproject.toml: (name, version)."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    name, release = project["name"], project["version"]
    info = root / f"{name.replace('-', '_')}-{release}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {release}\n")
    points = project["entry-points"][GROUP]
    lines = "".join(f"{point} = {target}\n" for point, target in points.items())
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}")
    return name, release


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The example installed (see the module's docstring) and loaded as the referee loads
    plug-ins when it starts; afterwards, the registry as it was."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.syspath_prepend(str(tmp_path))
    distribution = _dist_info(tmp_path)
    saved = [(registry, dict(registry)) for registry in (RULESETS, ORIGINS)]
    added = load_plugins(again=True)
    yield added, distribution
    for registry, before in saved:
        registry.clear()
        registry.update(before)
    assert "liars-dice" not in RULESETS, "the plug-in outlived its test"


def test_load_plugins_registers_it_with_its_distribution_version_and_bots(installed):
    added, distribution = installed
    assert added == ["liars-dice"]
    ruleset = get_ruleset("liars-dice")
    assert type(ruleset).__module__ == "referee_liars_dice.rules"
    assert ORIGINS["liars-dice"] == distribution == ("referee-liars-dice", "0.1.0")
    assert ORIGINS["chopta"][0] == "referee"
    assert [name for name in SURFACE if not hasattr(ruleset, name)] == []
    assert set(bot_names("liars-dice")) == {"random", "greedy", "strong"}
    assert "referee_liars_dice" in sys.modules


@pytest.mark.parametrize("seats", [2, 3, 5])
def test_the_house_bots_play_it_and_its_record_verifies(installed, seats):
    recorder = _recorded_game(get_ruleset("liars-dice"), seats, bytes(range(32)))
    record = msgspec.json.encode(recorder.record)
    report = verify(record)
    assert report.ok, report.problems
    assert sorted(recorder.record.totals) == [-1, *[0] * (seats - 2), 1]
    assert [d["seat"] for d in recorder.record.dice] == list(range(seats))
    edited = json.loads(record)
    edited["decisions"][-1]["moves"] = [{"type": "bid", "quantity": 9, "face": 6}]
    assert not verify(json.dumps(edited).encode()).ok


def _recorded_game(ruleset, seats: int, seed: bytes) -> Recorder:
    """A game played by the house bots (strong, greedy, random, ...), through the JSON a bot
    receives, and kept by a ``Recorder`` as the service keeps it."""
    names = ["strong", "greedy", "random"]
    bots = [get_bot(ruleset.id, names[s % 3], s) for s in range(seats)]
    recorder = Recorder(ruleset, {"dice_per_seat": 3}, [f"bot{s}" for s in range(seats)], seed)
    while not ruleset.finished(recorder.state):
        (seat,) = ruleset.to_decide(recorder.state)
        turn = json.loads(
            msgspec.json.encode(
                {
                    "legal_moves": ruleset.legal_moves(recorder.state, seat),
                    "view": ruleset.view(recorder.state, seat),
                }
            )
        )
        recorder.decide(seat, [msgspec.convert(bots[seat](turn), ruleset.Move)])
    return recorder


def test_referee_verify_finds_it_by_its_entry_point_in_a_new_process(installed, tmp_path):
    """The command line loads installed plug-ins as it starts: ``referee verify`` replays a
    Liar's dice record with nothing but the distribution on the path."""
    recorder = _recorded_game(get_ruleset("liars-dice"), 3, bytes(range(32)))
    good, edited = tmp_path / "record.json", tmp_path / "edited.json"
    good.write_bytes(msgspec.json.encode(recorder.record))
    record = json.loads(good.read_bytes())
    record["dice"][1]["dice"][0] = record["dice"][1]["dice"][0] % 6 + 1
    edited.write_text(json.dumps(record))
    path = os.pathsep.join([str(tmp_path), str(EXAMPLE), *sys.path])
    env = {**os.environ, "PYTHONPATH": path}
    verify_ = [sys.executable, "-m", "referee.cli", "verify"]
    run = subprocess.run([*verify_, str(good)], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok: every die re-derived from the seed")
    run = subprocess.run(
        [*verify_, str(edited)], capture_output=True, text=True, env=env, timeout=60
    )
    assert run.returncode == 1
    assert "the recorded dice differ from the dice the seed derives" in run.stderr


@pytest.mark.parametrize("seed", range(4))
def test_the_services_core_plays_it_with_a_house_bot_and_deadlines(installed, seed):
    """The referee's core (what the service does between a read and a commit, no I/O) plays
    a plug-in's game as any other: a house bot seat, missed deadlines taken as the ruleset's
    timeout, the game stored and read back between changes, and the record it publishes
    verifies. What a seat is handed is its turn as JSON, as over HTTP."""
    now = 1_000.0
    seats = [{"name": "alice"}, {"name": "house", "bot": "strong"}, {"name": "carol"}]
    game, _ = new_game("liars-dice", {"dice_per_seat": 2}, seats, 10.0, bytes([seed]) * 32, now)
    players = {0: get_bot("liars-dice", "greedy", seed), 2: get_bot("liars-dice", "random", seed)}
    rnd = random.Random(seed)
    views = get_ruleset("liars-dice").views
    decisions = list(game.change.decisions)
    blob, missed = game.encoded(), 0
    while True:
        now += 1
        game = LoadedGame.read("", blob, "0", now)  # deadlines passed are resolved here
        if game.doc.status == "finished":
            decisions += game.change.decisions
            break
        (seat,) = game.ruleset.to_decide(game.state)
        assert seat != 1, "the house bot decides as soon as its seat must"
        record = game.record(decisions)
        assert type(record) is views.record  # the ruleset's own, as it declares them
        assert record.dice == [] and record.seed is None
        public = game.public_view()
        assert type(public) is views.game_view
        assert all("dice" not in s for s in plain(public)["seats"])  # absent until the call
        if missed == 0 or rnd.random() < 0.2:
            now += 10  # the seat lets its deadline pass
            missed += 1
        else:
            turn = json.loads(msgspec.json.encode(game.turn(seat)))
            assert turn["view"]["you"]["dice"] == game.state.dice[seat]
            move = players[seat](turn)
            game.decide(seat, turn["seq"], [msgspec.convert(move, game.ruleset.Move)], now)
        decisions += game.change.decisions
        blob = game.encoded()
    record = plain(game.record(decisions))
    report = verify(record)
    assert report.ok, report.problems
    assert record["finished"] and sorted(record["totals"]) == [-1, 0, 1]
    assert all(len(s["dice"]) == 2 for s in record["final"])
    told = [json.loads(d) for d in decisions]
    assert sum(d["timeout"] for d in told) >= 1
    assert {d["seat"] for d in told} >= {1}


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), seed=st.integers(0, 2**32))
def test_a_seats_dice_change_nothing_another_party_sees(installed, data, seed):
    """Liar's dice decisions are all public; its secret is each seat's dice (as CHOPTA's is its
    pools). Two copies differing in one seat's dice look alike to everyone else, by the
    referee's own measure (``seen_by_others``), while the others play alike, until the call
    reveals them."""
    ruleset = get_ruleset("liars-dice")
    seats = data.draw(st.integers(2, 5))
    options = {
        "dice_per_seat": data.draw(st.integers(1, 5)),
        "bidding_rule": data.draw(st.sampled_from(["reset-face", "reset-quantity"])),
    }
    rnd = random.Random(seed)
    state = a_point_of_play(data, ruleset, ruleset.create(options, seats, KEY), rnd)
    if ruleset.finished(state):
        return
    x = data.draw(st.sampled_from([s for s in range(seats) if s != state.turn]))
    faces = data.draw(st.lists(st.integers(1, 6), min_size=len(state.dice[x])))
    other = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=ruleset.State)
    other.dice[x] = sorted(faces[: len(state.dice[x])])
    for _ in range(60):
        assert seen_by_others(ruleset, state, x) == seen_by_others(ruleset, other, x)
        due = ruleset.to_decide(state)
        if not due or x in due:
            return
        seat = due[0]
        moves = [rnd.choice(ruleset.legal_moves(state, seat))]
        ruleset.decide(state, seat, moves)
        ruleset.decide(other, seat, moves)
        if ruleset.finished(state):
            return  # the call: every die is shown


def test_a_record_served_before_it_declared_its_views_still_verifies(installed):
    """A record as the referee served it while the plug-in declared no views (its views plain
    values, a seat's dice null until the call; ``tests/data``, made by the core as the
    service makes one) verifies against today's plug-in, whose final seats it compares with
    the board's at the end; one edited does not."""
    saved = Path(__file__).parent / "data" / "liars-dice-record-plain-views.json"
    record = json.loads(saved.read_text())
    assert record["finished"] and any(d["timeout"] for d in record["decisions"])
    report = verify(saved.read_bytes())
    assert report.ok, report.problems
    record["final"][2]["total"] = 1
    assert not verify(json.dumps(record).encode()).ok


def test_a_type_checker_reads_the_referees_types_in_the_plugin(tmp_path):
    """The referee ships ``py.typed`` (package data, so a wheel carries it): mypy --strict over
    the plug-in passes with the referee found where an installed package is (on the path, not
    as a source beside it), where without the marker it would take ``referee`` as untyped."""
    root = Path(__file__).resolve().parents[1]
    package_data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in package_data["package-data"]["referee"]
    assert (root / "referee" / "py.typed").is_file()
    checked = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache")),
            str(EXAMPLE / "referee_liars_dice"),
        ],
        cwd=tmp_path,  # no configuration of the referee's, and no source of it, here
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "no issues found in 3 source files" in checked.stdout


def test_every_code_it_raises_is_the_referees_or_declared_by_it(installed):
    """A refusal's code is what a client looks up: each code the plug-in's source raises is
    one of the referee's (``PROBLEM_CODES``) or one it declares (its ``codes``), and each it
    declares is raised."""
    import ast

    from referee.games import declared_codes
    from referee.web.codes import PROBLEM_CODES

    source = (EXAMPLE / "referee_liars_dice" / "rules.py").read_text()
    raised = {
        node.args[0].value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) in {"RuleViolation", "InvalidOption"}
        and isinstance(node.args[0], ast.Constant)
    }
    declared = set(declared_codes(get_ruleset("liars-dice")))
    assert declared and not declared & set(PROBLEM_CODES)
    assert raised - set(PROBLEM_CODES) == declared
