"""uvicorn's private names that the referee's HTTP protocol (``web.serving``, on
``web.bounded``) rests on, all in one place, each listed with what the protocol uses of it.

uvicorn has no public way to change how a request is read or to answer one without an ASGI
cycle: its one extension point is the protocol class (``http=``), and ``PublicHttp`` is a
subclass of its httptools protocol, for speed (the hot routes answered at the protocol: 10 %
fewer instructions per game request when it was made, benchmarks/results/README.md) and for
the edge's limits. What that subclass reads,
sets, calls or overrides of uvicorn's is named here, and
``tests/test_uvicorn_private.py`` checks each name and signature against the uvicorn
installed (and that the protocol uses no other), so an upgrade that moves any of them
fails that test rather than a request; pyproject.toml pins uvicorn's range to the versions
checked.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

__all__ = [
    "CYCLE_ATTRIBUTES",
    "CYCLE_PARAMETERS",
    "PROTOCOL_ATTRIBUTES",
    "PROTOCOL_METHODS",
    "SERVER_STATE_ATTRIBUTES",
    "STATUS_LINE",
    "HttpToolsProtocol",
    "RequestResponseCycle",
    "get_client_addr",
    "get_path_with_query_string",
]

#: the protocol's attributes that ``PublicHttp`` reads or sets (as uvicorn has them once a
#: connection is made and a request begun)
PROTOCOL_ATTRIBUTES = (
    "access_log",
    "access_logger",
    "app",
    "client",
    "cycle",
    "expect_100_continue",
    "flow",
    "headers",
    "limit_concurrency",
    "logger",
    "loop",
    "parser",
    "pipeline",
    "root_path",
    "scope",
    "server_state",
    "tasks",
    "timeout_keep_alive",
    "transport",
    "url",
)

#: the protocol's methods that ``PublicHttp`` calls or overrides, with their parameters
#: (``self`` aside); httptools calls the ``on_*`` ones by these names
PROTOCOL_METHODS = {
    "connection_made": ("transport",),
    "connection_lost": ("exc",),
    "data_received": ("data",),
    "on_message_begin": (),
    "on_url": ("url",),
    "on_header": ("name", "value"),
    "on_headers_complete": (),
    "on_body": ("body",),
    "on_message_complete": (),
    "on_response_complete": (),
    "eof_received": (),
    "resume_writing": (),
    "shutdown": (),
    "handle_websocket_upgrade": (),
    "send_400_response": ("msg",),
    "timeout_keep_alive_handler": (),
    "_start_asgi_task": ("cycle", "app"),
    "_should_upgrade": (),
    "_unset_keepalive_if_required": (),
    "_unsupported_upgrade_warning": (),
}

#: ``RequestResponseCycle``'s parameters, all given by keyword (``PublicHttp._hand_over``)
CYCLE_PARAMETERS = (
    "scope",
    "transport",
    "flow",
    "logger",
    "access_logger",
    "access_log",
    "default_headers",
    "message_event",
    "expect_100_continue",
    "keep_alive",
    "on_response",
)

#: what ``PublicHttp`` reads or sets on a cycle of uvicorn's (``_HotCycle`` stands in for one
#: with the same names)
CYCLE_ATTRIBUTES = (
    "body",
    "disconnected",
    "keep_alive",
    "message_event",
    "more_body",
    "response_complete",
    "response_started",
    "run_asgi",
    "scope",
)

#: what ``PublicHttp`` reads or counts on uvicorn's ``ServerState`` (``server_state``)
SERVER_STATE_ATTRIBUTES = ("default_headers", "total_requests")
