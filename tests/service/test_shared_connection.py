"""The connection that a game's reads and commits share, against a real Valkey."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from helpers import Counted, counted_redis
from redis.asyncio import Redis
from redis.exceptions import ConnectionError, NoScriptError, ResponseError

from referee.store import GameStore
from referee.store.connection import Patience, SharedConnection, SharedScript


def _shared(valkey: str) -> tuple[Redis, SharedConnection]:
    redis = counted_redis(valkey)
    return redis, SharedConnection(redis.connection_pool)


async def _drop(redis: Redis, shared: SharedConnection) -> None:
    await shared.aclose()
    await redis.aclose()


def test_each_task_gets_its_own_reply_and_a_turns_commands_share_one_write(valkey):
    """The commands queued in one turn of the loop go out together, in one write at the start
    of the next turn (each write wakes Redis): 400 commands of 200 tasks in a few writes,
    each task still answered its own replies."""

    async def scenario():
        redis, shared = _shared(valkey)
        await shared.execute("PING")
        writes = Counted.round_trips

        async def one(i: int):
            await shared.execute("SET", f"test:shared:{i}", i)
            return await shared.execute("INCRBY", f"test:shared:{i}", i)

        replies = await asyncio.gather(*(one(i) for i in range(200)))
        writes = Counted.round_trips - writes
        before = Counted.round_trips
        sent = shared.send(("INCR", "test:shared:0"), ("GET", "test:shared:0"))
        more = shared.send(("GET", "test:shared:1"))
        queued = Counted.round_trips - before
        await asyncio.sleep(0)
        written = Counted.round_trips - before
        together = await shared.replies(sent) + await shared.replies(more)
        await _drop(redis, shared)
        return replies, writes, queued, written, together

    replies, writes, queued, written, together = asyncio.run(scenario())
    assert replies == [2 * i for i in range(200)]
    assert writes <= 10, writes
    assert (queued, written) == (0, 1) and together == [1, b"1", b"2"]


def test_an_error_reply_is_its_commands_alone(valkey):
    async def scenario():
        redis, shared = _shared(valkey)
        await shared.execute("SET", "test:shared:text", "not a number")
        many = await shared.execute_many(
            ("SET", "test:shared:n", 1), ("INCR", "test:shared:text"), ("INCR", "test:shared:n")
        )
        with pytest.raises(NoScriptError):  # redis-py's exception classes, as from the client
            await shared.execute("EVALSHA", "0" * 40, 0)
        after = await shared.execute("GET", "test:shared:n")
        await _drop(redis, shared)
        return many, after

    many, after = asyncio.run(scenario())
    assert many[0] is True or many[0] == b"OK"
    assert isinstance(many[1], ResponseError) and "not an integer" in str(many[1])
    assert many[2] == 2
    assert after == b"2"


def test_a_killed_connection_fails_what_waits_and_the_next_command_connects_again(valkey):
    async def scenario():
        redis, shared = _shared(valkey)
        my_id = await shared.execute("CLIENT", "ID")
        await redis.ping()  # the pool's own connection, for the kill, made before counting
        connects = Counted.connects
        # a command that waits in Redis (the list is empty) while the connection is killed
        waiting = asyncio.create_task(shared.execute("BLPOP", "test:shared:never", 5))
        await asyncio.sleep(0.1)
        await redis.execute_command("CLIENT", "KILL", "ID", my_id)
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(waiting, 2)
        again = await shared.execute("PING")
        connects = Counted.connects - connects
        await _drop(redis, shared)
        return again, connects

    again, connects = asyncio.run(scenario())
    assert again is True or again == b"PONG"
    assert connects == 1  # the shared connection, again


def test_a_command_given_up_drops_the_connection_so_no_later_reply_goes_astray(valkey):
    async def scenario():
        redis, shared = _shared(valkey)
        first_id = await shared.execute("CLIENT", "ID")
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await shared.execute("BLPOP", "test:shared:never", 3)
        began = time.monotonic()
        # were the connection kept, this would wait behind the BLPOP, then get its reply
        second_id = await shared.execute("CLIENT", "ID")
        waited = time.monotonic() - began
        value = await shared.execute("ECHO", "mine")
        await _drop(redis, shared)
        return first_id, second_id, waited, value

    first_id, second_id, waited, value = asyncio.run(scenario())
    assert second_id != first_id
    assert waited < 1
    assert value == b"mine"


def test_closing_fails_the_waiting_commands(valkey):
    async def scenario():
        redis, shared = _shared(valkey)
        waiting = asyncio.create_task(shared.execute("BLPOP", "test:shared:never", 5))
        await asyncio.sleep(0.1)
        await shared.aclose()
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(waiting, 2)
        await redis.aclose()

    asyncio.run(scenario())


def test_a_commit_reloads_its_script_after_a_flush(valkey):
    """The commit's EVALSHA meets NOSCRIPT on a fresh or flushed server, loads it, goes on."""

    async def scenario():
        redis = Redis.from_url(valkey)
        store = GameStore(redis)
        game_id = "shared-noscript"
        await redis.delete(*[f"{{game:{game_id}}}:{k}" for k in ("doc", "decisions", "events")])
        await redis.script_flush()
        sent = store.send_commit(game_id, "", "v1", b"doc", events=[b"{}"], deadline=False)
        ids = await store.committed(sent)
        loaded = await store.load(game_id)
        with contextlib.suppress(Exception):
            await redis.delete(*[f"{{game:{game_id}}}:{k}" for k in ("doc", "decisions", "events")])
        await store.aclose()
        await redis.aclose()
        return ids, loaded

    ids, loaded = asyncio.run(scenario())
    assert len(ids) == 1
    assert loaded.version == "v1" and loaded.blob == b"doc" and loaded.last_event_id == ids[0]


def test_a_shared_script_loads_itself_after_a_flush(valkey):
    """The league's and the limits' scripts (``SharedScript``) meet NOSCRIPT on a flushed
    server, load it once, and answer."""

    async def scenario():
        redis = Redis.from_url(valkey)
        shared = SharedConnection(redis.connection_pool)
        script = SharedScript(shared, redis, "return {KEYS[1], ARGV[1]}", Patience(5))
        await redis.script_flush()
        first = await script(["shared-script"], ["7"])
        again = await script(["shared-script"], ["8"])
        await shared.aclose()
        await redis.aclose()
        return first, again

    assert asyncio.run(scenario()) == ([b"shared-script", b"7"], [b"shared-script", b"8"])


def test_a_command_unanswered_past_the_deadline_ends_the_connection(valkey):
    """One watchdog per connection keeps the commands' deadlines: Redis holding a reply
    (here a BLPOP on an empty list) past it fails what waits with a TimeoutError; for a
    quarter of the deadline after, commands fail at once, then one connects again."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    async def scenario():
        redis = counted_redis(valkey)
        shared = SharedConnection(redis.connection_pool, timeout_s=0.4)
        first_id = await shared.execute("CLIENT", "ID")
        began = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            await shared.execute("BLPOP", "test:shared:never", 5)
        waited = time.monotonic() - began
        with pytest.raises(RedisConnectionError, match="did not answer just now"):
            await shared.execute("CLIENT", "ID")
        await asyncio.sleep(0.4 / 4 + 0.05)
        second_id = await shared.execute("CLIENT", "ID")
        await _drop(redis, shared)
        return first_id, second_id, waited

    first_id, second_id, waited = asyncio.run(scenario())
    assert 0.4 <= waited < 1.5
    assert second_id != first_id


def test_while_the_socket_is_full_commands_wait_and_leave_together_when_it_drains(valkey):
    """The transport says its buffer is full (``pause_writing``): commands queue, nothing is
    written, and ``resume_writing`` sends them in one write, answered in order."""

    async def scenario():
        redis, shared = _shared(valkey)
        await shared.execute("PING")
        replies = shared._connection._writer.transport.get_protocol()
        replies.pause_writing()
        before = Counted.round_trips
        waiting = [asyncio.ensure_future(shared.execute("ECHO", str(n))) for n in range(3)]
        await asyncio.sleep(0.05)
        held = Counted.round_trips - before, [future.done() for future in waiting]
        replies.resume_writing()
        answers = await asyncio.gather(*waiting)
        sent = Counted.round_trips - before
        await _drop(redis, shared)
        return held, sent, answers

    held, sent, answers = asyncio.run(scenario())
    assert held == (0, [False, False, False])
    assert sent == 1 and answers == [b"0", b"1", b"2"]
