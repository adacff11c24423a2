"""Every use of redis-py's private names, in one place (issue 35).

The shared connection and the hearing connections let redis-py connect (AUTH, SELECT, TLS
from the URL) and then write to its connection's stream writer themselves, and read its
transport in their own protocol; error replies become redis-py's exception classes through
its parser's ``parse_error``. None of this is redis-py's public API: the version range is
pinned in pyproject.toml, and ``tests/service/test_redis_private.py`` fails loudly, naming
the name, if an upgrade drops or changes any of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from hiredis import pack_command
from redis._parsers.base import BaseParser
from redis.asyncio.connection import AbstractConnection

__all__ = ["PRIVATE_NAMES", "parse_error", "transport_of", "write", "write_packed"]

#: what this module relies on, for its test: (owner, attribute)
PRIVATE_NAMES = (
    ("redis._parsers.base.BaseParser", "parse_error"),
    ("redis.asyncio.connection.AbstractConnection", "_writer"),
)

#: an error reply's text -> redis-py's exception (NOSCRIPT a NoScriptError, MOVED a
#: MovedError, …), as redis-py itself parses it
parse_error: Callable[[str], Exception] = BaseParser.parse_error


def _writer(connection: AbstractConnection) -> asyncio.StreamWriter:
    writer = connection._writer
    if writer is None:
        raise ConnectionError("the connection is not connected")
    return writer


def transport_of(connection: AbstractConnection) -> asyncio.Transport:
    """The connected connection's transport (its protocol may be replaced)."""
    return _writer(connection).transport  # type: ignore[return-value]  # a socket's


def write(connection: AbstractConnection, args: tuple[Any, ...]) -> None:
    """One command, packed by hiredis, written now."""
    _writer(connection).write(pack_command(args))


def write_packed(connection: AbstractConnection, packed: Iterable[bytes]) -> None:
    """Commands packed already (``hiredis.pack_command``), written in one call."""
    _writer(connection).writelines(packed)
