"""Bot accounts with a webhook, over HTTP against a Valkey of their own (a referee that lets
webhooks call loopback): an arena game between a webhook bot and a polling bot played to the
end and rated once; the SSRF guard at registration; a 410 that removes the webhook; failures
in a row that pause the bot (shown with each call's latency on its profile and page); and a
bot account seated in POST /v1/games."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from conftest import ThreadServer
from helpers import auth, wait_until
from webhook_bot import WebhookBot, wait_finished

from referee.games import DEFAULT
from referee.settings import key_hashes
from referee.store.embedded import start_embedded
from referee.store.league import CALLS_KEPT


@pytest.fixture(scope="module")
def hook_valkey(tmp_path_factory):
    """A Valkey of these tests' own: the other tests' referees allow no loopback webhook."""
    server = start_embedded(tmp_path_factory.mktemp("league-webhook-valkey"))
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def referee(hook_valkey):
    with ThreadServer(
        hook_valkey,
        webhook_allow=("127.0.0.1",),
        webhook_lease_s=1.0,
        bot_webhook_failures_to_pause=3,
    ) as running:
        yield running


@pytest.fixture
def http(referee):
    with httpx.Client(base_url=referee.url, timeout=30) as client:
        yield client


def _register(http: httpx.Client, name: str, webhook_url: str | None = None) -> dict:
    body = {"name": name} | ({"webhook_url": webhook_url} if webhook_url else {})
    reply = http.post("/v1/bots", json=body)
    assert reply.status_code == 201, reply.text
    return reply.json()


def test_a_refused_webhook_url_is_422_and_no_bot_is_made(http):
    for url in ("http://10.1.2.3/bot", "http://169.254.169.254/latest", "ftp://example.com/"):
        reply = http.post("/v1/bots", json={"name": "sneaky", "webhook_url": url})
        assert reply.status_code == 422, reply.text
        problem = reply.json()
        assert problem["code"] == "webhook-url-refused"
        assert problem["field"] == "webhook_url"
    assert http.get("/v1/bots/sneaky").status_code == 404


def test_the_webhook_is_set_with_a_new_secret_and_the_token_rotates_apart(http):
    made = _register(http, "hooked", "http://127.0.0.1:9999/bot")
    assert made["webhook_secret"].startswith("whsec_")
    token = made["token"]
    changed = http.post(
        "/v1/bots/hooked/webhook",
        json={"webhook_url": "http://127.0.0.1:8888/b"},
        headers=auth(token),
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["webhook_url"] == "http://127.0.0.1:8888/b"
    assert changed.json()["webhook_secret"] not in (None, made["webhook_secret"])
    refused = http.post(
        "/v1/bots/hooked/webhook", json={"webhook_url": "http://10.0.0.1/"}, headers=auth(token)
    )
    assert refused.status_code == 422 and refused.json()["code"] == "webhook-url-refused"
    assert http.get("/v1/bots/hooked").json()["webhook"]["url"] == "http://127.0.0.1:8888/b"
    rotated = http.post("/v1/bots/hooked/token", headers=auth(token))
    assert rotated.status_code == 200 and "webhook_secret" not in rotated.json()
    other = _register(http, "stranger")
    barred = http.post(
        "/v1/bots/hooked/webhook", json={"webhook_url": None}, headers=auth(other["token"])
    )
    assert barred.status_code == 403
    removed = http.post(
        "/v1/bots/hooked/webhook", json={"webhook_url": None}, headers=auth(rotated.json()["token"])
    )
    assert removed.json() == {"name": "hooked", "webhook_url": None, "webhook_secret": None}


def test_the_info_call_asks_the_webhook_who_it_is_and_the_profile_keeps_it(http):
    """As Battlesnake's: signed as every call, the answer's known string fields kept (cut to
    200 characters) on the profile; a failing call answers its error and keeps the last."""
    with WebhookBot() as hook:
        made = _register(http, "introduced", hook.url)
        hook.secret = made["webhook_secret"]
        token = auth(made["token"])
        asked = http.post("/v1/bots/introduced/webhook/info", headers=token)
        assert asked.status_code == 200, asked.text
        said = {"name": "hook", "author": "a" * 200, "version": "1.0"}
        assert asked.json() == {"name": "introduced", "info": said, "error": None}
        assert [kind for _, kind, _ in hook.calls] == ["info"] and hook.bad_signatures == 0
        assert http.get("/v1/bots/introduced").json()["webhook"]["info"] == said
        assert "It says it is: name hook" in http.get("/league/bots/introduced").text
        stranger = _register(http, "nosy")
        barred = http.post("/v1/bots/introduced/webhook/info", headers=auth(stranger["token"]))
        assert barred.status_code == 403
        hook.secret = "whsec_" + "A" * 43  # the bot no longer knows its secret: 401
        failed = http.post("/v1/bots/introduced/webhook/info", headers=token).json()
        assert failed["info"] is None and "401" in failed["error"]
        assert http.get("/v1/bots/introduced").json()["webhook"]["info"] == said
    nohook = http.post("/v1/bots/nosy/webhook/info", headers=auth(stranger["token"]))
    assert nohook.status_code == 409 and nohook.json()["code"] == "bot-has-no-webhook"


def _poll_until_over(url: str, token: str, stop: threading.Event, decided: list[int]) -> None:
    """A polling bot: its turns through /v1/me/next, one request per decision."""
    with httpx.Client(base_url=url, timeout=30) as client:
        step = client.get("/v1/me/next", params={"wait": 1}, headers=auth(token)).json()
        while not stop.is_set():
            if step["status"] != "your_turn":
                step = client.get("/v1/me/next", params={"wait": 1}, headers=auth(token)).json()
                continue
            turn = step["turn"]
            reply = client.post(
                f"/v1/me/games/{step['game_id']}/moves",
                params={"wait": 1},
                headers=auth(token),
                json={"seq": turn["seq"], "move": turn["legal_moves"][0]},
            )
            assert reply.status_code == 200, reply.text
            decided.append(turn["seq"])
            step = reply.json()


def test_an_arena_game_of_a_webhook_bot_and_a_polling_bot_is_played_and_rated_once(referee, http):
    with WebhookBot() as hook:
        caller = _register(http, "caller", hook.url)
        hook.secret = caller["webhook_secret"]
        poller = _register(http, "poller")
        seek = {"ruleset": DEFAULT, "deadline_s": 10}
        for bot in (caller, poller):
            joined = http.post("/v1/arena", json=seek, headers=auth(bot["token"]))
            assert joined.status_code == 200, joined.text
        stop, decided = threading.Event(), []
        polling = threading.Thread(
            target=_poll_until_over, args=(referee.url, poller["token"], stop, decided)
        )
        polling.start()
        try:
            assert wait_until(lambda: http.get("/v1/bots/caller").json()["playing"], 20)
            [game_id] = http.get("/v1/bots/caller").json()["playing"]
            for bot in (caller, poller):  # one game is enough
                http.delete("/v1/arena", headers=auth(bot["token"]))
            wait_finished(http, game_id)
            assert wait_until(lambda: "end" in hook.types(game_id))
        finally:
            stop.set()
            polling.join()
        record = http.get(f"/v1/games/{game_id}/record").json()
        seat = (
            record["seats"].index("caller")
            if isinstance(record["seats"][0], str)
            else next(i for i, s in enumerate(record["seats"]) if s["name"] == "caller")
        )
        mine = [d for d in record["decisions"] if d.get("seat") == seat]
        assert mine and not any(d.get("timeout") for d in mine), mine
        types = hook.types(game_id)
        assert types.count("start") == 1 and types.count("end") == 1, types
        turns = [wid for wid, kind, _ in hook.calls if kind == "turn"]
        assert len(turns) == len(set(turns)) == len(mine)  # each turn delivered once
        assert hook.bad_signatures == 0 and decided

        def rated_once() -> bool:
            profiles = [http.get(f"/v1/bots/{n}").json() for n in ("caller", "poller")]
            games = [
                [r["games"] for r in p["ratings"] if r["ruleset"] == DEFAULT] for p in profiles
            ]
            return games == [[1], [1]]

        assert wait_until(rated_once)
        time.sleep(1.2)  # the matchmaker's sweeps settle again: still once
        assert rated_once()
        profile = http.get("/v1/bots/caller").json()
        webhook = profile["webhook"]
        assert webhook["url"] == hook.url and webhook["failures"] == 0
        # every call counted; the profile keeps the latest CALLS_KEPT (a game of the caller's
        # may take more decisions than that, as its dice fall)
        assert webhook["calls"] == len(mine)
        assert len(webhook["latest_calls"]) == min(len(mine), CALLS_KEPT)
        assert all(c["ms"] > 0 and c["error"] is None for c in webhook["latest_calls"])
        page = http.get("/league/bots/caller")
        assert page.status_code == 200 and "Webhook" in page.text and " ms" in page.text


def test_a_410_removes_the_webhook_of_a_challenged_bot(http):
    with WebhookBot(before_answer=lambda message: 410) as hook:
        gone = _register(http, "gone", hook.url)
        hook.secret = gone["webhook_secret"]
        challenger = _register(http, "challenger")
        offer = {"opponent": "gone", "ruleset": DEFAULT, "rated": False, "deadline_s": 1}
        made = http.post("/v1/challenges", json=offer, headers=auth(challenger["token"]))
        assert made.status_code == 201, made.text
        accepted = http.post(
            f"/v1/challenges/{made.json()['id']}/accept", headers=auth(gone["token"])
        )
        assert accepted.status_code == 200, accepted.text
        assert wait_until(lambda: http.get("/v1/bots/gone").json()["webhook"]["url"] is None)
        webhook = http.get("/v1/bots/gone").json()["webhook"]
        assert webhook["latest_calls"][0]["gone"] is True
        assert [kind for _, kind, _ in hook.calls].count("turn") == 1  # not called again


def test_failures_in_a_row_pause_a_bot_seated_by_its_organizer(http):
    with WebhookBot(before_answer=lambda message: 500) as hook:
        failing = _register(http, "failing", hook.url)
        hook.secret = failing["webhook_secret"]
        body = {
            "ruleset": DEFAULT,
            "seats": [{"account": "failing"}, {"bot": "random"}],
            "deadline_s": 0.5,
        }
        created = http.post("/v1/games", json=body)
        assert created.status_code == 201, created.text
        seat = created.json()["seats"][0]
        assert seat["name"] == "failing" and seat["token"] is None
        assert wait_until(lambda: http.get("/v1/bots/failing").json()["status"] == "paused", 30)
        webhook = http.get("/v1/bots/failing").json()["webhook"]
        assert webhook["failures"] >= 3 and webhook["failures_in_a_row"] >= 3
        assert all(c["error"] and c["ms"] > 0 for c in webhook["latest_calls"])
        page = http.get("/league/bots/failing").text
        assert "answered 500" in page
        # a paused bot is seated nowhere
        again = http.post("/v1/games", json=body)
        assert again.status_code == 403 and again.json()["code"] == "bot-not-active"


def test_a_bot_account_takes_one_seat_of_a_game_and_must_exist(http):
    _register(http, "owned")
    body = {"ruleset": DEFAULT, "seats": [{"account": "owned"}, {"account": "owned"}]}
    twice = http.post("/v1/games", json=body)
    assert twice.status_code == 422 and twice.json()["field"] == "seats[1].account"
    assert twice.json()["code"] == "account-seat-invalid"
    body = {"ruleset": DEFAULT, "seats": [{"account": "nobody"}, {"bot": "random"}]}
    assert http.post("/v1/games", json=body).status_code == 404


def test_a_rated_tournament_delivers_a_webhook_bots_games_to_its_webhook(referee, http):
    with WebhookBot() as hook:
        entrant = _register(http, "entrant hook", hook.url)
        hook.secret = entrant["webhook_secret"]
        poller = _register(http, "entrant poll")
        spec = {"ruleset": DEFAULT, "entrants": 2, "deadline_s": 10, "rated": True}
        created = http.post("/v1/tournaments", json=spec)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["id"]
        stop, decided = threading.Event(), []
        polling = threading.Thread(
            target=_poll_until_over, args=(referee.url, poller["token"], stop, decided)
        )
        for bot in (entrant, poller):
            entered = http.post(
                f"/v1/tournaments/{tournament_id}/entrants",
                json={"name": "x"},
                headers=auth(bot["token"]),
            )
            assert entered.status_code == 201, entered.text
        polling.start()
        try:
            over = lambda: http.get(f"/v1/tournaments/{tournament_id}").json()["status"]  # noqa: E731
            assert wait_until(lambda: over() == "finished", 60)
        finally:
            stop.set()
            polling.join()
        view = http.get(f"/v1/tournaments/{tournament_id}").json()
        game_ids = [t["game_id"] for tables in view["rounds"] for t in tables]
        assert game_ids and decided
        for game_id in game_ids:
            record = http.get(f"/v1/games/{game_id}/record").json()
            assert record["finished"]
            turns = [
                wid for wid, kind, _ in hook.calls if kind == "turn" and wid.startswith(game_id)
            ]
            timeouts = [d for d in record["decisions"] if d.get("timeout")]
            assert turns and not timeouts, (turns, timeouts)

        def rated() -> bool:
            profile = http.get("/v1/bots/entrant hook").json()
            return [r["games"] for r in profile["ratings"]] == [len(game_ids)]

        assert wait_until(rated)
        assert hook.bad_signatures == 0


def test_only_the_organizer_who_created_a_bot_seats_it(hook_valkey):
    keys = key_hashes("first-organizer,second-organizer")
    with (
        ThreadServer(hook_valkey, organizer_keys=keys) as keyed,
        httpx.Client(base_url=keyed.url, timeout=30) as http,
    ):
        first, second = auth("first-organizer"), auth("second-organizer")
        made = http.post("/v1/bots", json={"name": "Owned Keyed"}, headers=first)
        assert made.status_code == 201, made.text
        body = {"ruleset": DEFAULT, "seats": [{"account": "Owned Keyed"}, {"bot": "random"}]}
        stolen = http.post("/v1/games", json=body, headers=second)
        assert stolen.status_code == 403 and stolen.json()["code"] == "not-bot-owner"
        seated = http.post("/v1/games", json=body, headers=first)
        assert seated.status_code == 201, seated.text
        game_id = seated.json()["id"]
        assert seated.json()["seats"][0]["token"] is None
        assert http.get("/v1/bots/Owned Keyed").json()["playing"] == [game_id]
        # a polling bot: the game reaches it through /v1/me/next, as its league games do
        step = http.get(
            "/v1/me/next", params={"wait": 5}, headers=auth(made.json()["token"])
        ).json()
        assert step["status"] == "your_turn" and step["game_id"] == game_id


def test_a_webhooks_calls_are_shown_to_the_bot_and_its_organizer_alone(http):
    """A call is made per decision, a postal round's hidden steps included, while the game
    runs, and a refused move's reason quotes what the seat holds (a CHOPTA pool): an
    opponent reading the profile or the page, as a cheating bot would, sees none of it."""
    with WebhookBot(before_answer=lambda message: 500) as hook:
        watched = _register(http, "watched", hook.url)
        hook.secret = watched["webhook_secret"]
        rival = _register(http, "rival")
        body = {
            "ruleset": DEFAULT,
            "seats": [{"account": "watched"}, {"bot": "random"}],
            "deadline_s": 0.5,
        }
        assert http.post("/v1/games", json=body).status_code == 201

        def seen_by(token: str | None) -> dict | None:
            headers = auth(token) if token else {}
            return http.get("/v1/bots/watched", headers=headers).json()["webhook"]

        assert wait_until(lambda: (seen_by(watched["token"]) or {}).get("calls", 0) >= 1, 30)
        own = seen_by(watched["token"])
        assert own["url"] == hook.url and own["latest_calls"][0]["error"]
        assert seen_by(None) is not None  # this client is its organizer (an open referee)
        assert seen_by(rival["token"]) is None
        page = http.get("/league/bots/watched", headers=auth(rival["token"])).text
        assert "Webhook" not in page and "answered 500" not in page
        assert "Webhook" in http.get("/league/bots/watched").text
        # a cache between them (a proxy, a browser shared by two) keeps neither answer for
        # another caller, nor reuses the owner's without asking again
        for path in ("/v1/bots/watched", "/league/bots/watched"):
            answer = http.get(path, headers=auth(watched["token"]))
            assert answer.headers["cache-control"] == "private, no-cache", path
            assert "authorization" in answer.headers["vary"].casefold(), path
