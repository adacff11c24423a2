"""A finished game's record replays exactly from the revealed seed, and nothing else does."""

from __future__ import annotations

import json
import random

import msgspec
import pytest

from referee.cli import main as cli
from referee.games import Recorder, commitment, get_ruleset, new_seed, verify
from referee.games._common import plain


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


def _old_checks_pass(record: dict) -> bool:
    """What verify compared before records carried chains: dice, totals, ranking only."""
    ruleset = get_ruleset(record["ruleset"])
    seed = bytes.fromhex(record["seed"])
    state = ruleset.create(record["options"], len(record["seats"]), seed)
    try:
        for d in record["decisions"]:
            if d["timeout"]:
                ruleset.timeout(state, d["seat"])
            else:
                ruleset.decide(state, d["seat"], msgspec.convert(d["moves"], list[ruleset.Move]))
    except Exception:
        return False
    return (
        ruleset.finished(state)
        and plain(ruleset.dice_log(state)) == record["dice"]
        and ruleset.totals(state) == record["totals"]
        and ruleset.ranking(state) == record["ranking"]
    )


def test_an_edit_to_another_legal_decision_with_the_same_totals_is_refused():
    """Such edits passed the old checks; the chain (and the final sheets) refuse every one."""
    choice = get_ruleset("choice")
    found = 0
    for rng in range(4):
        recorder = play("choice", 1, seed=bytes([rng]) * 32, rng=rng)
        original = json.loads(msgspec.json.encode(recorder.record))
        replay = choice.create({}, 1, recorder.seed)
        for index, decision in enumerate(original["decisions"]):
            for alternative in choice.legal_moves(replay, 0):
                moves = json.loads(msgspec.json.encode([alternative]))
                if moves == decision["moves"]:
                    continue
                record = json.loads(json.dumps(original))
                record["decisions"][index]["moves"] = moves
                if _old_checks_pass(record):
                    found += 1
                    report = verify(record)
                    assert not report.ok
                    assert any("chain" in p for p in report.problems), report.problems
            choice.decide(replay, 0, msgspec.convert(decision["moves"], list[choice.Move]))
    assert found >= 2, found


def test_an_edited_timestamp_final_sheet_or_chain_is_refused():
    recorder = play("choice", 2, {"schedule": [2]})
    record = json.loads(msgspec.json.encode(recorder.record))
    for edit in (
        lambda r: r["decisions"][3].update(at=12.5),
        lambda r: r["final"][1]["marks"].update({"7": 99}),
        lambda r: r.update(chain="00" * 32),
        lambda r: r.pop("chain"),
    ):
        changed = json.loads(json.dumps(record))
        edit(changed)
        assert not verify(changed).ok
    assert verify(record, chain=record["chain"]).ok
    assert not verify(record, chain="ab" * 32).ok


def test_a_record_rewritten_with_a_fresh_chain_fails_against_the_published_one():
    """A forger who recomputes the chain over edited decisions still meets the chain the
    referee published in game_over."""
    recorder = play("chopta", 2, {"target": 10})
    published = recorder.record.chain
    record = json.loads(msgspec.json.encode(recorder.record))
    forged = Recorder(get_ruleset("chopta"), {"target": 10}, ["bot0", "bot1"], recorder.seed)
    chooser = random.Random(99)
    while not forged.ruleset.finished(forged.state):
        seat = forged.ruleset.to_decide(forged.state)[0]
        forged.decide(seat, [chooser.choice(forged.ruleset.legal_moves(forged.state, seat))])
    forged_record = json.loads(msgspec.json.encode(forged.record))
    assert verify(forged_record).ok and forged_record["decisions"] != record["decisions"]
    assert not verify(forged_record, chain=published).ok


def test_a_prefix_verifies_as_a_prefix_and_says_so():
    recorder = play("chopta", 2, {"target": 10})
    record = json.loads(msgspec.json.encode(recorder.record))
    seed = record["seed"]
    chopta = get_ruleset("chopta")
    replay = Recorder(chopta, {"target": 10}, ["bot0", "bot1"], recorder.seed)
    for decision in recorder.record.decisions[:7]:
        replay.decide(decision.seat, msgspec.convert(decision.moves, list[chopta.Move]))
    prefix = json.loads(msgspec.json.encode(replay.record))
    assert prefix["finished"] is False and prefix["seed"] is None
    assert not verify(prefix).ok  # no seed: nothing to replay with
    report = verify(prefix, seed)
    assert report.ok, report.problems
    assert any("prefix" in note for note in report.notes)
    prefix["finished"] = True  # a prefix passed off as a whole game
    assert not verify(prefix, seed).ok


def test_a_record_taken_before_any_decision_carries_its_chain_and_verifies_as_a_prefix():
    """The chain starts at the commitment, so even an empty record has one to check."""
    seed = new_seed()
    empty = Recorder(get_ruleset("chopta"), {"target": 10}, ["bot0", "bot1"], seed)
    record = json.loads(msgspec.json.encode(empty.record))
    assert record["decisions"] == [] and record["chain"] is not None
    report = verify(record, seed.hex())
    assert report.ok, report.problems
    assert not any("no chain" in note for note in report.notes)
    assert any("prefix: 0 decisions" in note for note in report.notes)


def test_verify_of_a_missing_file_is_one_line(tmp_path, capsys):
    assert cli(["verify", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.json" in err
