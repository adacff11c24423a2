"""The shared connection on a Redis Cluster: one ``SharedConnection`` per primary, each command
sent to the primary that serves its key's slot, redirections followed.

A game's keys share one hash tag, so its reads and its commit go to one primary, on one
connection, in the order they were queued, as on a single Redis. The other commands of a
commit (the deadline hint, an owner's live games) are keys of their own slots and go to
theirs in the same turn of the loop; their replies come back in the caller's order.

The slot table is read once (``CLUSTER SLOTS``) and corrected as the cluster answers:

- ``MOVED <slot> <node>``: the slot has a new primary for good; the table says so and the
  command goes there. Nothing ran.
- ``ASK <slot> <node>``: the slot is being moved and this key has gone already; the command
  goes there once, after ``ASKING``. Nothing ran where it was refused.
- ``TRYAGAIN``: a command whose keys are split between the two primaries of a moving slot
  (a commit's three keys, half moved); it is sent again a little later until the move is
  done, within the store's deadline. Nothing ran.
- ``CLUSTERDOWN``: a slot has no primary for a moment (a failover); the same.

A lost connection to a primary fails its commands as on a single Redis (the caller retries
safely: a commit checks its version) and has the table read again before the next command.
"""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

from redis.asyncio.connection import ConnectionPool
from redis.crc import key_slot
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ConnectionError,
    MovedError,
    ResponseError,
    TimeoutError,
    TryAgainError,
)

from .connection import Commands, Patience, Sent, SharedConnection

__all__ = ["SLOTS", "ClusterConnection", "ClusterSent", "part_for", "slot_of", "spread"]

SLOTS = 16384
_REDIRECTED = (AskError, TryAgainError, ClusterDownError)  # MovedError is an AskError
_KEYED_AT_3 = frozenset({"EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO", "FCALL", "FCALL_RO"})


def slot_of(key: str | bytes) -> int:
    """The cluster slot of ``key`` (its hash tag's, if it has one)."""
    return key_slot(key.encode() if isinstance(key, str) else key)


def spread(prefix: str, count: int = 16) -> tuple[str, ...]:
    """``count`` keys named ``prefix:{tag}``, the i-th in the i-th of ``count`` equal ranges
    of slots: one global set split so that no primary holds all of it (each primary holds
    the parts in its slots); ``part_for`` says which part a key's entries go to."""
    keys = []
    for i in range(count):
        low, high = i * SLOTS // count, (i + 1) * SLOTS // count
        n = 0
        while not low <= slot_of(f"{{{i}.{n}}}") < high:
            n += 1
        keys.append(f"{prefix}:{{{i}.{n}}}")
    return tuple(keys)


def part_for(parts: tuple[str, ...], key: str) -> str:
    """The part of a ``spread`` set whose slot range holds ``key``'s slot: on a cluster whose
    primaries hold ranges of slots, most often on the same primary as ``key`` itself."""
    return parts[slot_of(key) * len(parts) // SLOTS]


def _key_of(command: tuple[Any, ...]) -> str | bytes | None:
    """The key a command is routed by: a script's first key, else its first argument."""
    name = command[0].upper() if isinstance(command[0], str) else command[0].decode().upper()
    if name in _KEYED_AT_3:
        return command[3] if int(command[2]) > 0 else None
    if name in ("PING", "ASKING", "SCRIPT", "CLUSTER", "INFO", "PUBLISH"):
        return None
    return command[1] if len(command) > 1 else None


def _refused(replies: list[Any]) -> list[int]:
    """The places of the replies that redirect or refuse for now (nothing ran there)."""
    return [i for i, reply in enumerate(replies) if isinstance(reply, _REDIRECTED)]


class ClusterSent(NamedTuple):
    """Commands queued on the primaries' connections: per part, its connection, what was
    sent and the places of its commands among ``commands``."""

    commands: tuple[tuple[Any, ...], ...]
    parts: list[tuple[SharedConnection, Sent, list[int]]]


class ClusterConnection(Commands):
    """``SharedConnection``'s interface over the primaries of a cluster.

    ``seed`` is a pool for one node (the URL's): the others are reached with its connection
    settings (password, TLS) at the addresses the cluster gives.
    """

    def __init__(
        self, seed: ConnectionPool, timeout_s: float = 10, patience: Patience | None = None
    ) -> None:
        self._kwargs = {
            k: v for k, v in seed.connection_kwargs.items() if k not in ("host", "port")
        }
        self._connection_class = seed.connection_class
        self._seed = f"{seed.connection_kwargs['host']}:{seed.connection_kwargs['port']}"
        self._timeout_s = timeout_s
        self._patience = patience or Patience(timeout_s)  # every primary's connection's
        self._slots: list[str] = []  # slot -> "host:port" of its primary; empty until read
        self._nodes: dict[str, SharedConnection] = {}
        self._reading: asyncio.Task[Any] | None = None

    # -- the slot table ---------------------------------------------------------------------

    def _node(self, address: str) -> SharedConnection:
        node = self._nodes.get(address)
        if node is None:
            host, _, port = address.rpartition(":")
            pool = ConnectionPool(
                connection_class=self._connection_class,
                host=host,
                port=int(port),
                **self._kwargs,
            )
            node = self._nodes[address] = SharedConnection(pool, self._timeout_s, self._patience)
        return node

    async def refresh(self) -> None:
        """Read the slot table again (one read at a time; callers meanwhile share it)."""
        if self._reading is None or self._reading.done():
            self._reading = asyncio.ensure_future(self._read_slots())
        await asyncio.shield(self._reading)

    async def _read_slots(self) -> None:
        known = [self._seed, *(a for a in self._nodes if a != self._seed)]
        error: BaseException | None = None
        for address in known:
            try:
                ranges = await self._node(address).execute("CLUSTER", "SLOTS")
            except (ConnectionError, TimeoutError, ResponseError) as exc:
                error = exc
                continue
            slots = [""] * SLOTS
            for start, end, primary, *_ in ranges:
                host = primary[0].decode() or address.rpartition(":")[0]
                slots[start : end + 1] = [f"{host}:{primary[1]}"] * (end - start + 1)
            self._slots = slots
            return
        raise ConnectionError(f"no node of the cluster answers CLUSTER SLOTS: {error!r}")

    def _address(self, command: tuple[Any, ...]) -> str:
        """Its slot's primary; the seed node while the table is unread (it redirects)."""
        key = _key_of(command)
        slots = self._slots
        if not slots:  # dropped by a lost connection meanwhile: read again on the next call
            return self._seed
        return (slots[0] if key is None else slots[slot_of(key)]) or self._seed

    def _route(self, commands: tuple[tuple[Any, ...], ...]) -> dict[str, list[int]]:
        routes: dict[str, list[int]] = {}
        for i, command in enumerate(commands):
            routes.setdefault(self._address(command), []).append(i)
        return routes

    # -- SharedConnection's interface -------------------------------------------------------

    async def execute_many(self, *commands: tuple[Any, ...]) -> list[Any]:
        if not self._slots:
            await self.refresh()
        routes = self._route(commands)
        if len(routes) == 1:
            ((address, _),) = routes.items()
            replies = await self._sent_to(address, commands)
        else:
            parts = await asyncio.gather(
                *(self._sent_to(a, tuple(commands[i] for i in at)) for a, at in routes.items())
            )
            replies = [None] * len(commands)
            for at, got in zip(routes.values(), parts, strict=True):
                for i, reply in zip(at, got, strict=True):
                    replies[i] = reply
        return await self._redirected(commands, replies)

    async def _sent_to(self, address: str, commands: tuple[tuple[Any, ...], ...]) -> list[Any]:
        try:
            return await self._node(address).execute_many(*commands)
        except ConnectionError:
            self._slots = []  # a primary may have failed over: read the table again
            raise

    def send(self, *commands: tuple[Any, ...]) -> ClusterSent | None:
        """Queue commands on their primaries now; None (nothing queued) until the table is
        read and every primary they need is connected (``execute_many`` does both)."""
        if not self._slots:
            return None
        routes = self._route(commands)
        nodes = [self._node(address) for address in routes]
        if not all(node.connected for node in nodes):
            return None
        parts = []
        for node, at in zip(nodes, routes.values(), strict=True):
            sent = node.send(*(commands[i] for i in at))
            assert sent is not None  # connected just now, in this same turn of the loop
            parts.append((node, sent, at))
        return ClusterSent(commands, parts)

    async def replies(self, sent: ClusterSent) -> list[Any]:
        replies: list[Any] = [None] * len(sent.commands)
        try:
            for node, part, at in sent.parts:
                for i, reply in zip(at, await node.replies(part), strict=True):
                    replies[i] = reply
        except ConnectionError:
            self._slots = []
            raise
        return await self._redirected(sent.commands, replies)

    async def _redirected(
        self, commands: tuple[tuple[Any, ...], ...], replies: list[Any]
    ) -> list[Any]:
        """``replies`` with every redirection followed until the command ran somewhere."""
        again = _refused(replies)
        if not again:  # nearly always: nothing more to do
            return replies
        deadline = asyncio.get_running_loop().time() + self._timeout_s
        pause = 0.002
        while again:
            for i in again:
                refused, command = replies[i], commands[i]
                if isinstance(refused, MovedError):
                    address = self._moved_to(refused)
                    if self._slots:  # else it is read anew, MOVED included
                        self._slots[refused.slot_id] = address
                    (replies[i],) = await self._sent_to(address, (command,))
                elif isinstance(refused, AskError):
                    address = self._moved_to(refused)
                    _, replies[i] = await self._sent_to(address, (("ASKING",), command))
                else:  # TRYAGAIN, CLUSTERDOWN: the same command, a moment later
                    if asyncio.get_running_loop().time() > deadline:
                        return replies  # the caller sees the refusal
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 0.1)
                    if isinstance(refused, ClusterDownError):
                        await self.refresh()
                    (replies[i],) = await self._sent_to(self._address(command), (command,))
            again = _refused(replies)
        return replies

    def _moved_to(self, refused: AskError) -> str:
        host = refused.host or self._seed.rpartition(":")[0]
        return f"{host}:{refused.port}"

    async def primary_of(self, key: str | bytes) -> tuple[str, ConnectionPool]:
        """The address of the primary that serves ``key``'s slot, as the table says (read
        first if need be), and a pool for it (its connections' settings)."""
        if not self._slots:
            await self.refresh()
        address = (self._slots[slot_of(key)] if self._slots else "") or self._seed
        return address, self._node(address).pool

    def forget_slots(self) -> None:
        """A primary did not answer (it may have failed over): the table is read again
        before the next command."""
        self._slots = []

    def moved(self, refused: AskError) -> None:
        """A ``MOVED`` met elsewhere (a subscription): the table says so from now on."""
        if self._slots and isinstance(refused, MovedError):
            self._slots[refused.slot_id] = self._moved_to(refused)
        else:
            self._slots = []  # read again before the next command

    async def aclose(self) -> None:
        for node in list(self._nodes.values()):
            await node.aclose()
