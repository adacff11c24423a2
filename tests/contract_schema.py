"""The committed contract (``openapi/openapi.json``) as JSON Schema validators: of a request
body, and of an answer, by path, method and status."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

CONTRACT = json.loads((Path(__file__).parents[1] / "openapi" / "openapi.json").read_text())
REGISTRY = Registry().with_resource(
    "contract", Resource.from_contents(CONTRACT, default_specification=DRAFT202012)
)


def _closed(node: object) -> object:
    """The contract with every object closed: an answer holding a field the contract does
    not state fails (the contract itself leaves answers open, for clients to come)."""
    if isinstance(node, list):
        return [_closed(n) for n in node]
    if not isinstance(node, dict):
        return node
    closed = {k: _closed(v) for k, v in node.items()}
    if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
        closed["additionalProperties"] = False
    return closed


def closed_registry(contract: dict) -> Registry:
    """A contract, every object closed, as the registry an answer's validator resolves in."""
    return Registry().with_resource(
        "contract", Resource.from_contents(_closed(contract), default_specification=DRAFT202012)
    )


CLOSED = closed_registry(CONTRACT)


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def body_validator(path: str, method: str = "post") -> Draft202012Validator:
    """The validator of the operation's request body."""
    operation = CONTRACT["paths"][path][method]
    assert operation["requestBody"]["content"]["application/json"]["schema"]
    ref = "contract#/" + _pointer(
        "paths", path, method, "requestBody", "content", "application/json", "schema"
    )
    return Draft202012Validator({"$ref": ref}, registry=REGISTRY)


def answer_validator(
    path: str, method: str, status: int, contract: dict = CONTRACT, registry: Registry = CLOSED
) -> Draft202012Validator:
    """The validator of the operation's answer of that status (JSON or problem+json), which
    refuses a field the contract does not state (of the committed contract, or of another
    referee's with its ``closed_registry``)."""
    content = contract["paths"][path][method]["responses"][str(status)]["content"]
    (media,) = content
    ref = "contract#/" + _pointer(
        "paths", path, method, "responses", str(status), "content", media, "schema"
    )
    return Draft202012Validator({"$ref": ref}, registry=registry)
