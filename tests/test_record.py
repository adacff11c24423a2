"""A finished game's record replays exactly from the revealed seed, and nothing else does."""

from __future__ import annotations

import json
import random

import msgspec
import pytest

from referee.cli import main as cli
from referee.games import Recorder, commitment, get_ruleset, new_seed, verify


def play(ruleset_id, seats, options=None, *, seed=None, client_seeds=None, timeouts=0.0, rng=1):
    ruleset = get_ruleset(ruleset_id)
    seed = seed or new_seed()
    recorder = Recorder(
        ruleset, options or {}, [f"bot{i}" for i in range(seats)], seed, client_seeds
    )
    chooser = random.Random(rng)
    while not ruleset.finished(recorder.state):
        for seat in ruleset.to_decide(recorder.state):
            if chooser.random() < timeouts:
                recorder.timeout(seat, at=1.0)
            else:
                recorder.decide(seat, [chooser.choice(ruleset.legal_moves(recorder.state, seat))])
    return recorder


@pytest.mark.parametrize(
    ("ruleset", "seats", "options"),
    [
        ("choice", 1, {}),
        ("choice", 3, {"schedule": [4, 4, 4, 3, 3, 3, 2, 2, 2, 1]}),
        ("choice-specials", 2, {"schedule": [2]}),
        ("chopta", 3, {"dice_per_turn": 2, "bonus": True, "face_value": True, "target": 60}),
    ],
)
def test_a_finished_record_verifies_after_a_json_round_trip(ruleset, seats, options):
    recorder = play(ruleset, seats, options, client_seeds=["a", "b"], timeouts=0.1)
    data = msgspec.json.encode(recorder.record)
    report = verify(data)
    assert report.ok, report.problems
    record = json.loads(data)
    assert record["seed"] == recorder.seed.hex()
    assert record["commitment"] == commitment(recorder.seed)
    assert any(d["timeout"] for d in record["decisions"])
    assert record["dice"]


def tampered(recorder, change):
    record = json.loads(msgspec.json.encode(recorder.record))
    change(record)
    return json.dumps(record).encode()


def test_a_wrong_seed_is_refused():
    recorder = play("choice", 1)
    report = verify(msgspec.json.encode(recorder.record), new_seed())
    assert not report.ok and "commitment" in report.problems[0]


def test_a_changed_die_is_refused():
    recorder = play("choice", 1)

    def change(record):
        die = record["dice"][0]["dice"]
        die[0] = die[0] % 6 + 1

    assert not verify(tampered(recorder, change)).ok


def test_a_changed_total_is_refused():
    recorder = play("chopta", 2)

    def change(record):
        record["totals"][0] += 1

    assert not verify(tampered(recorder, change)).ok


def test_a_changed_decision_is_refused():
    recorder = play("chopta", 2)

    def change(record):
        record["decisions"][0]["seat"] = 1

    report = verify(tampered(recorder, change))
    assert not report.ok and "decision 0" in report.problems[0]


def test_a_changed_client_seed_is_refused():
    recorder = play("choice", 2, client_seeds=["x"])

    def change(record):
        record["client_seeds"] = ["y"]

    assert not verify(tampered(recorder, change)).ok


def test_a_timeout_flag_on_a_chosen_move_is_refused():
    recorder = play("choice", 1, rng=5)

    def change(record):
        index = next(i for i, d in enumerate(record["decisions"]) if not d["timeout"])
        decision = record["decisions"][index]
        decision["timeout"] = True
        decision["moves"] = [{"type": "mark", "fifth": 1, "pairs": [[1, 1], [1, 1]]}]

    assert not verify(tampered(recorder, change)).ok


def test_cli_verify_exit_codes(tmp_path, capsys):
    recorder = play("choice-specials", 2)
    good = tmp_path / "good.json"
    good.write_bytes(msgspec.json.encode(recorder.record))
    assert cli(["verify", str(good)]) == 0
    bad = tmp_path / "bad.json"
    bad.write_bytes(tampered(recorder, lambda r: r["totals"].reverse() or r["totals"].append(1)))
    assert cli(["verify", str(bad)]) == 1
    assert "mismatch" in capsys.readouterr().err


def test_a_game_that_is_not_over_has_no_seed_to_verify():
    ruleset = get_ruleset("choice")
    recorder = Recorder(ruleset, {}, ["a"], new_seed())
    report = verify(msgspec.json.encode(recorder.record))
    assert not report.ok and "no seed" in report.problems[0]
