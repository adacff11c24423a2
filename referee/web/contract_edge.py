"""What every operation of the contract may be answered at the HTTP edge, whatever it does
(``EDGE_STATUSES``: the parser's 400, 408, 413, 414, 415, 429, 431, 503), who may call it
(``security``), and the headers its answers carry (``RESPONSE_HEADERS``): stated once, for
every operation (``state_edge``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from litestar.openapi.spec import (
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Reference,
    Schema,
)

from .contract_schemas import ref
from .models import Problem
from .problems import PROBLEM

__all__ = ["EDGE_STATUSES", "RESPONSE_HEADERS", "operations", "state_edge"]


def operations(schema: Any) -> Iterator[Any]:
    """Every operation of the contract, path by path."""
    for item in schema.paths.values():
        for method in ("get", "post", "delete"):
            operation = getattr(item, method, None)
            if operation is not None:
                yield operation


def state_edge(schema: Any) -> None:
    """Security, the edge's answers and the answers' headers, on every operation."""
    _limits_and_security(schema)
    _edge_statuses(schema)
    _response_headers(schema)


def _limits_and_security(schema: Any) -> None:
    """An operation with no security of its own is public (``security: []``). An organizer
    key is optional (needed only where the referee has keys): stated once, at the top
    (``security: [{}, {organizer: []}]``), and inherited by the creations, which state none;
    a client generator then lets them be called with or without a token."""
    schema.security = [{}, {"organizer": []}]
    for operation in operations(schema):
        if operation.security is None:
            operation.security = []
        elif {"organizer": []} in operation.security:
            operation.security = None


#: what any operation may be answered, whatever it does, by the HTTP edge (web/serving.py),
#: the shared limits (web/hot.py) or the store: stated here, once, for every operation
EDGE_STATUSES = {
    408: "Request Timeout: the request's body did not arrive within REFEREE_BODY_TIMEOUT_S "
    "of its headers: the connection is closed",
    413: "Body too large: past REFEREE_MAX_BODY_BYTES",
    415: "Unsupported media type: a body is sent as JSON (Content-Type: application/json): "
    "the connection is closed",
    429: "Too many requests (rate-limited, too-many-waiting, quota-exceeded): wait "
    "Retry-After seconds",
    414: "URI too long: the request line is longer than a header line may be "
    "(REFEREE_MAX_HEADER_LINE_BYTES): the connection is closed",
    431: "Request header fields too large (REFEREE_MAX_HEADER_LINE_BYTES, "
    "REFEREE_MAX_HEADER_FIELDS, REFEREE_MAX_HEADER_BYTES): the connection is closed",
    503: "Unavailable: the store does not answer (redis-unavailable) or the game changed too "
    "often while the request was tried (busy); nothing changed: retry after Retry-After "
    "seconds",
}
_MALFORMED = (
    "Bad request (invalid-request): the request is not valid HTTP/1.1 (field names the part "
    "at fault: url, headers, content-length, transfer-encoding, body, ...): the connection is "
    "closed"
)
#: the edge statuses an operation never meets: the health checks pass the limits free, and
#: /healthz does not ask the store
_EDGE_EXEMPT = {"healthz": {429, 503}, "readyz": {429}}


def _edge_statuses(schema: Any) -> None:
    """Every operation's answers include the edge's (``EDGE_STATUSES``), each a problem."""
    for operation in operations(schema):
        exempt = _EDGE_EXEMPT.get(operation.operation_id, set())
        # any request may be refused by the HTTP parser (``web.serving``); an operation
        # that reads input says more of its own 400s
        operation.responses.setdefault(
            "400",
            OpenAPIResponse(
                description=_MALFORMED,
                content={PROBLEM: OpenAPIMediaType(schema=ref(Problem))},
            ),
        )
        for status, description in EDGE_STATUSES.items():
            if status in exempt:
                continue
            operation.responses[str(status)] = OpenAPIResponse(
                description=description,
                content={PROBLEM: OpenAPIMediaType(schema=ref(Problem))},
            )


#: the headers the referee sends beyond HTTP's own (Content-Type, Content-Length, Date, ...),
#: each stated on every answer that carries it (tests/service/test_contract.py checks that
#: nothing else is sent)
RESPONSE_HEADERS = {
    "Retry-After": OpenAPIHeader(
        schema=Schema(type=OpenAPIType.INTEGER, minimum=0),
        description="seconds to wait before trying again",
        required=True,
    ),
    "Location": OpenAPIHeader(
        schema=Schema(type=OpenAPIType.STRING),
        description="where what was created is read: a game's or a tournament's view, a "
        "seat's turn (with the seat's token), an entrant's next decision (with the entrant "
        "token)",
        required=True,
    ),
    "ETag": OpenAPIHeader(
        schema=Schema(type=OpenAPIType.STRING),
        description="once the game is over: its hash chain, quoted; send it back in "
        "If-None-Match and a 304 says the copy held is this one",
        required=False,
    ),
    "Cache-Control": OpenAPIHeader(
        schema=Schema(type=OpenAPIType.STRING),
        description="once the game is over: public, max-age=31536000, immutable (a finished "
        "game's record and replay never change); a bot's profile: private, no-cache (it "
        "differs by who asks, Vary: Authorization)",
        required=False,
    ),
}
#: which answers carry which header, by status, and by operation and status
_HEADERS_OF = {"201": ("Location",), "429": ("Retry-After",), "503": ("Retry-After",)}
_OPERATION_HEADERS = {
    (operation, status): ("ETag", "Cache-Control")
    for operation in ("getRecord", "getReplay")
    for status in ("200", "304")
} | {("getBot", "200"): ("Cache-Control",)}


def _response_headers(schema: Any) -> None:
    """Each header the referee sends, stated on the answers that carry it."""
    schema.components.headers = dict(RESPONSE_HEADERS)
    for operation in operations(schema):
        for status, response in operation.responses.items():
            names = _HEADERS_OF.get(status, ()) + _OPERATION_HEADERS.get(
                (operation.operation_id, status), ()
            )
            if names:  # beside those an operation states itself (Idempotent-Replayed)
                response.headers = {
                    **(response.headers or {}),
                    **{name: Reference(ref=f"#/components/headers/{name}") for name in names},
                }
