"""A finished game's record and replay never change: they are answered with an ``ETag`` (the
hash chain's end, which every decision is hashed into) and a year's ``Cache-Control:
immutable``, and a request that already holds them (``If-None-Match``) gets a 304 with no
body; for a replay, before it is computed (seconds for a large game), from the public view.
A running game's record changes with every decision and is answered as it is, without
either. The contract states both headers (``contract.RESPONSE_HEADERS``)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.openapi.datastructures import ResponseSpec

from ..core.views import Shown

__all__ = [
    "IMMUTABLE",
    "NOT_MODIFIED",
    "final_tag",
    "held",
    "immutable",
    "immutable_when_over",
    "not_modified",
]

IMMUTABLE = "public, max-age=31536000, immutable"
NOT_MODIFIED = {
    304: ResponseSpec(
        data_container=None,
        description="Not modified: the finished game's answer named by If-None-Match is this one",
        generate_examples=False,
    )
}


def final_tag(shown: Any) -> str | None:
    """The validator of what a finished game shows (its record or its public view): its chain,
    quoted; None while the game runs (or its seed is still withheld)."""
    if not isinstance(shown, dict):  # a Struct of the contract's views
        shown = msgspec.json.decode(msgspec.json.encode(shown))
    over = shown.get("finished") or shown.get("status") == "finished"
    chain = shown.get("chain")
    return f'"{chain}"' if over and shown.get("seed") and chain else None


def held(request: Request[Any, Any, Any], tag: str) -> bool:
    """Whether the request already holds what ``tag`` names (``If-None-Match``)."""
    sent = request.headers.get("if-none-match", "").split(",")
    return tag in (t.strip().removeprefix("W/") for t in sent)


def not_modified(tag: str) -> Response[Any]:
    return Response(None, status_code=304, headers={"etag": tag, "cache-control": IMMUTABLE})


def immutable(request: Request[Any, Any, Any], tag: str, body: Any) -> Response[Any]:
    """The answer of a finished game: ``body`` with its validator and a year's caching, or
    304 if the request holds it already."""
    if held(request, tag):
        return not_modified(tag)
    return Response(body, headers={"etag": tag, "cache-control": IMMUTABLE})


def immutable_when_over(request: Request[Any, Any, Any], record: Shown) -> Response[Any]:
    """``record`` as the answer: with its validator and a year's caching once it is final."""
    tag = final_tag(record)
    return Response(record) if tag is None else immutable(request, tag, record)
