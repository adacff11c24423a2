"""The two routes a bot calls in a loop, answered without Litestar's per-request machinery.

``GET /turn`` and ``POST /moves`` are nearly every request of a tournament, and Litestar's
routing, parameter parsing, dependency injection and response building cost about a third of
such a request (callgrind, ``benchmarks/results/README.md``). In front of Litestar itself,
this answers only a plainly well-formed request, on the exact path, that the service accepts,
with the bytes the handler itself would send. Anything else (no token, any other
query, a body the strict decoder refuses, a refusal, an error) goes on to the handler, which
owns the contract and every problem answer; a refusal changes nothing, so asking again there
is safe.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable
from typing import Any

import msgspec
from litestar import Litestar

from ..games import GameError
from ..service import ApiError
from .models import MoveAccepted, MoveSubmission, Turn

__all__ = ["GAME_ID", "FastRoutes", "FrontedLitestar", "bearer"]

log = logging.getLogger("referee")
GAME_ID = re.compile(r"[0-9a-f]{16}")
_HOT = re.compile(rf"/v1/games/({GAME_ID.pattern})/(turn|moves)")
_WAIT = re.compile(rb"wait=([0-9]{1,2}(?:\.[0-9]{1,6})?)")
_submission = msgspec.json.Decoder(MoveSubmission)
_encode = msgspec.json.Encoder().encode
_JSON = (b"content-type", b"application/json")


def bearer(header: str) -> str | None:
    """The token of an ``Authorization: Bearer`` header's value, or None."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _token(scope: dict) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            return bearer(value.decode("latin-1"))
    return None


class FastRoutes:
    """What the front answers with: the service, set once the app has started (None: the
    handlers answer every request), and the app's limit on a body."""

    __slots__ = ("limit", "service")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.service: Any = None


def _asked(routes: FastRoutes, scope: dict) -> tuple[Any, str] | None:
    """The service and token of a request this app answers itself, or None."""
    service = routes.service
    token = _token(scope) if service is not None else None
    return None if token is None else (service, token)


class FrontedLitestar(Litestar):
    """Litestar, with the two routes a bot calls in a loop answered before its own entry point
    (which sets up the scope and the ``send`` its handlers need) once ``fast.service`` is set.

    Only the exact paths are taken (a trailing slash, a mounted prefix and every other path go
    to Litestar, as does whatever the front does not answer itself). The front answers through
    the server's ``send``: the app has no ``before_send`` hooks (tested) for it to skip.
    """

    fast: FastRoutes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fast = FastRoutes(self.request_max_body_size)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        hot = _HOT.fullmatch(scope["path"]) if scope["type"] == "http" else None
        if hot is None:
            await super().__call__(scope, receive, send)
        elif hot.group(2) == "turn":
            await _turn(self.fast, scope, receive, send, self._routed, hot.group(1))
        else:
            await _moves(self.fast, scope, receive, send, self._routed, hot.group(1))

    async def _routed(self, scope: Any, receive: Any, send: Any) -> None:
        await super().__call__(scope, receive, send)


async def _turn(
    routes: FastRoutes, scope: dict, receive: Any, send: Any, routed: Any, game_id: str
) -> None:
    """``GET /v1/games/{id}/turn[?wait=s]``."""
    query = _WAIT.fullmatch(scope["query_string"] or b"wait=0")
    wait = float(query.group(1)) if query is not None and scope["method"] == "GET" else -1.0
    asked = _asked(routes, scope) if 0 <= wait <= 60 else None
    answer = None
    if asked is not None:
        service, token = asked
        answer = await _answer("GET /turn", service.wait_turn(game_id, token, wait), Turn)
    if answer is None:
        await routed(scope, receive, send)
    else:
        await _send(send, answer)


async def _moves(
    routes: FastRoutes, scope: dict, receive: Any, send: Any, routed: Any, game_id: str
) -> None:
    """``POST /v1/games/{id}/moves`` with a body of exactly one of ``move`` and ``moves``."""
    asked = _asked(routes, scope) if scope["method"] == "POST" else None
    if asked is None:
        await routed(scope, receive, send)
        return
    limit = routes.limit
    body = b""
    more = True
    while more and len(body) <= limit:
        message = await receive()
        if message["type"] != "http.request":
            await routed(scope, _replay(body, message, receive), send)
            return
        body += message.get("body", b"")
        more = message.get("more_body", False)
    if more or len(body) > limit:
        await routed(scope, _replay(body, None, receive, more), send)
        return
    try:
        data = _submission.decode(body)
    except msgspec.DecodeError:
        data = None
    answer = None
    if data is not None and (data.move is None) != (data.moves is None):
        service, token = asked
        decided = [data.move] if data.move is not None else list(data.moves or [])
        call = service.move(game_id, token, data.seq, decided)
        answer = await _answer("POST /moves", call, MoveAccepted)
    if answer is None:
        await routed(scope, _replay(body, None, receive), send)
    else:
        await _send(send, answer)


async def _answer(route: str, call: Awaitable[dict[str, Any]], model: Any) -> bytes | None:
    """The service's answer, encoded, or None: the handler is to answer."""
    try:
        return _encode(model(**await call))
    except (ApiError, GameError):
        return None
    except Exception:
        log.warning("fast %s failed; the handler answers", route, exc_info=True)
        return None


async def _send(send: Any, body: bytes) -> None:
    headers = [_JSON, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _replay(body: bytes, then: dict | None, receive: Any, more: bool = False) -> Any:
    """``receive`` for the handler: the body read so far, then what was still to come."""
    pending = [{"type": "http.request", "body": body, "more_body": more}]
    if then is not None:
        pending.append(then)

    async def replayed() -> dict:
        return pending.pop(0) if pending else await receive()

    return replayed
