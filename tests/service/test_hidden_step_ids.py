"""The ids of an event stream tell nothing of a hidden step: a step of a postal round that
closes nothing writes an event (every change does) that no one is told of, and the ids the
stream does tell must not count it. Redis numbers the events of one millisecond 0, 1, 2...:
a seat that sent a step and its round's close together (as a bot that posts each roll's
decision as it makes it does) had its close told with the id ``<ms>-1`` instead of
``<ms>-0``, so everyone learned that it had taken a step just before (in live play with
special cards: that it had played Suppen-Kasper)."""

from __future__ import annotations

import json

import httpx
import msgspec
from helpers import auth, create
from test_http_edge import _Answers, _connect

from referee.games import get_ruleset

OPTIONS = {"schedule": [3]}


def _round(rolls: list[list[int]]) -> list[dict]:
    """A first seat's three decisions on its round's ``rolls`` (its sheet still empty)."""
    rules = get_ruleset("choice")
    state = rules.create(OPTIONS, 2, bytes(32))
    state.rolls = [tuple(roll) for roll in rolls]
    moves = []
    for _ in rolls:
        move = rules.legal_moves(state, 0)[0]
        rules.decide(state, 0, [move])
        moves.append(msgspec.to_builtins(move))
    return moves


def _post(game: dict, body: dict) -> bytes:
    data = json.dumps(body).encode()
    return (
        f"POST /v1/games/{game['id']}/moves HTTP/1.1\r\nHost: referee\r\n"
        f"Authorization: Bearer {game['seats'][0]['token']}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    ).encode() + data


def _told_ids(url: str, game_id: str) -> list[tuple[str, str]]:
    """Every (event, id) the game's stream tells now."""
    told: list[tuple[str, str]] = []
    timeout = httpx.Timeout(5, read=0.5)
    try:
        with httpx.stream("GET", f"{url}/v1/games/{game_id}/events", timeout=timeout) as reply:
            for line in reply.iter_lines():
                if line.startswith("id:"):
                    told.append(("", line[3:].strip()))
                elif line.startswith("event:"):
                    told[-1] = (line[6:].strip(), told[-1][1])
    except httpx.ReadTimeout:  # all told: the stream waits for more
        pass
    return told


def test_a_step_sent_with_its_rounds_close_leaves_no_trace_in_the_ids_told(server, http):
    closes = []
    for _ in range(10):  # a step and a close a millisecond apart, or less: most are
        game = create(http, "choice", 2, OPTIONS)
        turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(game["seats"][0]["token"]))
        moves = _round(turn.json()["view"]["rolls"])
        with _connect(server.url) as step, _connect(server.url) as close:
            step.sendall(_post(game, {"seq": 0, "moves": moves[:2]}))  # hidden: closes nothing
            close.sendall(_post(game, {"seq": 1, "move": moves[2]}))  # on the first's heels
            assert [s for s, _, _ in _Answers(step).read()] == [200]
            (status, _, body), *_ = _Answers(close).read()
        if status == 409:  # the close came first: once more, after the step
            with _connect(server.url) as again:
                again.sendall(_post(game, {"seq": 1, "move": moves[2]}))
                (status, _, body), *_ = _Answers(again).read()
        assert status == 200, body
        told = _told_ids(server.url, game["id"])
        assert [event for event, _ in told] == ["game_created", "game_started", "decision"]
        closes.append(told[-1][1])
    # the close is the one event of its commit: the first of its millisecond, whatever came
    # before it unseen
    assert [i.split("-")[1] for i in closes] == ["0"] * len(closes), closes


def test_every_event_a_stream_tells_is_numbered_within_its_own_commit(server, http):
    """The creation's two events, and a reveal's many, keep their order and are numbered
    from 0 within their commit; ids only grow."""
    game = create(http, "choice", 2, OPTIONS)
    for seat in (0, 1):
        token = game["seats"][seat]["token"]
        turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
        moves = _round(turn["view"]["rolls"])  # the second seat's sheet is as empty
        body = {"seq": turn["seq"], "moves": moves}
        assert http.post(f"/v1/games/{game['id']}/moves", json=body, headers=auth(token)).is_success
    told = _told_ids(server.url, game["id"])
    ids = [tuple(int(part) for part in i.split("-")) for _, i in told]
    assert ids == sorted(set(ids))
    assert [seq for _, seq in ids[:2]] == [0, 1]  # created and started: one commit
    reveal = [seq for (ms, seq) in ids if ms == ids[-1][0]]
    assert reveal == list(range(len(reveal))) and len(reveal) > 1


def test_a_house_bots_hidden_step_written_with_told_events_takes_no_id(server, http):
    """A house bot decides in the commit of the decision that made its seat decide, the
    reveal's events told in it. Its hidden steps there (in live play with special cards:
    Suppen-Kasper, played before the roll's mark) took numbers among those ids, so a
    spectator saw the gap before the reveal. Every millisecond's told ids now run 0, 1, 2..."""
    seats = [{"name": "me"}, {"bot": "random"}]
    game = create(http, "choice-specials", seats, {"schedule": [1]})
    token = game["seats"][0]["token"]
    while True:
        turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
        if turn["status"] != "your_turn":
            break
        body = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
        assert http.post(f"/v1/games/{game['id']}/moves", json=body, headers=auth(token)).is_success
    record = http.get(f"/v1/games/{game['id']}/record").json()
    # the house bot took a hidden step: a decision of its seat that closed no roll
    assert any(
        d["seat"] == 1 and d["moves"][0]["type"] == "suppen_kasper" for d in record["decisions"]
    )
    ids = [tuple(int(part) for part in i.split("-")) for _, i in _told_ids(server.url, game["id"])]
    assert ids == sorted(set(ids))
    for ms in {ms for ms, _ in ids}:
        told = [seq for (at, seq) in ids if at == ms]
        assert told == list(range(len(told))), (ms, told)


def _resumes(http: httpx.Client, game_id: str, last_id: str) -> int:
    """The status of the game's stream asked to resume after ``last_id``."""
    with http.stream(
        "GET", f"/v1/games/{game_id}/events", headers={"Last-Event-ID": last_id}
    ) as reply:
        return reply.status_code


def test_a_last_event_id_probe_cannot_count_the_hidden_steps(server, http):
    """A stream asked to resume after an id past the game's newest event was refused (400),
    and a hidden step's event follows the newest told one in its millisecond: whoever asked
    with the ids one, two, three... past the last one told learned, from where the 200s
    stopped, how many steps a seat had taken unseen (in live play with special cards, that
    it had played Suppen-Kasper). Two games alike but for one hidden step now answer every
    such probe alike."""
    probes = []
    for steps in (0, 1, 2):
        game = create(http, "choice", 2, OPTIONS)
        token = game["seats"][0]["token"]
        turn = http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)).json()
        moves = _round(turn["view"]["rolls"])
        last = _told_ids(server.url, game["id"])[-1][1]
        for seq in range(steps):  # each closes nothing: hidden
            body = {"seq": seq, "move": moves[seq]}
            posted = http.post(f"/v1/games/{game['id']}/moves", json=body, headers=auth(token))
            assert posted.status_code == 200, posted.text
        assert _told_ids(server.url, game["id"])[-1][1] == last  # nothing told
        ms, seq = (int(part) for part in last.split("-"))
        asked = [f"{ms}-{seq + k}" for k in range(1, 5)] + [f"{ms + 1}-0"]
        probes.append([_resumes(http, game["id"], probe) for probe in asked])
    assert probes[0] == probes[1] == probes[2], probes
    assert probes[0] == [200, 200, 200, 200, 400]
