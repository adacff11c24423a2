"""The ``Idempotency-Key`` header of the creations whose answers hold a token shown once
(``service.idempotency``): the contract's header and replay marker, and the answer of such a
handler, made once per key or given again byte for byte."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import msgspec
from litestar import Request, Response
from litestar.datastructures import ResponseHeader, State
from litestar.params import HeaderParameter

from ..service.idempotency import KEY_PATTERN, Answer
from .params import services_of

__all__ = ["REPLAYED", "IdempotencyKey", "once"]

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        description="makes the request safe to send again (a UUID is a good key): the same "
        "key with the same body, from the same organizer key (or, where none is needed, the "
        "same client address), gets the first answer again, tokens included, with "
        "'Idempotent-Replayed: true', for 24 hours; nothing is made twice. With another body: "
        "422 idempotency-key-reused; while the first request runs: 409 "
        "idempotency-key-in-progress. 1 to 255 printable ASCII characters (else 400 "
        "invalid-idempotency-key)",
        # stated for the contract; the server checks it itself, with its own code
        schema_extra={"pattern": KEY_PATTERN, "minLength": 1, "maxLength": 255},
    ),
]
REPLAYED = [
    ResponseHeader(
        name="Idempotent-Replayed",
        description="'true': the answer of an earlier request with the same Idempotency-Key",
        value="true",  # the contract's schema: a string (documentation only, never sent)
        documentation_only=True,
        required=False,
    )
]
_encode = msgspec.json.Encoder().encode


async def once(
    request: Request[Any, Any, Any],
    state: State,
    key: str | None,
    scope: str,
    status: int,
    make: Callable[[], Awaitable[Any]],
) -> Response[Any]:
    """``make``'s answer (a body's Struct) with ``status``: made once per Idempotency-Key
    ``key`` within ``scope`` (the operation, what it acts on, and who asks), or made now when
    the request has no key."""

    async def made() -> Answer:
        body = await make()
        return Answer(status, "application/json", _encode(body), getattr(body, "location", ""))

    if key is None:
        answer, replayed = await made(), False
    else:
        idempotency = services_of(state).idempotency
        answer, replayed = await idempotency.once(scope, key, await request.body(), made)
    headers = {"Location": answer.location} if answer.location else {}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return Response(
        answer.body, status_code=answer.status, media_type=answer.media_type, headers=headers
    )
