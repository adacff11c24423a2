"""Creating a plain game (named, open and house seats only) touches nothing of webhooks or
bot accounts: no task follows its webhook seats, no registration is read. Every game created
over HTTP used to start such a follow, costing a Redis round trip and leaving an entry behind
in the process for good. Watched from outside, with the real server's MONITOR."""

from __future__ import annotations

import threading
import time
import uuid

import redis
from helpers import create


class _Monitor:
    """Every command the server runs while it lasts, as MONITOR prints it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = redis.Redis.from_url(url)
        self.commands: list[str] = []
        self._stop = f"stop-{uuid.uuid4().hex}"
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        with self.client.monitor() as monitor:
            self._ready.set()
            while True:
                command = monitor.next_command()["command"]
                if self._stop in command:
                    return
                self.commands.append(command)

    def __enter__(self) -> _Monitor:
        self._thread.start()
        self._ready.wait(10)
        time.sleep(0.1)  # MONITOR answered before the first command is watched
        return self

    def __exit__(self, *exc: object) -> None:
        with redis.Redis.from_url(self.url) as other:
            other.echo(self._stop)
        self._thread.join(10)
        self.client.close()


def test_a_plain_game_reads_no_webhook_registrations(http, valkey):
    with _Monitor(valkey) as monitor:
        created = create(http, "choice", [{"name": "a"}, {"name": "b"}, {"bot": "random"}])
        gid = created["id"]
        for seat in created["seats"][:2]:
            turn = http.get(
                f"/v1/games/{gid}/turn", headers={"Authorization": f"Bearer {seat['token']}"}
            )
            assert turn.status_code == 200
        time.sleep(0.3)  # a follow started by the creation would have run by now
    webhooks = [c for c in monitor.commands if f"{{game:{gid}}}:webhooks" in c]
    assert not webhooks, webhooks
    assert any(gid in c for c in monitor.commands), "the monitor saw nothing of the game"
