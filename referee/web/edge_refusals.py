"""What the HTTP edge (``web.bounded``) refuses a request with, as problems: each limit's
refusal naming its setting, a request the parser refused naming the part at fault, and the
refusals of what a connection may not send at all (CONNECT, trailers, an HTTP/1.1 request
without ``Host``, requests pipelined past the queue). No I/O: values and functions alone."""

from __future__ import annotations

import math
from urllib.parse import unquote_plus

from ..core.refusals import Refusal

__all__ = [
    "MAX_PIPELINED",
    "NOT_A_PROXY",
    "NOT_JSON",
    "NO_HOST",
    "PIPELINE_TOO_DEEP",
    "TRAILER",
    "body_refusal",
    "field_line_refusal",
    "fields_refusal",
    "has_host",
    "head_bytes_refusal",
    "limit",
    "malformed",
    "media_refusal",
    "target_refusal",
    "url_refusal",
]

#: CONNECT asks for a tunnel, which no resource here opens (501: a 405 would owe an ``Allow``
#: for a target that is no resource of the referee's): refused, and the connection closed
#: (what follows its head would be the tunnel's bytes, not requests)
NOT_A_PROXY = Refusal("not-a-proxy", "CONNECT: the referee opens no tunnels", field="method")

#: requests a connection may send ahead of their answers (pipelined), queued with their
#: heads: one more is refused once the ones before it are answered, and the connection closed
MAX_PIPELINED = 32
PIPELINE_TOO_DEEP = Refusal(
    "too-many-pipelined",
    f"more than {MAX_PIPELINED} requests sent ahead of their answers on one connection",
    field="request",
)
#: a field after the head: a chunked body's trailer, which nothing here reads (RFC 9110
#: 6.5.1: a recipient may discard it; a field the head should have held is refused, not lost)
TRAILER = Refusal(
    "invalid-request",
    "trailer fields are not taken: send every header field in the head",
    field="trailers",
)
#: RFC 9112 3.2: an HTTP/1.1 request without Host is answered 400
NO_HOST = Refusal("invalid-request", "an HTTP/1.1 request names its Host", field="host")


#: a body sent as anything but JSON: every body the referee reads is JSON, and one declared as
#: a form or as text is what a page of another site can make a visitor's browser send without
#: asking (a CORS "simple request"), games, bots and entries made on the visitor's address
NOT_JSON = Refusal(
    "unsupported-media-type",
    "a body is sent as JSON: Content-Type: application/json (or a +json type)",
    field="content-type",
)


def media_refusal(headers: list[tuple[bytes, bytes]]) -> Refusal | None:
    """``NOT_JSON`` for a head that declares a body (a Content-Length above 0, or chunked)
    whose Content-Type is not JSON's (``application/json``, ``application/…+json``); else
    None. Asked of the head, before the request has a cycle: refused at its body's first
    bytes, a request whose handler reads no body (a token's rotation) was carried out
    anyway, its answer lost."""
    body = False
    media = b""
    for name, value in headers:
        if name == b"content-length":
            body = value.strip().strip(b"0") != b""  # "0", "00": none
        elif name == b"transfer-encoding":
            body = True
        elif name == b"content-type":
            media = value.partition(b";")[0].strip().lower()
    if not body or media == b"application/json":
        return None
    if media.startswith(b"application/") and media.endswith(b"+json"):
        return None
    return NOT_JSON


def has_host(headers: list[tuple[bytes, bytes]]) -> bool:
    if headers and headers[0][0] == b"host":  # where clients put it: no generator made
        return True
    return any(name == b"host" for name, _ in headers)


def target_refusal(url: bytes) -> Refusal | None:
    """Why a request target that names one thing to a proxy and another here is refused:
    an encoded ``/`` in its path (``/v1/games/%2F`` was routed as ``/v1/games/``, the
    listing), or a query parameter given twice (the last one was taken, where a proxy or
    a cache may take the first). No parameter of the API is a list. Called only for a
    target holding a ``%`` or an ``&``."""
    path, _, query = url.partition(b"?")
    if b"%2f" in path.lower():
        return Refusal(
            "invalid-request",
            "an encoded '/' (%2F) in the path names nothing the referee serves",
            field="path",
        )
    if b"&" not in query:
        return None
    seen: set[str] = set()
    for pair in query.split(b"&"):
        name = pair.partition(b"=")[0].decode("latin-1")
        if "%" in name or "+" in name:
            name = unquote_plus(name)
        if name in seen:
            return Refusal(
                "invalid-request", f"the query parameter {name!r} is given twice", field=name
            )
        if name:
            seen.add(name)
    return None


def limit(value: float) -> float:
    """A limit of the settings, 0 being none."""
    return value if value > 0 else math.inf


def url_refusal(max_line: float) -> Refusal:
    return Refusal(
        "uri-too-long",
        f"the request target is over {max_line:.0f} bytes (REFEREE_MAX_HEADER_LINE_BYTES)",
        field="url",
    )


def field_line_refusal(name: bytes, max_line: float) -> Refusal:
    field = name[:64].decode("latin-1")
    detail = (
        f"the header field {field!r} is over {max_line:.0f} bytes (REFEREE_MAX_HEADER_LINE_BYTES)"
    )
    return Refusal("headers-too-large", detail, field=field)


def fields_refusal(max_fields: float) -> Refusal:
    detail = f"the request has over {max_fields:.0f} header fields (REFEREE_MAX_HEADER_FIELDS)"
    return Refusal("headers-too-large", detail, field="headers")


def head_bytes_refusal(max_head: float) -> Refusal:
    detail = f"the request's headers are over {max_head:.0f} bytes (REFEREE_MAX_HEADER_BYTES)"
    return Refusal("headers-too-large", detail, field="headers")


def body_refusal(max_body: float) -> Refusal:
    return Refusal(
        "body-too-large",
        f"the body is over {max_body:.0f} bytes (REFEREE_MAX_BODY_BYTES)",
        field="body",
    )


#: the part of a request that the HTTP parser's message names, as a problem's ``field``
_PARTS = (
    ("url", "url"),
    ("method", "method"),
    ("transfer-encoding", "transfer-encoding"),  # before: its messages name both
    ("content-length", "content-length"),
    ("header", "headers"),
    ("chunk", "body"),
)


def malformed(exc: Exception) -> Refusal:
    """The problem of a request the HTTP parser refused (framings that could smuggle a
    request past a proxy among them): 400, naming the part at fault; uvicorn's own answer
    was plain text."""
    said = str(exc) or type(exc).__name__
    lower = said.lower()
    field = next((name for word, name in _PARTS if word in lower), "request")
    return Refusal("invalid-request", f"the request is not valid HTTP/1.1: {said}", field=field)
