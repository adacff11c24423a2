"""No byte anyone may read reveals a pool, an undisclosed decision, a future roll or a seed
before it should: tournaments of every ruleset, watched by two observer processes.

One observer is a spectator; the other is also an entrant, a cheating bot that reads everything
it may besides its own turns. Each writes down every byte it is told and when. Once the
tournament is over, its records (seeds revealed) tell every secret, and its event streams tell
from when each stopped being one: the seed of a game once every game dealt the same dice is
over; a CHOPTA pool at its round's end; a CHOICE postal round's rolls once dealt at that game;
a CHOICE decision once its postal round is revealed. Anything an observer held before that
moment is a leak. An entrant may hold its own pool and its own decisions, and is judged on its
own answers only for the games it sits at.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import httpx
import msgspec
import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "clients" / "python"))
from referee_client import run_entrant

from referee.bots import get_bot

OBSERVER = Path(__file__).with_name("observer.py")
SPECS = [
    {"ruleset": "choice", "options": {"schedule": [3]}},
    {"ruleset": "choice-specials", "options": {"schedule": [3]}},
    {"ruleset": "chopta", "options": {"target": 15}},
]


@dataclass(frozen=True)
class Secret:
    what: str
    pattern: str
    until: float  # seconds since the epoch: public from then on
    game: str
    # seats (entrant indices) that may hold it all along; None: nobody
    holders: frozenset[int] = frozenset()


def _compact(value) -> str:
    return msgspec.json.encode(value).decode()


def _event_times(redis_client, game_id: str) -> list[tuple[float, dict]]:
    entries = redis_client.xrange(f"{{game:{game_id}}}:events")
    return [
        (int(entry_id.split(b"-")[0]) / 1000, json.loads(fields[b"e"]))
        for entry_id, fields in entries
    ]


def _secrets(http, redis_client, view: dict) -> list[Secret]:
    found: list[Secret] = []
    ends: dict[str, float] = {}
    events: dict[str, list[tuple[float, dict]]] = {}
    records: dict[str, dict] = {}
    seated: dict[str, list[int]] = {}
    groups: dict[tuple[int, int], list[str]] = {}
    for number, tables in enumerate(view["rounds"]):
        for table in tables:
            game_id = table["game_id"]
            seated[game_id] = table["entrants"]
            # before dice groups, every table of a round was dealt the round's dice
            groups.setdefault((number, table.get("group", 0)), []).append(game_id)
            records[game_id] = http.get(f"/v1/games/{game_id}/record").json()
            events[game_id] = _event_times(redis_client, game_id)
            ends[game_id] = next(t for t, e in events[game_id] if e["type"] == "game_over")
    for members in groups.values():
        group_over = max(ends[g] for g in members)
        for game_id in members:
            found.append(Secret("seed", records[game_id]["seed"], group_over, game_id))
    for game_id, record in records.items():
        told = events[game_id]
        started = next(t for t, e in told if e["type"] == "game_started")
        if record["ruleset"] == "chopta":
            round_ends = {e["round"]: t for t, e in told if e["type"] == "round_over"}
            for pool in record["dice"]:
                until = round_ends[pool["round"]]
                holder = frozenset({seated[game_id][pool["seat"]]})
                # as dealt (round_over, records), and as a seat's view shows one: sorted
                # alone, ten dice take only 3,003 values, and a play area would match
                for form in (_compact(pool["dice"]), '"pool":' + _compact(sorted(pool["dice"]))):
                    found.append(Secret("pool", form, until, game_id, holder))
        else:
            dealt = {0: started} | {e["batch"]: t for t, e in told if e["type"] == "rolls"}
            rolls = [sorted(r["dice"]) for r in record["dice"]]
            for batch, until in dealt.items():
                found.append(
                    Secret("rolls", _compact(rolls[3 * batch : 3 * batch + 3]), until, game_id)
                )
            reveals = sorted(t for t, e in told if e["type"] in ("rolls_decided", "game_over"))
            for decision in record["decisions"]:
                until = next(t for t in reveals if t >= decision["at"] - 0.002)
                holder = frozenset({seated[game_id][decision["seat"]]})
                found.append(Secret("decision", _compact(decision), until, game_id, holder))
    return found


def _leaks(observations: list[dict], secrets: list[Secret], seats: dict[str, list[int]], me):
    """(secret, observation) pairs where an observer held a secret before its time.

    What an entrant holds by right explains the same bytes anywhere: two pools of ten dice
    are the same sorted list about once in 860 pairs, so an entrant's own pool can read, to
    the byte, as another seat's (or round's) before that one is revealed."""
    held = {secret.pattern for secret in secrets if me is not None and me in secret.holders}
    leaks = []
    for seen in observations:
        own = seen["kind"] == "own"
        for secret in secrets:
            if seen["t"] >= secret.until or secret.pattern not in seen["body"]:
                continue
            if own and me not in seats[secret.game]:
                continue  # a game the entrant does not play: its own dice at another table
            if own and (me in secret.holders or secret.pattern in held):
                continue  # its own pool or decision, or bytes equal to one of them
            leaks.append((secret.what, secret.game, seen["src"], seen["body"][:200]))
    return leaks


@pytest.mark.parametrize("spec", SPECS, ids=[s["ruleset"] for s in SPECS])
def test_no_observer_learns_a_secret_before_its_time(server, redis_client, tmp_path, spec):
    url = server.url
    full = {**spec, "format": "round-robin", "entrants": 4, "deadline_s": 30}
    with httpx.Client(base_url=url, timeout=30) as http:
        tournament = http.post("/v1/tournaments", json=full).json()
        tid = tournament["id"]
        spectator = subprocess.Popen(
            [sys.executable, str(OBSERVER), url, tid, str(tmp_path / "spectator.jsonl")]
        )
        tokens = [
            http.post(f"/v1/tournaments/{tid}/entrants", json={"name": f"e{i}"}).json()["token"]
            for i in range(4)
        ]
        me = 3  # the cheating entrant
        cheat = subprocess.Popen(
            [sys.executable, str(OBSERVER), url, tid, str(tmp_path / "entrant.jsonl"), tokens[me]]
        )
        bots = []
        for i, name in enumerate(["random", "greedy", "strong"]):
            bot = get_bot(spec["ruleset"], name, i)
            choose = lambda turn, bot=bot: bot({"legal_moves": turn.legal_moves, "view": turn.view})  # noqa: E731
            bots.append(threading.Thread(target=run_entrant, args=(url, tokens[i], choose)))
        for thread in bots:
            thread.start()
        for thread in bots:
            thread.join(timeout=240)
        assert spectator.wait(timeout=240) == 0 and cheat.wait(timeout=240) == 0
        view = http.get(f"/v1/tournaments/{tid}").json()
        assert view["status"] == "finished"
        secrets = _secrets(http, redis_client, view)
    seats = {t["game_id"]: t["entrants"] for tables in view["rounds"] for t in tables}
    assert {s.what for s in secrets} >= ({"pool"} if spec["ruleset"] == "chopta" else {"rolls"})
    for name in ("spectator", "entrant"):
        observations = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").open()]
        assert len(observations) > 50, name  # it did watch
        if name == "entrant":
            assert any(o["kind"] == "own" for o in observations)
        leaks = _leaks(observations, secrets, seats, me if name == "entrant" else None)
        assert not leaks, f"{name}: {len(leaks)} leaks, first {leaks[:3]}"


def test_the_judge_tells_a_leak_from_an_entrants_own_equal_pool():
    """The judge itself: another seat's pool in the entrant's hands is a leak, unless the
    entrant's own pool is the very same list of dice."""
    mine = Secret("pool", '"pool":[1,1,2,2,3,3,4,4,5,6]', 10.0, "g", frozenset({3}))
    other = Secret("pool", '"pool":[1,1,1,2,3,4,5,6,6,6]', 10.0, "g", frozenset({1}))
    twin = Secret("pool", mine.pattern, 20.0, "g", frozenset({1}))
    seats = {"g": [0, 1, 2, 3]}

    def seen(body: str) -> dict:
        return {"t": 5.0, "kind": "own", "src": "/v1/me/next", "body": body}

    assert _leaks([seen(f"{{{mine.pattern}}}")], [mine, other, twin], seats, 3) == []
    leaked = _leaks([seen(f"{{{other.pattern}}}")], [mine, other, twin], seats, 3)
    assert [what for what, *_ in leaked] == ["pool"]
    # a spectator holds nothing by right: the same bytes are a leak of both
    public = [{**seen(f"{{{mine.pattern}}}"), "kind": "public"}]
    assert len(_leaks(public, [mine, other, twin], seats, None)) == 2
