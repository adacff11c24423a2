"""The Python client installs without the server, so it keeps its own models of the bodies
it reads; the committed contract is their one source, and they must match it field for
field (names, and which are required), so the two cannot drift apart."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec
import pytest

ROOT = Path(__file__).resolve().parents[1]
# the client is its own distribution: used in place, as an editable install would
sys.path.insert(0, str(ROOT / "clients" / "python"))
CONTRACT = json.loads((ROOT / "openapi" / "openapi.json").read_text())["components"]["schemas"]


def _client_models() -> dict[str, type[msgspec.Struct]]:
    from referee_client import _models

    return {
        name: value
        for name, value in vars(_models).items()
        if isinstance(value, type)
        and issubclass(value, msgspec.Struct)
        and value.__module__ == _models.__name__
    }


MODELS = _client_models()


def test_every_client_model_is_a_body_of_the_contract():
    assert MODELS and set(MODELS) <= set(CONTRACT), set(MODELS) - set(CONTRACT)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_client_model_has_the_contracts_fields(name):
    model, schema = MODELS[name], CONTRACT[name]
    info = msgspec.structs.fields(model)
    assert {f.encode_name for f in info} == set(schema["properties"])
    required = {f.encode_name for f in info if f.required}
    assert required == set(schema.get("required", [])), name
