"""redis-py's private names that the store relies on (``referee/store/_private.py``), pinned:
an upgrade of redis-py that drops or changes one fails here, naming it, not in production.
pyproject.toml bounds redis-py's versions to those this was checked with."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from redis.asyncio import Redis
from redis.exceptions import MovedError, NoScriptError, ResponseError

from referee.store import _private
from referee.store.connection import TakenOver


def test_the_installed_redis_py_is_within_the_pinned_range():
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    (pinned,) = [
        Requirement(r) for r in pyproject["project"]["dependencies"] if r.startswith("redis")
    ]
    assert pinned.specifier.filter([version("redis")]), (version("redis"), str(pinned))
    assert any(s.operator == "<" for s in pinned.specifier), "no upper bound on redis-py"


def test_every_private_name_is_where_the_store_takes_it():
    for owner, name in _private.PRIVATE_NAMES:
        module, _, cls = owner.rpartition(".")
        holder = getattr(importlib.import_module(module), cls)
        if name.startswith("_"):  # an instance's attribute, set by its __init__
            source = inspect.getsource(holder.__init__)
            assert f"self.{name} " in source or f"self.{name}:" in source, f"{owner}.{name}"
        else:
            assert callable(getattr(holder, name, None)), f"{owner}.{name} is gone"


def test_parse_error_turns_an_error_reply_into_redis_pys_exception_classes():
    assert list(inspect.signature(_private.parse_error).parameters) == ["response"]
    assert isinstance(_private.parse_error("NOSCRIPT No matching script."), NoScriptError)
    moved = _private.parse_error("MOVED 3999 127.0.0.1:6381")
    assert isinstance(moved, MovedError) and (moved.slot_id, moved.port) == (3999, 6381)
    assert type(_private.parse_error("ERR unknown")) is ResponseError


def test_a_connected_connection_writes_through_its_stream_writer_on_a_transport(valkey):
    """What the shared and hearing connections take over: the connection's stream writer
    (``_writer``) and its transport, whose protocol redis-py's stream reads from until then."""

    class Heard(TakenOver):
        def __init__(self) -> None:
            super().__init__()
            self.replies: asyncio.Queue = asyncio.Queue()

        def reply(self, reply):
            self.replies.put_nowait(reply)

        def broken(self, error):
            self.replies.put_nowait(error)

    async def scenario():
        redis = Redis.from_url(valkey)
        connection = redis.connection_pool.make_connection()
        await connection.connect()
        writer = connection._writer
        stream = _private.transport_of(connection).get_protocol()
        heard = Heard()
        heard.take_over(connection)
        _private.write(connection, ("PING",))
        _private.write_packed(connection, [b"*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n"])
        replies = [await asyncio.wait_for(heard.replies.get(), 5) for _ in range(2)]
        await connection.disconnect()
        await redis.aclose()
        return writer, stream, replies

    writer, stream, replies = asyncio.run(scenario())
    assert isinstance(writer, asyncio.StreamWriter)
    assert isinstance(stream, asyncio.StreamReaderProtocol)
    assert replies == [b"PONG", b"hi"]
