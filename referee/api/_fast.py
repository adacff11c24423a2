"""The two routes a bot calls in a loop, answered without Litestar's per-request machinery.

``GET /turn`` and ``POST /moves`` are nearly every request of a tournament, and Litestar's
parameter parsing, dependency injection and response building cost a quarter of such a request
(callgrind, ``benchmarks/results/README.md``). These handler middlewares (Litestar has routed
the request and parsed its path) answer only a plainly well-formed request that the service
accepts, with the bytes the handler itself would send. Anything else (no token, any other
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

from ..games import GameError
from ..service import ApiError
from .models import MoveAccepted, MoveSubmission, Turn

__all__ = ["GAME_ID", "bearer", "fast_moves", "fast_turn"]

log = logging.getLogger("referee")
GAME_ID = re.compile(r"[0-9a-f]{16}")
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


def _asked(scope: dict) -> tuple[Any, str, str] | None:
    """The service, game id and token of a request this app answers itself, or None."""
    state = scope["litestar_app"].state
    game_id = scope["path_params"]["game_id"]
    token = _token(scope)
    if not state.get("fast_routes") or token is None or not GAME_ID.fullmatch(game_id):
        return None
    return state.service, game_id, token


def fast_turn(app: Any) -> Any:
    """``GET /v1/games/{id}/turn[?wait=s]``."""

    async def turn(scope: dict, receive: Any, send: Any) -> None:
        query = _WAIT.fullmatch(scope["query_string"] or b"wait=0")
        wait = float(query.group(1)) if query is not None and scope["method"] == "GET" else -1.0
        asked = _asked(scope) if 0 <= wait <= 60 else None
        answer = None
        if asked is not None:
            service, game_id, token = asked
            answer = await _answer("GET /turn", service.wait_turn(game_id, token, wait), Turn)
        if answer is None:
            await app(scope, receive, send)
        else:
            await _send(send, answer)

    return turn


def fast_moves(app: Any) -> Any:
    """``POST /v1/games/{id}/moves`` with a body of exactly one of ``move`` and ``moves``."""

    async def moves(scope: dict, receive: Any, send: Any) -> None:
        asked = _asked(scope) if scope["method"] == "POST" else None
        if asked is None:
            await app(scope, receive, send)
            return
        limit = scope["litestar_app"].request_max_body_size
        body = b""
        more = True
        while more and len(body) <= limit:
            message = await receive()
            if message["type"] != "http.request":
                await app(scope, _replay(body, message, receive), send)
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if more or len(body) > limit:
            await app(scope, _replay(body, None, receive, more), send)
            return
        try:
            data = _submission.decode(body)
        except msgspec.DecodeError:
            data = None
        answer = None
        if data is not None and (data.move is None) != (data.moves is None):
            service, game_id, token = asked
            decided = [data.move] if data.move is not None else list(data.moves or [])
            call = service.move(game_id, token, data.seq, decided)
            answer = await _answer("POST /moves", call, MoveAccepted)
        if answer is None:
            await app(scope, _replay(body, None, receive), send)
        else:
            await _send(send, answer)

    return moves


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
