"""Every error as an RFC 9457 problem+json body: each refusal code's HTTP status, in one
table, and the answers for what the framework, the store or a bug raise. The body names the
rule or field at fault (``code``, ``field``) and, for a seat, the seq to decide."""

from __future__ import annotations

import logging
import re
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import ResponseSpec

from ..core.refusals import Refusal
from ..games import GameError
from ..service import AVAILABILITY, STORE_BUSY, STORE_UNAVAILABLE
from .codes import RULESET_CODES
from .models import Problem

__all__ = [
    "PROBLEM",
    "STATUS",
    "answer",
    "bearer",
    "check_id",
    "decoded_body",
    "exception_handlers",
    "problem_body",
    "problems",
    "read_body",
    "request_bearer",
    "require_entrant_token",
    "require_seat_token",
    "status_of",
]

log = logging.getLogger("referee")
PROBLEM = "application/problem+json"
PROBLEM_BASE = "https://referee.invalid/problems/"

#: The HTTP status of each refusal code; any other code (a broken rule, a bad option or
#: spec) is 422, or a ruleset's own code the status it declares.
STATUS = {
    "invalid-request": 400,
    "invalid-idempotency-key": 400,
    "unauthorized": 401,
    "organizer-key-required": 401,
    "forbidden": 403,
    "organizer-key-refused": 403,
    "invite-code-refused": 403,
    "game-not-found": 404,
    "tournament-not-found": 404,
    "ruleset-not-found": 404,
    "bot-token-refused": 403,
    "bot-not-active": 403,
    "not-bot-owner": 403,
    "bot-has-no-webhook": 409,
    "not-challenged": 403,
    "not-challenger": 403,
    "organizer-already-entered": 409,
    "bot-not-found": 404,
    "challenge-not-found": 404,
    "bot-name-taken": 409,
    "bot-already-entered": 409,
    "bot-token-required": 403,
    "challenge-closed": 409,
    "challenge-pending": 409,
    "bot-quota-exceeded": 429,
    "game-not-started": 409,
    "game-over": 409,
    "game-not-over": 409,
    "game-sealed": 409,
    "no-open-seat": 409,
    "not-your-turn": 409,
    "registration-closed": 409,
    "entrant-name-taken": 409,
    "seq-already-decided": 409,
    "seq-mismatch": 409,
    "idempotency-key-in-progress": 409,
    "busy": 503,
    "redis-unavailable": 503,
    "redis-unreachable": 503,
    "store-busy": 503,
    "rate-limited": 429,
    "too-many-waiting": 429,
    "quota-exceeded": 429,
    "body-timeout": 408,
    "unsupported-media-type": 415,
    "uri-too-long": 414,
    "not-a-proxy": 501,
    "too-many-pipelined": 400,
    "headers-too-large": 431,
}
TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    408: "Request timeout",
    409: "Conflict",
    413: "Body too large",
    414: "URI too long",
    415: "Unsupported media type",
    422: "Rule violation",
    429: "Too many requests",
    431: "Headers too large",
    500: "Internal error",
    501: "Not implemented",
    503: "Unavailable",
}
#: The code of an error the framework raises, by its status.
CODES = {
    400: "invalid-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    409: "conflict",
    413: "body-too-large",
    415: "unsupported-media-type",
    422: "unprocessable",
    429: "rate-limited",
    500: "internal-error",
    503: "unavailable",
}
GAME_ID = re.compile(r"[0-9a-f]{16}")
_encode = msgspec.json.Encoder().encode


_FRAMEWORK_STATUS = {code: status for status, code in CODES.items()}
#: a ruleset's own codes, at the status it declares (``codes.RULESET_CODES``)
_RULESET_STATUS = {code: declared.status for code, (_, declared) in RULESET_CODES.items()}


def status_of(code: str) -> int:
    return STATUS.get(code) or _FRAMEWORK_STATUS.get(code) or _RULESET_STATUS.get(code, 422)


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    """The contract's problem responses of an operation."""
    return {
        status: ResponseSpec(
            data_container=Problem,
            media_type=PROBLEM,
            description=TITLES.get(status, "Error"),
            generate_examples=False,
        )
        for status in statuses
    }


def bearer(header: str) -> str | None:
    """The token of an ``Authorization: Bearer`` header's value, or None."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def request_bearer(request: Any) -> str | None:
    """The bearer token of a request (or any connection), or None."""
    return bearer(request.headers.get("authorization", ""))


def _requires(kind: str) -> Any:
    async def guard(connection: Any, _: Any) -> None:
        """Guard: the route needs a token of its kind, checked before the body is read (async:
        Litestar runs a plain function guard in a worker thread, a thread hop per request)."""
        if request_bearer(connection) is None:
            raise Refusal("unauthorized", f"send {kind} as 'Authorization: Bearer <token>'")

    return guard


#: a seat's routes need the seat's token; an entrant's, the entrant token
require_seat_token = _requires(
    "the seat's token (from createGame, claimSeat, or nextDecision's seat_token)"
)
require_entrant_token = _requires("the entrant token (from registerEntrant)")


def check_id(identifier: str, kind: str = "game") -> None:
    """Ids are 16 hex digits: anything else names nothing (``game-not-found``, ...)."""
    if not GAME_ID.fullmatch(identifier):
        raise Refusal(f"{kind}-not-found", f"there is no such id: {identifier!r}")


_JSON = msgspec.json.Decoder()
_AT = re.compile(r" - at `\$(?P<path>[^`]*)`")
_UNKNOWN = re.compile(r"unknown field `(?P<name>[^`]*)`")
_MISSING = re.compile(r"missing required field `(?P<name>[^`]*)`")


async def read_body(
    request: Request[Any, Any, Any], model: Any, *, names_ruleset: bool = False
) -> Any:
    """The request's JSON body as ``model`` (``decoded_body``)."""
    return decoded_body(await request.body(), model, names_ruleset=names_ruleset)


def decoded_body(body: bytes, model: Any, *, names_ruleset: bool = False) -> Any:
    """A JSON body as ``model``, checked strictly as the contract states it: ``"5"`` is not
    ``5`` and ``0`` is not ``false`` (Litestar's own decoding would take them), but ``5.0``
    is the integer 5, as in JSON Schema. A refusal names the field at fault; for a body that
    names its ruleset, an unknown ruleset, a seat count or an option keeps the rules' own
    code."""
    try:
        value = _integral(_JSON.decode(body))
        return msgspec.convert(value, model)
    except msgspec.ValidationError as exc:
        message = str(exc)
        at = _AT.search(message)
        field = at.group("path").lstrip(".") if at else ""
        if "[...]" in field:  # read before any model: a number out of any range, somewhere
            field, message = "", f"a number in the body is out of range ({message})"
        named = _UNKNOWN.search(message) or _MISSING.search(message)
        if named:
            field = (field or "body") + "." + named.group("name")
        field = field or "body"
        code = _rule_code(field) if names_ruleset else "invalid-request"
        raise Refusal(code, message, field=field) from None
    except msgspec.DecodeError as exc:
        detail = f"the body is not JSON: {exc}"
    except UnicodeDecodeError:
        detail = "the body is not valid UTF-8"
    except RecursionError:
        detail = "the body's JSON nests too deep to decode"
    raise Refusal("invalid-request", detail, field="body")


def _integral(value: Any) -> Any:
    """JSON values with each float that is a whole number (``3.0``) as an integer."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, list):
        return [_integral(item) for item in value]
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    return value


def _rule_code(field: str) -> str:
    """The rules' code for a field of a body that names its ruleset."""
    if field == "ruleset":
        return "unknown-ruleset"
    if field == "seats":
        return "invalid-seat-count"
    if field.startswith("options"):
        return "invalid-option"
    return "invalid-request"


def problem_body(
    status: int,
    code: str,
    detail: str,
    field: str | None = None,
    instance: str | None = None,
    **extra: Any,
) -> bytes:
    return _encode(
        Problem(
            type=PROBLEM_BASE + code,
            title=TITLES.get(status, "Error"),
            status=status,
            detail=detail,
            code=code,
            field=field,
            current_seq=extra.get("current_seq"),
            instance=instance,
        )
    )


def answer(exc: BaseException, path: str) -> tuple[int, bytes, dict[str, str]]:
    """What an error raised while answering a request for ``path`` becomes: status, problem
    body and headers. A refusal, a broken rule, a store that does not answer, or (logged) a
    bug."""
    if isinstance(exc, Refusal):
        status = status_of(exc.code)
        body = problem_body(status, exc.code, exc.detail, exc.field, path, **exc.extra)
        retry_after = exc.extra.get("retry_after")
        return status, body, {"Retry-After": str(retry_after)} if retry_after else {}
    if isinstance(exc, GameError):
        status = status_of(exc.code)
        return status, problem_body(status, exc.code, exc.message, exc.field, path), {}
    if isinstance(exc, STORE_UNAVAILABLE):
        AVAILABILITY.refused(exc)  # logged once per outage, with a count, not per request
        if isinstance(exc, STORE_BUSY):
            detail = "every connection to the game store is in use; nothing changed"
            return 503, problem_body(503, "store-busy", detail, None, path), {"Retry-After": "1"}
        detail = "the game store does not answer; nothing changed"
        body = problem_body(503, "redis-unavailable", detail, None, path)
        return 503, body, {"Retry-After": "1"}
    log.error("unhandled error on %s", path, exc_info=exc)
    detail = "the referee failed; nothing changed"
    return 500, problem_body(500, "internal-error", detail, None, path), {}


def _response(status: int, body: bytes, headers: dict[str, str]) -> Response[Any]:
    return Response(body, status_code=status, media_type=PROBLEM, headers=headers)


def _error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    return _response(*answer(exc, str(request.url.path)))


def _validation_handler(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    messages = []
    field = None
    for item in exc.extra or []:
        if isinstance(item, dict):
            message = str(item.get("message", ""))
            messages.append(message)
            if field is None:
                at = _AT.search(message)
                unknown = _UNKNOWN.search(message)
                key = str(item.get("key") or "")
                field = key + (at.group("path") if at else "")
                field += "." + unknown.group("name") if unknown else ""
    detail = "; ".join(messages) or str(exc.detail)
    body = problem_body(400, "invalid-request", detail, field, str(request.url.path))
    return _response(400, body, {})


def _http_handler(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    code = CODES.get(status, f"http-{status}")
    body = problem_body(status, code, str(exc.detail), None, str(request.url.path))
    return _response(status, body, dict(exc.headers or {}))


def exception_handlers() -> dict[Any, Any]:
    """The app's handlers: every error answers with a problem."""
    return {
        ValidationException: _validation_handler,
        HTTPException: _http_handler,
        Exception: _error_handler,
    }
