"""HTTP tests run real servers (uvicorn) against a real embedded Valkey, never a mock."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass

import httpx
import msgspec
import pytest
import redis
import uvicorn

from referee.cli import UVICORN_OPTIONS
from referee.settings import Settings
from referee.store.embedded import start_embedded
from referee.tools.launch import LOAD_LIMITS, free_port, start_referee
from referee.web import create_app, hot


@pytest.fixture(scope="session")
def valkey(tmp_path_factory):
    server = start_embedded(tmp_path_factory.mktemp("valkey"))
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def redis_client(valkey):
    client = redis.Redis.from_url(valkey)
    yield client
    client.close()


#: the tests' bots share one address and never think: limits as high as their load, as the
#: bench's (the limits' own tests set theirs)
LOADED = Settings.from_env(LOAD_LIMITS)


class ThreadServer:
    """The app served by uvicorn in a thread of the test process, on a real port."""

    def __init__(self, redis_url: str, port: int | None = None, **settings: object) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        settings = msgspec.structs.replace(
            LOADED, redis_url=redis_url, sweep_interval_s=0.1, **settings
        )
        config = uvicorn.Config(
            create_app(settings),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            **UVICORN_OPTIONS,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the referee did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def server(valkey):
    with ThreadServer(valkey) as running:
        yield running


@dataclass(frozen=True)
class LiarsReferee:
    """A referee process with the Liar's dice distribution installed (its folder and a
    ``.dist-info`` made from its pyproject.toml on the path, as tests/test_liars_dice_plugin.py
    installs it): ``path`` is that PYTHONPATH, for the processes a test starts beside it."""

    url: str
    path: str
    distribution: tuple[str, str]


@pytest.fixture(scope="session")
def liars_referee(tmp_path_factory):
    """A referee with the plug-in installed, on a Valkey of its own: its games must not show
    in the listings of the suite's other referees, whose contract does not know the ruleset."""
    from test_liars_dice_plugin import EXAMPLE, _dist_info

    root = tmp_path_factory.mktemp("liars-dice-installed")
    distribution = _dist_info(root)
    path = os.pathsep.join([str(root), str(EXAMPLE), *sys.path])
    own = start_embedded(tmp_path_factory.mktemp("liars-valkey"))
    # the bench's limits, as the suite's other servers: the tests' bots never think
    process, url = start_referee(own.url, env={**LOAD_LIMITS, "PYTHONPATH": path})
    try:
        yield LiarsReferee(url, path, distribution)
    finally:
        process.terminate()
        process.wait(timeout=10)
        own.stop()


@pytest.fixture(scope="session")
def handlers_only(valkey):
    """A replica on the same store whose handlers answer everything (no hot routes)."""
    with ThreadServer(valkey, fast_routes=False) as running:
        yield running


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


class ProcessServer:
    """The referee in a process of its own (to kill it, or to run several replicas)."""

    def __init__(self, redis_url: str, env: dict[str, str] | None = None) -> None:
        env = {**LOAD_LIMITS, "REFEREE_SWEEP_INTERVAL_S": "0.05", **(env or {})}
        self.process, self.url = start_referee(redis_url, env=env)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def process_server(valkey):
    started = []

    def start():
        started.append(ProcessServer(valkey))
        return started[-1]

    yield start
    for proc in started:
        proc.kill()


@pytest.fixture
def fast_answers(monkeypatch):
    """The statuses of the answers the hot routes sent themselves (``web.hot``), but to
    creations (``fast_answers.created``: those alone)."""
    sent = _HotAnswers()
    real = hot.answered

    async def counted(*args):
        answer = await real(*args)
        if answer is not None:
            asked = args[1][1]
            (sent.created if asked == hot.CREATE else sent).append(answer[0])
        return answer

    monkeypatch.setattr(hot, "answered", counted)
    return sent


class _HotAnswers(list):
    def __init__(self) -> None:
        super().__init__()
        self.created: list[int] = []
