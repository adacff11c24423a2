"""GET /turn and POST /moves answered by the fast routes send the very bytes the Litestar
handlers send, and everything the fast routes do not answer reaches the handlers."""

from __future__ import annotations

import random

import httpx
import pytest
from conftest import ThreadServer
from helpers import auth, create

from referee.api import _fast, create_app
from referee.api._fast import FrontedLitestar
from referee.settings import Settings


@pytest.fixture
def fast_answers(monkeypatch):
    """How many answers the fast routes sent themselves."""
    sent = []
    real = _fast._send

    async def counted(send, body):
        sent.append(body)
        await real(send, body)

    monkeypatch.setattr(_fast, "_send", counted)
    return sent


@pytest.fixture(scope="module")
def handlers_only(valkey):
    """A replica on the same store whose handlers answer everything."""
    with ThreadServer(valkey, fast_routes=False) as running:
        yield running


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


BAD = [
    pytest.param("get", "/turn", {"params": {"wait": "61"}}, 400, id="wait-too-long"),
    pytest.param("get", "/turn", {"params": {"wait": "soon"}}, 400, id="wait-not-a-number"),
    pytest.param("get", "/turn", {"token": None}, 401, id="no-token"),
    pytest.param("get", "/turn", {"token": "forged"}, 403, id="forged-token"),
    pytest.param("head", "/turn", {}, 405, id="head"),
    pytest.param("post", "/moves", {"json": {"seq": 0}}, 422, id="no-move"),
    pytest.param("post", "/moves", {"json": {"seq": 99, "move": {}}}, 400, id="untyped-move"),
    pytest.param("post", "/moves", {"content": b"{"}, 400, id="not-json"),
    pytest.param("post", "/moves", {"content": b" " * 70_000}, 413, id="too-large"),
    pytest.param("post", "/moves", {"json": {"seq": 7, "move": "x"}}, 400, id="move-not-an-object"),
]


@pytest.mark.parametrize(("method", "route", "how", "status"), BAD)
def test_what_the_fast_routes_do_not_answer_the_handlers_do(
    http, handlers_only, fast_answers, method, route, how, status
):
    game = create(http, "choice", 2)
    how = dict(how)
    token = how.pop("token", game["seats"][0]["token"])
    headers = auth(token) if token else {}
    path = f"/v1/games/{game['id']}{route}"
    with httpx.Client(base_url=handlers_only.url, timeout=30) as full:
        fast = getattr(http, method)(path, headers=headers, **how)
        assert fast.status_code == status, fast.text
        assert fast.headers["content-type"] == "application/problem+json"
        _same(fast, getattr(full, method)(path, headers=headers, **how))
    assert fast_answers == []


def test_a_refusal_is_the_handlers_and_changes_nothing(http, handlers_only, fast_answers):
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    path = f"/v1/games/{game['id']}"
    turn = http.get(path + "/turn", headers=auth(token)).json()
    before = http.get(path).json()
    stale = {"seq": turn["seq"] + 1, "move": turn["legal_moves"][0]}
    fast = http.post(path + "/moves", headers=auth(token), json=stale)
    assert fast.status_code == 409, fast.text
    with httpx.Client(base_url=handlers_only.url, timeout=30) as full:
        _same(fast, full.post(path + "/moves", headers=auth(token), json=stale))
    assert http.get(path).json() == before
    assert len(fast_answers) == 1  # the turn, not the refusal


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
    assert isinstance(app, FrontedLitestar)
    assert not app.before_send
