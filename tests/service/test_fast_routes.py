"""GET /turn and POST /moves answered by the hot routes send the very bytes the Litestar
handlers send, refusals included, and everything the hot routes do not answer reaches the
handlers."""

from __future__ import annotations

import asyncio
import random

import httpx
import pytest
from helpers import auth, create

from referee.service.seats import Seats
from referee.settings import Settings
from referee.web import create_app, hot
from referee.web.hot import HotRoutesLitestar


@pytest.fixture
def decisions_tried(monkeypatch):
    """How many times a decision reached the seats' service (both replicas run in this
    process, and the tests ask one at a time)."""
    calls = []
    real = Seats._move  # every decision's way, with its next turn (``?wait=``) or without

    async def counted(self, *args):
        calls.append(args)
        return await real(self, *args)

    monkeypatch.setattr(Seats, "_move", counted)
    return calls


def _same(fast: httpx.Response, full: httpx.Response) -> None:
    assert fast.status_code == full.status_code, (fast.text, full.text)
    for header in ("content-type", "content-length"):
        assert fast.headers.get(header) == full.headers.get(header), header
    assert fast.content == full.content


@pytest.mark.parametrize("ruleset", ["choice", "choice-specials"])
def test_fast_answers_are_the_handlers_bytes(http, handlers_only, fast_answers, ruleset):
    game = create(http, ruleset, 2)
    tokens = [seat["token"] for seat in game["seats"]]
    rnd = random.Random(7)
    answered = 0
    with httpx.Client(base_url=handlers_only.url, timeout=30) as full:
        for _ in range(400):
            turns = {}
            for seat, token in enumerate(tokens):
                path = f"/v1/games/{game['id']}/turn"
                fast = http.get(path, headers=auth(token), params={"wait": "0"})
                _same(fast, full.get(path, headers=auth(token), params={"wait": "0"}))
                answered += 1
                turns[seat] = fast.json()
            if turns[0]["game_status"] == "finished":
                break
            for seat, turn in turns.items():
                if turn["status"] != "your_turn":
                    continue
                path = f"/v1/games/{game['id']}/moves"
                body = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
                fast = http.post(path, headers=auth(tokens[seat]), json=body)
                assert fast.status_code == 200, fast.text
                # the same decision again is answered from the record, by the handler
                _same(fast, full.post(path, headers=auth(tokens[seat]), json=body))
                answered += 1
        else:
            raise AssertionError("the game did not finish")
    assert len(fast_answers) == answered


def test_one_request_per_decision_is_the_handlers_bytes(http, handlers_only, fast_answers):
    """``POST /moves?wait=0``: the decision and the seat's next turn in one answer, the same
    bytes from the hot route and the handler (which answers the same decision again)."""
    game = create(http, "choice", 2)
    tokens = [seat["token"] for seat in game["seats"]]
    path = f"/v1/games/{game['id']}"
    turns = [http.get(path + "/turn", headers=auth(token)).json() for token in tokens]
    rnd = random.Random(3)
    posted = 0
    with httpx.Client(base_url=handlers_only.url, timeout=30) as full:
        for _ in range(400):
            if all(turn["status"] == "finished" for turn in turns):
                break
            for seat, token in enumerate(tokens):
                turn = turns[seat]
                if turn["status"] != "your_turn":
                    turns[seat] = http.get(path + "/turn", headers=auth(token)).json()
                    continue
                body = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
                wait = {"wait": "0"}
                fast = http.post(path + "/moves", headers=auth(token), json=body, params=wait)
                assert fast.status_code == 200, fast.text
                _same(fast, full.post(path + "/moves", headers=auth(token), json=body, params=wait))
                answer = fast.json()
                assert answer["seq"] == turn["seq"] and answer["turn"]["seat"] == seat
                turns[seat] = answer["turn"]
                posted += 1
        else:
            raise AssertionError("the game did not finish")
    assert posted > 20 and fast_answers.count(200) >= posted


BAD = [
    pytest.param("get", "/turn", {"params": {"wait": "61"}}, 400, id="wait-too-long"),
    pytest.param("get", "/turn", {"params": {"wait": "soon"}}, 400, id="wait-not-a-number"),
    pytest.param("get", "/turn", {"token": None}, 401, id="no-token"),
    pytest.param("put", "/turn", {}, 405, id="put"),  # HEAD is answered as GET
    pytest.param("post", "/moves", {"json": {"seq": 99, "move": {}}}, 400, id="untyped-move"),
    pytest.param(
        "post",
        "/moves",
        {"content": b"{", "headers": {"content-type": "application/json"}},
        400,
        id="not-json",
    ),
    pytest.param(
        "post",
        "/moves",
        {"content": b" " * 70_000, "headers": {"content-type": "application/json"}},
        413,
        id="too-large",
    ),
    pytest.param("post", "/moves", {"json": {"seq": 7, "move": "x"}}, 400, id="move-not-an-object"),
    pytest.param(
        "post", "/moves", {"params": {"wait": "61"}, "json": {"seq": 0}}, 400, id="moves-wait-61"
    ),
    pytest.param(
        "post", "/moves", {"params": {"wait": "x"}, "json": {"seq": 0}}, 400, id="moves-wait-x"
    ),
]


@pytest.mark.parametrize(("method", "route", "how", "status"), BAD)
def test_what_the_fast_routes_do_not_answer_the_handlers_do(
    http, handlers_only, fast_answers, method, route, how, status
):
    game = create(http, "choice", 2)
    how = dict(how)
    token = how.pop("token", game["seats"][0]["token"])
    headers = {**(auth(token) if token else {}), **how.pop("headers", {})}
    path = f"/v1/games/{game['id']}{route}"
    with httpx.Client(base_url=handlers_only.url, timeout=30) as full:
        fast = getattr(http, method)(path, headers=headers, **how)
        assert fast.status_code == status, fast.text
        assert fast.headers["content-type"] == "application/problem+json"
        _same(fast, getattr(full, method)(path, headers=headers, **how))
    assert fast_answers == []


REFUSED = [
    pytest.param("get", "/turn", "forged", None, 403, id="forged-token"),
    pytest.param("post", "/moves", "forged", "stale", 403, id="forged-token-moves"),
    pytest.param("post", "/moves", None, {"seq": 0}, 422, id="no-move"),
    pytest.param("post", "/moves", None, "stale", 409, id="stale-seq"),
    pytest.param("post", "/moves", None, "taken", 409, id="seq-already-decided"),
    pytest.param("post", "/moves", None, "illegal", 422, id="illegal-move"),
]


@pytest.mark.parametrize(("method", "route", "token", "body", "status"), REFUSED)
def test_a_refusal_is_the_handlers_answered_once_and_changes_nothing(
    http, handlers_only, fast_answers, decisions_tried, method, route, token, body, status
):
    """The hot route answers a refusal itself, with the handler's bytes: the decision
    reaches the service once (not again through the handler), and nothing changes."""
    for _ in range(20):  # a first roll of five alike leaves one legal move: another game
        game = create(http, "choice", 2)
        seat_token = game["seats"][0]["token"]
        path = f"/v1/games/{game['id']}"
        turn = http.get(path + "/turn", headers=auth(seat_token)).json()
        if len(turn["legal_moves"]) > 1:
            break
    token = token or seat_token
    if body == "taken":  # seq 0 decided, then a different decision sent for it
        first = {"seq": 0, "move": turn["legal_moves"][0]}
        assert http.post(path + "/moves", headers=auth(seat_token), json=first).status_code == 200
        body = {"seq": 0, "move": turn["legal_moves"][-1]}
        assert body != first
    elif body == "stale":
        body = {"seq": turn["seq"] + 1, "move": turn["legal_moves"][0]}
    elif body == "illegal":
        move = dict(turn["legal_moves"][0], pairs=[[1, 1], [1, 1]], fifth=1)
        assert move not in turn["legal_moves"]
        body = {"seq": turn["seq"], "move": move}
    before = http.get(path).json()
    sent, tried = len(fast_answers), len(decisions_tried)
    kwargs = {"json": body} if body is not None else {}
    fast = getattr(http, method)(path + route, headers=auth(token), **kwargs)
    assert fast.status_code == status, fast.text
    assert fast.headers["content-type"] == "application/problem+json"
    assert fast_answers[sent:] == [status]
    # a decision without a move is refused before the service is asked
    assert len(decisions_tried) - tried == (1 if route == "/moves" and "move" in body else 0)
    with httpx.Client(base_url=handlers_only.url, timeout=30) as full:
        _same(fast, getattr(full, method)(path + route, headers=auth(token), **kwargs))
    assert http.get(path).json() == before


def test_only_the_exact_paths_are_answered_in_front_of_the_router(
    http, handlers_only, fast_answers
):
    """A trailing slash is the router's to normalise: the handler answers it, alike on both."""
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    path = f"/v1/games/{game['id']}/turn/"
    with httpx.Client(base_url=handlers_only.url, timeout=30) as full:
        fast = http.get(path, headers=auth(token))
        assert fast.status_code == 200, fast.text
        assert fast.json()["status"] == "your_turn"
        _same(fast, full.get(path, headers=auth(token)))
    assert fast_answers == []
    assert http.get(path.rstrip("/"), headers=auth(token)).status_code == 200
    assert len(fast_answers) == 1


def test_the_running_app_keeps_the_collector_quiet(server):
    """Started, the app has frozen what lives as long as it, and spaced the collector's
    passes out (``referee._gc``): a pass walks every live object with the event loop stopped."""
    import gc

    from referee._gc import THRESHOLDS

    assert gc.get_threshold() == THRESHOLDS
    assert gc.get_freeze_count() > 10_000


def test_the_front_skips_nothing_litestar_would_do_to_an_answer():
    """The front sends through the server's ``send``; Litestar would wrap it only for
    ``before_send`` hooks, and the app has none."""
    app = create_app(Settings(redis_url="redis://unused"))
    assert isinstance(app, HotRoutesLitestar)
    assert not app.before_send


@pytest.mark.parametrize(
    ("asked", "seats_running"),
    [(hot.TURN, False), (hot.MOVES, False), (hot.NEXT, True), (hot.ONLY_NEXT, True)],
)
def test_a_request_taken_as_its_service_stops_goes_to_the_handlers(asked, seats_running):
    """A hot request taken before the app began to stop (its head read), whose body came
    after the app let go of its services: none to answer it, so the handlers do (they answer
    a stopping referee's requests), not a failure of the hot route."""
    routes = hot.HotRoutes(1024)
    routes.seats = object() if seats_running else None  # the league's requests need both
    route = ("" if asked == hot.ONLY_NEXT else "0123456789abcdef", asked, 0.0)
    body = b'{"seq": 0, "move": {"type": "pass"}}'
    answer = asyncio.run(hot.answered(routes, route, "token", "127.0.0.1", "/v1/x", body, []))
    assert answer is None
