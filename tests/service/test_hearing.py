"""Waiting seats hear their games' commits on the games' own channels (SSUBSCRIBE), against the
real embedded Valkey: no wake-up missed with many waiters and many commits, one connection for
all of a process's channels and none per waiter, channels let go once no one waits."""

from __future__ import annotations

import asyncio
import time

from helpers import Counted, counted_redis
from redis.asyncio import Redis

from referee.service import GameService, Seats
from referee.store import GameStore
from referee.store.hearing import channel_of

GAMES = 150  # 300 seats: 150 waiting in one process, 150 deciding in another


def _process(url: str) -> tuple[GameService, Seats]:
    games = GameService(GameStore(counted_redis(url)), hear_linger_s=0.2)
    return games, Seats(games)


async def _close(*services: GameService) -> None:
    for games in services:
        await games.store.aclose()
        await games.store.redis.aclose()


async def _ready(games: GameService, seats: Seats, count: int) -> list[tuple[str, list, list]]:
    """``count`` 2-seat CHOICE games whose seat 0 has decided: (id, tokens, seat 1's turn)."""
    made = []
    for _ in range(count):
        game, tokens = await games.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        gid = game.doc.id
        turn0 = await seats.wait_turn(gid, tokens[0], 0)
        await seats.move(gid, tokens[0], 0, [turn0["legal_moves"][0]])
        made.append((gid, tokens, await seats.wait_turn(gid, tokens[1], 0)))
    return made


def test_many_waiters_many_commits_every_waiter_woken_on_one_connection(valkey, redis_client):
    """150 seats wait in one process (30 s long-polls); another process commits a decision in
    every one of their games at once. Every waiter wakes to its turn, soon (each within 5 s,
    a generous bound: a missed wake-up waits the full 30 s), and the waiting process holds one
    connection for all 150 channels and opened none for the waits themselves."""

    async def scenario():
        (one, seats_one), (two, seats_two) = _process(valkey), _process(valkey)
        made = await _ready(one, seats_one, GAMES)
        await asyncio.gather(one.store.redis.ping(), one.store.ping())
        connects = Counted.connects
        woken_at: dict[str, float] = {}

        async def wait(gid: str, token: str) -> dict:
            turn = await seats_one.wait_turn(gid, token, 30)
            woken_at[gid] = time.monotonic()
            return turn

        waiters = [asyncio.create_task(wait(gid, tokens[0])) for gid, tokens, _ in made]
        await asyncio.sleep(0.3)
        assert not any(w.done() for w in waiters), "a seat did not wait"
        heard_games = one.store.hearing.games
        opened = Counted.connects - connects
        ssubs = [int(c.get("ssub", 0)) for c in redis_client.client_list(_type="pubsub")]
        listeners = {
            n for _, n in redis_client.pubsub_shardnumsub(*(channel_of(g) for g, _, _ in made))
        }
        committed_at = time.monotonic()
        await asyncio.gather(
            *(
                seats_two.move(gid, tokens[1], 0, [turn["legal_moves"][0]])
                for gid, tokens, turn in made
            )
        )
        turns = await asyncio.wait_for(asyncio.gather(*waiters), 10)
        late = max(woken_at.values()) - committed_at
        await _close(one, two)
        return turns, heard_games, opened, (ssubs, listeners), late

    turns, heard_games, opened, (ssubs, listeners), late = asyncio.run(scenario())
    assert all(t["status"] == "your_turn" and t["seq"] == 1 for t in turns)
    assert heard_games == GAMES
    assert opened == 0, "a waiting seat opened a connection"
    # one connection holds the 150 channels, each heard once (other tests' servers may hold
    # channels of their own games on the same Valkey)
    assert GAMES in ssubs and listeners == {1}, (ssubs, listeners)
    assert late < 5, f"the last waiter woke {late:.1f} s after the commits began"


def test_a_games_channel_is_let_go_once_no_one_waits_on_it(valkey, redis_client):
    """The channel of a game whose last waiter left is unsubscribed after the linger; its
    remembered form goes with it (its commits are no longer heard), and a waiter that comes
    back subscribes again and is woken."""

    async def scenario():
        (one, seats_one), (two, seats_two) = _process(valkey), _process(valkey)
        ((gid, tokens, turn),) = await _ready(one, seats_one, 1)
        channel = channel_of(gid)
        subscribed = redis_client.pubsub_shardnumsub(channel)[0][1]
        kept_while_fresh = one.let_go()
        await asyncio.sleep(0.3)
        let_go = one.let_go()
        after = redis_client.pubsub_shardnumsub(channel)[0][1]
        remembered = one.memory.remembered(gid)
        waiting = asyncio.create_task(seats_one.wait_turn(gid, tokens[0], 10))
        await asyncio.sleep(0.1)
        again = redis_client.pubsub_shardnumsub(channel)[0][1]
        await seats_two.move(gid, tokens[1], 0, [turn["legal_moves"][0]])
        woken = await asyncio.wait_for(waiting, 5)
        await _close(one, two)
        return subscribed, kept_while_fresh, let_go, after, remembered, again, woken

    subscribed, kept, let_go, after, remembered, again, woken = asyncio.run(scenario())
    assert subscribed == 1 and kept == 0
    assert let_go == 1 and after == 0 and remembered is None
    assert again == 1 and woken["status"] == "your_turn"


def test_a_stream_waits_on_the_games_channel_and_reads_what_came_before_it(valkey):
    """An event stream's first wait subscribes, then reads the events it may have missed
    meanwhile; its later waits hear the commit and read once."""

    async def scenario():
        games, seats = _process(valkey)
        ((gid, tokens, turn),) = await _ready(games, seats, 1)
        events = await games.store.events_after(gid, "0")
        before_last = events[-2][0]
        missed = await games.events_after(gid, before_last, 5)  # not heard yet: read at once
        last = missed[-1][0]
        waiting = asyncio.create_task(games.events_after(gid, last, 5))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        await seats.move(gid, tokens[1], 0, [turn["legal_moves"][0]])
        told = await asyncio.wait_for(waiting, 5)
        await _close(games)
        return missed, events[-1][0], told

    missed, newest, told = asyncio.run(scenario())
    assert [i for i, _ in missed] == [newest]
    assert told and told[0][0] > newest


def test_the_pool_size_is_a_setting():
    from referee.settings import Settings
    from referee.store import open_store

    settings = Settings.from_env({"REFEREE_REDIS_POOL": "7", "REFEREE_HEAR_LINGER_S": "2.5"})
    store = open_store("redis://127.0.0.1:1", pool_size=settings.redis_pool)
    assert isinstance(store.games.redis, Redis)
    assert store.games.redis.connection_pool.max_connections == 7
    assert settings.hear_linger_s == 2.5


def test_a_refused_subscription_leaves_the_seat_waiting_and_woken_by_looking(tmp_path):
    """An ACL that refuses SSUBSCRIBE to the referee's user: a seat's long-poll still waits
    (no error, no connection of its own), looks at its game now and then, and answers its
    turn once the other seat has decided."""
    from referee.store.embedded import start_embedded

    valkey = start_embedded(tmp_path / "valkey", keep_alive=False)
    admin = __import__("redis").Redis.from_url(valkey.url)
    admin.execute_command("ACL", "SETUSER", "default", "-ssubscribe")

    async def scenario():
        (one, seats_one), (two, seats_two) = _process(valkey.url), _process(valkey.url)
        ((gid, tokens, turn),) = await _ready(one, seats_one, 1)
        waiting = asyncio.create_task(seats_one.wait_turn(gid, tokens[0], 10))
        await asyncio.sleep(0.3)
        still = not waiting.done()
        await seats_two.move(gid, tokens[1], 0, [turn["legal_moves"][0]])
        woken = await asyncio.wait_for(waiting, 5)
        heard = one.memory.hears(gid)
        await _close(one, two)
        return still, woken, heard

    try:
        still, woken, heard = asyncio.run(scenario())
    finally:
        admin.close()
        valkey.stop()
    assert still and not heard
    assert woken["status"] == "your_turn" and woken["seq"] == 1
