"""The two routes a bot calls in a loop, answered without Litestar's per-request machinery.

``GET /turn`` and ``POST /moves`` are nearly every request of a tournament, and Litestar's
routing, parameter parsing, dependency injection and response building cost about a third of
such a request (callgrind, ``benchmarks/results/README.md``). In front of Litestar itself,
this answers a plainly well-formed request on the exact path: with the bytes the handler
itself would send, or, if the service refuses or fails, with the problem the handler would
send (``problems.answer``), so a request reaches the service once. Anything else (no token,
any other query, a body the strict decoder refuses) goes on to the handler, which owns the
contract.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Coroutine
from typing import Any

import msgspec
from litestar import Litestar
from litestar.routes import HTTPRoute

from ..core.refusals import Refusal
from .access import client_address
from .models import MoveSubmission, Turn, move_accepted
from .problems import GAME_ID, PROBLEM, answer, bearer

__all__ = ["HotRoutes", "HotRoutesLitestar"]

_HOT = re.compile(rf"/v1/games/({GAME_ID.pattern})/(turn|moves)")
_WAIT = re.compile(rb"wait=([0-9]{1,2}(?:\.[0-9]{1,6})?)")
_submission = msgspec.json.Decoder(MoveSubmission)
_encode = msgspec.json.Encoder().encode
_JSON = b"application/json"
_PROBLEM = PROBLEM.encode()
#: what the load balancer's health checks ask: never limited
_UNLIMITED = frozenset({"/healthz", "/readyz"})
_RATE_LIMITED = Refusal(
    "rate-limited",
    "too many requests from this token or address in this second",
    retry_after=1,
)


def _wait(query: bytes) -> float:
    """The seconds of a query that is ``wait=s`` alone; -1 for any other (the handler
    answers those)."""
    matched = _WAIT.fullmatch(query)
    return float(matched.group(1)) if matched is not None else -1.0


def _token(scope: dict) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            return bearer(value.decode("latin-1"))
    return None


class HotRoutes:
    """What the hot routes answer with: the seats' service, set once the app has started
    (None: the handlers answer every request), and the app's limit on a body; and the
    shared limits every request passes (None until started), with the proxies trusted to
    name a client's address."""

    __slots__ = ("limit", "limits", "seats", "trusted")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seats: Any = None
        self.limits: Any = None
        self.trusted: tuple[str, ...] = ()


def _asked(routes: HotRoutes, token: str | None) -> tuple[Any, str] | None:
    """The seats' service and the token of a request answered here, or None."""
    seats = routes.seats
    return None if token is None or seats is None else (seats, token)


class HotRoutesLitestar(Litestar):
    """Litestar, with the two routes a bot calls in a loop answered before its own entry point
    (which sets up the scope and the ``send`` its handlers need) once ``hot.seats`` is set.

    Only the exact paths are taken (a trailing slash, a mounted prefix and every other path go
    to Litestar, as does whatever is not plainly well-formed). It answers through the
    server's ``send``: the app has no ``before_send`` hooks (tested) for it to skip.
    """

    hot: HotRoutes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hot = HotRoutes(self.request_max_body_size)
        # Litestar answers OPTIONS on a path with handlers of two registrations (GET and
        # POST /v1/tournaments) with the first one's methods: every fixed path's methods
        self.allow = {
            route.path: ", ".join(sorted(route.methods))
            for route in self.routes
            if isinstance(route, HTTPRoute) and "{" not in route.path
        }

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and scope["path"] in self.allow:
            headers = [(b"allow", self.allow[scope["path"]].encode())]
            await send({"type": "http.response.start", "status": 204, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        limits = self.hot.limits
        token, address = None, ""
        if limits is not None and scope["path"] not in _UNLIMITED:
            token = _token(scope)
            address = client_address(scope, self.hot.trusted)
            admitted = limits.admits(address, token)
            if admitted is None:
                admitted = await limits.request(address, token)
            if not admitted:
                await _problem(send, scope, _RATE_LIMITED)
                return
        hot = _HOT.fullmatch(scope["path"])
        if hot is not None and limits is None:
            token = _token(scope)
        if hot is None:
            await super().__call__(scope, receive, send)
        elif hot.group(2) == "turn":
            await _turn(self.hot, scope, receive, send, self._routed, hot.group(1), token, address)
        else:
            await _moves(self.hot, scope, receive, send, self._routed, hot.group(1), token, address)

    async def _routed(self, scope: Any, receive: Any, send: Any) -> None:
        await super().__call__(scope, receive, send)


async def _turn(
    routes: HotRoutes,
    scope: dict,
    receive: Any,
    send: Any,
    routed: Any,
    game_id: str,
    token: str | None,
    address: str,
) -> None:
    """``GET /v1/games/{id}/turn[?wait=s]``."""
    wait = _wait(scope["query_string"] or b"wait=0") if scope["method"] == "GET" else -1.0
    asked = _asked(routes, token) if 0 <= wait <= 60 else None
    if asked is None:
        await routed(scope, receive, send)
        return
    seats, token = asked
    await _long_poll(
        routes, send, scope, address, wait, seats.wait_turn(game_id, token, wait), Turn
    )


async def _long_poll(
    routes: HotRoutes,
    send: Any,
    scope: dict,
    address: str,
    wait: float,
    call: Coroutine[Any, Any, dict[str, Any]],
    model: Any,
) -> None:
    """Answer with ``call``, holding one of the address's waits while it may long-poll (429
    past the cap): a request that does not wait holds none."""
    limits = routes.limits
    if wait == 0 or limits is None:
        await _answer(send, scope, call, model)
        return
    if not limits.waits_held(address):
        try:
            await limits.start_waiting(address)
        except Refusal as exc:
            call.close()  # never started
            await _problem(send, scope, exc)
            return
    try:
        await _answer(send, scope, call, model)
    finally:
        limits.stop_waiting(address)


async def _moves(
    routes: HotRoutes,
    scope: dict,
    receive: Any,
    send: Any,
    routed: Any,
    game_id: str,
    token: str | None,
    address: str,
) -> None:
    """``POST /v1/games/{id}/moves[?wait=s]`` with a body the strict decoder takes."""
    wait = _wait(scope["query_string"]) if scope["query_string"] else None
    post = scope["method"] == "POST" and (wait is None or 0 <= wait <= 60)
    asked = _asked(routes, token) if post else None
    if asked is None:
        await routed(scope, receive, send)
        return
    limit = routes.limit
    body = b""
    more = True
    while more and len(body) <= limit:
        message = await receive()
        if message["type"] != "http.request":
            await routed(scope, _body_then(body, message, receive), send)
            return
        body += message.get("body", b"")
        more = message.get("more_body", False)
    if more or len(body) > limit:
        await routed(scope, _body_then(body, None, receive, more), send)
        return
    try:
        data = _submission.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        await routed(scope, _body_then(body, None, receive), send)
        return
    seats, token = asked
    try:
        moves = data.decided()
    except Refusal as exc:
        await _problem(send, scope, exc)
        return
    if wait is None:
        await _answer(send, scope, seats.move(game_id, token, data.seq, moves), move_accepted)
        return
    decided = seats.move_then_turn(game_id, token, data.seq, moves, wait)
    await _long_poll(routes, send, scope, address, wait, decided, move_accepted)


async def _answer(send: Any, scope: dict, call: Awaitable[dict[str, Any]], model: Any) -> None:
    """The service's answer, or the problem its refusal (or failure) makes."""
    try:
        body = _encode(model(**await call))
    except Exception as exc:
        await _problem(send, scope, exc)
        return
    await _send(send, 200, _JSON, body)


async def _problem(send: Any, scope: dict, exc: Exception) -> None:
    status, body, headers = answer(exc, scope["path"])
    extra = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
    await _send(send, status, _PROBLEM, body, extra)


async def _send(
    send: Any, status: int, media: bytes, body: bytes, extra: list | None = None
) -> None:
    headers = [(b"content-type", media), (b"content-length", str(len(body)).encode())]
    if extra:
        headers += extra
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _body_then(body: bytes, then: dict | None, receive: Any, more: bool = False) -> Any:
    """``receive`` for the handler: the body read so far, then what was still to come."""
    pending = [{"type": "http.request", "body": body, "more_body": more}]
    if then is not None:
        pending.append(then)

    async def replayed() -> dict:
        return pending.pop(0) if pending else await receive()

    return replayed
