"""The HTTP contract, on Litestar only: the app factory, the routes, the two hot routes a
bot calls in a loop, the problem answers (each refusal code's status, in one table), the
bodies as msgspec models, and the OpenAPI document."""

from __future__ import annotations

from .app import create_app, openapi_document

__all__ = ["create_app", "openapi_document"]
