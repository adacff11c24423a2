"""Idempotency-Key on the creations whose answers hold a token shown once: a retry gets the
same answer byte for byte, nothing is made twice (listings checked), another body is 422,
keys count per organizer or client address, and Redis never holds a token in the clear."""

from __future__ import annotations

import asyncio
import threading
import uuid

import httpx
import pytest
from conftest import ThreadServer
from redis.asyncio import Redis
from test_bad_input_http import problem

from referee.core.refusals import Refusal
from referee.service.idempotency import Answer, Idempotency
from referee.settings import key_hashes
from referee.store import IdempotencyStore

KEYS = "idem-organizer-one,idem-organizer-two"
ONE = {"Authorization": "Bearer idem-organizer-one"}
TWO = {"Authorization": "Bearer idem-organizer-two"}


@pytest.fixture(scope="module")
def keyed(valkey):
    """Organizer keys, and the test itself as a trusted proxy: ``X-Forwarded-For`` names the
    client, so that one test plays several clients."""
    with ThreadServer(
        valkey, organizer_keys=key_hashes(KEYS), trusted_proxies=("127.0.0.1",)
    ) as running:
        yield running


@pytest.fixture
def http(keyed):
    with httpx.Client(base_url=keyed.url, timeout=30) as client:
        yield client


def key() -> str:
    return str(uuid.uuid4())


def client(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


GAME = {"ruleset": "choice", "seats": [{"name": "ann"}, {"name": "bob"}], "deadline_s": 0}
OPEN = {"ruleset": "choice", "seats": [{"name": "ann"}, {}, {}, {}], "deadline_s": 0}


def listed_games(http: httpx.Client) -> list[str]:
    return [g["id"] for g in http.get("/v1/games", params={"limit": 100}).json()["games"]]


def listed_tournaments(http: httpx.Client) -> list[str]:
    page = http.get("/v1/tournaments", params={"limit": 100}).json()
    return [t["id"] for t in page["tournaments"]]


def test_a_game_created_again_with_its_key_is_the_same_game_and_tokens(http):
    before = set(listed_games(http))
    headers = {**ONE, "Idempotency-Key": key()}
    first = http.post("/v1/games", json=GAME, headers=headers)
    again = http.post("/v1/games", json=GAME, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert again.content == first.content  # byte for byte: the same id and tokens
    assert [s["token"] for s in again.json()["seats"]] == [
        s["token"] for s in first.json()["seats"]
    ]
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["content-type"] == first.headers["content-type"]
    assert (
        again.headers["location"] == first.headers["location"] == f"/v1/games/{first.json()['id']}"
    )
    assert set(listed_games(http)) - before == {first.json()["id"]}
    # the replayed token plays the game
    token = again.json()["seats"][0]["token"]
    turn = http.get(
        f"/v1/games/{first.json()['id']}/turn", headers={"Authorization": f"Bearer {token}"}
    )
    assert turn.status_code == 200, turn.text


def test_the_same_key_with_another_body_is_refused_and_makes_nothing(http):
    headers = {**ONE, "Idempotency-Key": key()}
    first = http.post("/v1/games", json=GAME, headers=headers)
    assert first.status_code == 201
    before = set(listed_games(http))
    other = {**GAME, "deadline_s": 5}
    problem(
        http.post("/v1/games", json=other, headers=headers),
        422,
        "idempotency-key-reused",
        "Idempotency-Key",
    )
    assert set(listed_games(http)) == before
    # and the first answer stays the key's
    assert http.post("/v1/games", json=GAME, headers=headers).content == first.content


def test_keys_count_per_organizer(http):
    """Another organizer sending the same key and body makes its own game: the first
    organizer's answer (its tokens) is never handed to it."""
    same = key()
    mine = http.post("/v1/games", json=GAME, headers={**ONE, "Idempotency-Key": same})
    theirs = http.post("/v1/games", json=GAME, headers={**TWO, "Idempotency-Key": same})
    assert mine.status_code == theirs.status_code == 201
    assert "idempotent-replayed" not in theirs.headers
    assert theirs.json()["id"] != mine.json()["id"]
    tokens = {s["token"] for s in mine.json()["seats"]}
    assert tokens.isdisjoint(s["token"] for s in theirs.json()["seats"])


def test_a_tournament_created_again_with_its_key_is_the_same_tournament(http):
    before = set(listed_tournaments(http))
    body = {"ruleset": "choice", "entrants": 2}
    headers = {**ONE, "Idempotency-Key": key()}
    first = http.post("/v1/tournaments", json=body, headers=headers)
    again = http.post("/v1/tournaments", json=body, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert again.content == first.content and again.headers["idempotent-replayed"] == "true"
    assert set(listed_tournaments(http)) - before == {first.json()["id"]}
    other = http.post(
        "/v1/tournaments", json=body, headers={**TWO, "Idempotency-Key": headers["Idempotency-Key"]}
    )
    assert other.status_code == 201 and other.json()["id"] != first.json()["id"]


def test_a_seat_claimed_again_with_its_key_is_the_same_seat(http):
    game = http.post("/v1/games", json=OPEN, headers=ONE).json()
    seats = f"/v1/games/{game['id']}/seats"
    same = key()
    headers = {**client("198.51.100.7"), "Idempotency-Key": same}
    first = http.post(seats, json={"name": "carl"}, headers=headers)
    again = http.post(seats, json={"name": "carl"}, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert again.content == first.content and again.headers["idempotent-replayed"] == "true"
    claimed = [s for s in http.get(f"/v1/games/{game['id']}").json()["seats"] if s["claimed"]]
    assert len(claimed) == 2  # ann's, and carl's once
    # another client with the same key and body claims a seat of its own
    other = http.post(
        seats, json={"name": "carl"}, headers={**client("203.0.113.9"), "Idempotency-Key": same}
    )
    assert other.status_code == 201 and "idempotent-replayed" not in other.headers
    assert other.json()["seat"] != first.json()["seat"]
    assert other.json()["token"] != first.json()["token"]
    # and another body under the first key is refused
    reused = http.post(seats, json={"name": "dora"}, headers=headers)
    problem(reused, 422, "idempotency-key-reused", "Idempotency-Key")
    claimed = [s for s in http.get(f"/v1/games/{game['id']}").json()["seats"] if s["claimed"]]
    assert len(claimed) == 3


def test_an_entrant_registered_again_with_its_key_is_the_same_entrant(http):
    tournament = http.post(
        "/v1/tournaments", json={"ruleset": "choice", "entrants": 3}, headers=ONE
    ).json()
    entrants = f"/v1/tournaments/{tournament['id']}/entrants"
    same = key()
    headers = {**client("198.51.100.8"), "Idempotency-Key": same}
    first = http.post(entrants, json={"name": "eve"}, headers=headers)
    again = http.post(entrants, json={"name": "eve"}, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert again.content == first.content and again.headers["idempotent-replayed"] == "true"
    view = http.get(f"/v1/tournaments/{tournament['id']}").json()
    assert view["entrants"] == ["eve"]
    # the same key from another address is another request (entrant names are unique)
    other = http.post(
        entrants,
        json={"name": "mallory"},
        headers={**client("203.0.113.10"), "Idempotency-Key": same},
    )
    assert other.status_code == 201 and other.json()["token"] != first.json()["token"]
    assert len(http.get(f"/v1/tournaments/{tournament['id']}").json()["entrants"]) == 2


def _at_once(count: int, send) -> list[httpx.Response]:
    """``count`` requests released together, each on a connection of its own
    (``send(client, index)``)."""
    barrier = threading.Barrier(count)
    replies: list[httpx.Response] = []

    def one(index: int) -> None:
        with httpx.Client(timeout=30) as own:
            barrier.wait()
            replies.append(send(own, index))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return replies


def _one_answer(replies: list[httpx.Response]) -> httpx.Response:
    """Every reply is the one answer, or 409 while it was being made."""
    made = [r for r in replies if r.status_code == 201]
    waited = [r for r in replies if r.status_code == 409]
    assert len(made) + len(waited) == len(replies), [r.text for r in replies]
    assert made and len({r.content for r in made}) == 1
    assert sum("idempotent-replayed" not in r.headers for r in made) == 1
    for reply in waited:
        problem(reply, 409, "idempotency-key-in-progress", "Idempotency-Key")
        assert reply.headers["retry-after"] == "1"
    return made[0]


def test_concurrent_duplicates_make_one_game(http, keyed):
    before = set(listed_games(http))
    headers = {**ONE, "Idempotency-Key": key()}
    replies = _at_once(
        8, lambda own, _: own.post(f"{keyed.url}/v1/games", json=GAME, headers=headers)
    )
    made = _one_answer(replies)
    assert set(listed_games(http)) - before == {made.json()["id"]}


def test_concurrent_duplicate_claims_take_one_seat(http, keyed):
    game = http.post("/v1/games", json=OPEN, headers=ONE).json()
    url = f"{keyed.url}/v1/games/{game['id']}/seats"
    headers = {**client("198.51.100.9"), "Idempotency-Key": key()}
    replies = _at_once(8, lambda own, _: own.post(url, json={"name": "fay"}, headers=headers))
    _one_answer(replies)
    seats = http.get(f"/v1/games/{game['id']}").json()["seats"]
    assert sum(s["claimed"] for s in seats) == 2


def test_duplicates_sent_to_two_replicas_at_once_make_one_game(process_server):
    """Two referee processes on one Redis (open mode: the client's address is the owner, and
    the server secret is the one they share in Redis): the same key sent to both at once
    makes one game, and either replica answers a retry with it."""
    replicas = [process_server(), process_server()]
    headers = {"Idempotency-Key": key()}

    def send(own: httpx.Client, index: int) -> httpx.Response:
        return own.post(f"{replicas[index % 2].url}/v1/games", json=GAME, headers=headers)

    with httpx.Client(base_url=replicas[0].url, timeout=30) as http:
        before = set(listed_games(http))
        made = _one_answer(_at_once(8, send))
        assert set(listed_games(http)) - before == {made.json()["id"]}
        for replica in replicas:
            again = http.post(f"{replica.url}/v1/games", json=GAME, headers=headers)
            assert again.content == made.content and again.headers["idempotent-replayed"] == "true"


@pytest.mark.parametrize("bad", ["", "x" * 256, "tab\tinside"], ids=repr)
def test_an_invalid_key_is_refused_and_makes_nothing(http, bad):
    before = set(listed_games(http))
    reply = http.post("/v1/games", json=GAME, headers={**ONE, "Idempotency-Key": bad})
    problem(reply, 400, "invalid-idempotency-key", "Idempotency-Key")
    assert set(listed_games(http)) == before


def test_a_key_that_is_not_ascii_is_refused(http):
    headers = [
        (b"authorization", b"Bearer idem-organizer-one"),
        (b"idempotency-key", "clé".encode()),
    ]
    reply = http.post("/v1/games", json=GAME, headers=headers)
    problem(reply, 400, "invalid-idempotency-key", "Idempotency-Key")


def test_a_refusal_keeps_nothing_under_its_key(http):
    """Nothing was made: the key may be used again, with a body that works."""
    headers = {**ONE, "Idempotency-Key": key()}
    bad = {**GAME, "ruleset": "poker"}
    problem(http.post("/v1/games", json=bad, headers=headers), 422, "unknown-ruleset")
    made = http.post("/v1/games", json=GAME, headers=headers)
    assert made.status_code == 201 and "idempotent-replayed" not in made.headers


def test_redis_holds_no_token_nor_key_in_the_clear(http, redis_client):
    same = key()
    answer = http.post("/v1/games", json=GAME, headers={**ONE, "Idempotency-Key": same}).json()
    tokens = [s["token"].encode() for s in answer["seats"]]
    found = 0
    for name in redis_client.scan_iter(match="referee:idem:*"):
        assert same.encode() not in name
        assert redis_client.ttl(name) > 0
        value = redis_client.get(name)
        assert same.encode() not in value
        for token in tokens:
            assert token not in value and token.split(b".")[1] not in value
        found += 1
    assert found >= 2  # this answer's record, and the secret


# -- the service, on a real Redis ---------------------------------------------------------------


def test_a_key_in_flight_is_409_and_released_by_a_refusal(valkey):
    async def main() -> None:
        redis = Redis.from_url(valkey)
        idempotency = Idempotency(IdempotencyStore(redis), ttl_s=60, secret="test-secret")
        started, finish = asyncio.Event(), asyncio.Event()

        async def slow() -> Answer:
            started.set()
            await finish.wait()
            return Answer(201, "application/json", b'{"made":1}')

        scope, same = "test " + key(), key()
        first = asyncio.ensure_future(idempotency.once(scope, same, b"{}", slow))
        await started.wait()
        with pytest.raises(Refusal) as caught:
            await idempotency.once(scope, same, b"{}", slow)
        assert caught.value.code == "idempotency-key-in-progress"
        assert caught.value.extra["retry_after"] == 1
        with pytest.raises(Refusal) as caught:  # another body: reused, even in flight
            await idempotency.once(scope, same, b"{ }", slow)
        assert caught.value.code == "idempotency-key-reused"
        finish.set()
        assert await first == (Answer(201, "application/json", b'{"made":1}'), False)
        again = await idempotency.once(scope, same, b"{}", slow)
        assert again == (Answer(201, "application/json", b'{"made":1}'), True)
        # another server secret finds nothing: the record is named by the secret too
        other = Idempotency(IdempotencyStore(redis), ttl_s=60, secret="another-secret")
        assert (await other.once(scope, same, b"{}", slow))[1] is False

        async def refused() -> Answer:
            raise Refusal("no-open-seat", "every seat of this game is taken")

        released = key()
        with pytest.raises(Refusal):
            await idempotency.once(scope, released, b"{}", refused)
        assert (await idempotency.once(scope, released, b"{}", slow))[1] is False
        await redis.aclose()

    asyncio.run(main())
