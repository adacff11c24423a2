"""uvicorn's private names that the referee's protocol rests on (``web.uvicorn_private``): each
is checked here against the uvicorn installed, and ``web.serving`` and ``web.bounded`` (the
protocol's two layers) may use no other, so that
an upgrade that moves one fails this test, loudly, instead of a request."""

from __future__ import annotations

import ast
import asyncio
import inspect
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from uvicorn.config import Config
from uvicorn.server import ServerState

import referee
from referee.web import uvicorn_private as private

ROOT = Path(referee.__file__).parent
#: the modules of the referee's protocol, the only ones that touch uvicorn's protocol and cycle
PROTOCOL_MODULES = (ROOT / "web" / "serving.py", ROOT / "web" / "bounded.py")


class _Transport(asyncio.Transport):
    """What a protocol is told of its connection: addresses, and nothing written."""

    def get_extra_info(self, name: str, default: object = None) -> object:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.2", 5000)}.get(name, default)


async def _app(scope: object, receive: object, send: object) -> None:
    pass


@pytest.fixture
def protocol():
    """uvicorn's own protocol, its connection made and a request begun, as ``PublicHttp``
    finds it in the callbacks it overrides."""
    loop = asyncio.new_event_loop()
    config = Config(app=_app, http="httptools", log_config=None)
    made = private.HttpToolsProtocol(config, ServerState(), {}, _loop=loop)
    made.connection_made(_Transport())
    made.on_message_begin()
    yield made
    loop.close()


def _cycle() -> private.RequestResponseCycle:
    arguments = dict.fromkeys(private.CYCLE_PARAMETERS)
    arguments.update(
        scope={}, access_log=False, default_headers=[], expect_100_continue=False, keep_alive=True
    )
    return private.RequestResponseCycle(**arguments)


def test_the_installed_uvicorn_is_in_the_range_pinned():
    """The range in pyproject.toml is the one these checks passed on: widen it only with
    them passing."""
    project = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["project"]
    (pinned,) = [
        Requirement(r) for r in project["dependencies"] if Requirement(r).name == "uvicorn"
    ]
    assert pinned.specifier, "uvicorn's range is not pinned"
    assert version("uvicorn") in pinned.specifier, (version("uvicorn"), str(pinned.specifier))


@pytest.mark.parametrize("name", sorted(private.PROTOCOL_METHODS))
def test_each_method_of_uvicorns_protocol_is_there_with_its_parameters(name):
    method = getattr(private.HttpToolsProtocol, name, None)
    assert callable(method), f"uvicorn's HttpToolsProtocol has no {name}()"
    parameters = tuple(inspect.signature(method).parameters)[1:]
    assert parameters == private.PROTOCOL_METHODS[name], (name, parameters)


def test_each_attribute_of_uvicorns_protocol_is_there_once_a_request_began(protocol):
    missing = [name for name in private.PROTOCOL_ATTRIBUTES if not hasattr(protocol, name)]
    assert not missing, f"uvicorn's HttpToolsProtocol no longer has {missing}"


def test_uvicorns_protocol_keeps_a_request_as_serving_reads_it(protocol):
    """What ``PublicHttp`` relies on uvicorn's own callbacks for: a target gathered in
    ``url``, lower-case field names in ``headers`` (the hot routes' token, a body's
    Content-Length), that list in the scope (a client's address), ``Expect`` noted."""
    assert protocol.url == b"" and protocol.headers == []
    protocol.on_url(b"/v1/games/")
    protocol.on_url(b"g/turn")
    protocol.on_header(b"Content-Length", b"12")
    protocol.on_header(b"Expect", b"100-Continue")
    assert protocol.url == b"/v1/games/g/turn"
    assert protocol.headers == [(b"content-length", b"12"), (b"expect", b"100-Continue")]
    assert protocol.scope["headers"] is protocol.headers
    assert protocol.expect_100_continue is True


def test_a_cycle_of_uvicorns_takes_its_parameters_by_name_and_has_what_serving_reads():
    parameters = tuple(inspect.signature(private.RequestResponseCycle).parameters)
    assert set(parameters) == set(private.CYCLE_PARAMETERS), parameters
    cycle = _cycle()
    missing = [name for name in private.CYCLE_ATTRIBUTES if not hasattr(cycle, name)]
    assert not missing, f"uvicorn's RequestResponseCycle no longer has {missing}"
    assert inspect.iscoroutinefunction(cycle.run_asgi)


def test_uvicorns_server_state_has_what_serving_reads():
    state = ServerState()
    missing = [name for name in private.SERVER_STATE_ATTRIBUTES if not hasattr(state, name)]
    assert not missing, f"uvicorn's ServerState no longer has {missing}"
    assert isinstance(state.total_requests, int)


def test_uvicorns_helpers_answer_as_serving_uses_them():
    assert private.STATUS_LINE[200] == b"HTTP/1.1 200 OK\r\n"
    assert private.STATUS_LINE[431].startswith(b"HTTP/1.1 431 ")
    assert private.get_client_addr({"client": ("10.0.0.1", 5000)}) == "10.0.0.1:5000"
    scope = {"root_path": "", "path": "/v1/games/g/turn", "query_string": b"wait=1"}
    assert private.get_path_with_query_string(scope) == "/v1/games/g/turn?wait=1"


def _uses(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The attributes serving.py uses on a protocol (``self.x``, ``protocol.x``,
    ``super().x``) and on a cycle (``cycle.x``, ``handed.x``, ``current.x``,
    ``self.cycle.x``)."""
    on_protocol, on_cycle = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        value = node.value
        named = value.id if isinstance(value, ast.Name) else None
        if named in ("self", "protocol") or (
            isinstance(value, ast.Call) and getattr(value.func, "id", None) == "super"
        ):
            on_protocol.add(node.attr)
        if named in ("cycle", "handed", "current") or (
            isinstance(value, ast.Attribute) and value.attr == "cycle"
        ):
            on_cycle.add(node.attr)
    return on_protocol, on_cycle


def test_serving_uses_no_name_of_uvicorns_that_is_not_listed(protocol):
    """Every name of uvicorn's protocol or cycle that web/serving.py or web/bounded.py
    touches is one that ``uvicorn_private`` lists (and the tests above check)."""
    on_protocol, on_cycle = set(), set()
    for path in PROTOCOL_MODULES:
        protocol_names, cycle_names = _uses(ast.parse(path.read_text()))
        on_protocol |= protocol_names
        on_cycle |= cycle_names
    listed = set(private.PROTOCOL_ATTRIBUTES) | set(private.PROTOCOL_METHODS)
    theirs = {name for name in on_protocol if hasattr(protocol, name)}
    assert theirs - listed == set(), "unlisted names of uvicorn's protocol"
    cycle = _cycle()
    theirs = {name for name in on_cycle if hasattr(cycle, name)}
    assert theirs - set(private.CYCLE_ATTRIBUTES) == set(), "unlisted names of uvicorn's cycle"


def test_only_uvicorn_private_imports_uvicorns_protocols():
    importers = set()
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            if any(name.startswith("uvicorn.protocols") for name in names):
                importers.add(path.relative_to(ROOT).as_posix())
    assert importers == {"web/uvicorn_private.py"}
