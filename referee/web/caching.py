"""A finished game's record never changes: it is answered with an ``ETag`` (the hash chain's
end, which every decision is hashed into) and a year's ``Cache-Control: immutable``, and a
request that already holds it (``If-None-Match``) gets a 304 with no body. A running game's
record changes with every decision and is answered as it is, without either. The contract
states both headers (``contract.RESPONSE_HEADERS``)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.openapi.datastructures import ResponseSpec

__all__ = ["IMMUTABLE", "NOT_MODIFIED", "immutable_when_over"]

IMMUTABLE = "public, max-age=31536000, immutable"
NOT_MODIFIED = {
    304: ResponseSpec(
        data_container=None,
        description="Not modified: the finished record named by If-None-Match is this one",
        generate_examples=False,
    )
}


def immutable_when_over(request: Request[Any, Any, Any], record: dict[str, Any]) -> Response[Any]:
    """``record`` as the answer: with its validator and a year's caching once it is final."""
    chain = record.get("chain")
    if not record.get("finished") or not record.get("seed") or not chain:
        return Response(record)
    tag = f'"{chain}"'
    headers = {"etag": tag, "cache-control": IMMUTABLE}
    held = request.headers.get("if-none-match", "").split(",")
    if tag in (t.strip().removeprefix("W/") for t in held):
        return Response(None, status_code=304, headers=headers)
    return Response(record, headers=headers)
