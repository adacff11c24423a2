"""The committed contract (``openapi/openapi.json``) made as exact as the validators: the
component schemas come from msgspec (tuple lengths, dice ranges, patterns, closed objects),
and a created game links to the operations that take its id."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Litestar
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin
from litestar.openapi.spec import (
    Components,
    Discriminator,
    Link,
    OpenAPIMediaType,
    OpenAPIType,
    Reference,
    RequestBody,
    Schema,
    SecurityScheme,
)

from .. import __version__
from .models import (
    AreaRequest,
    AreaScored,
    ChoiceScore,
    Claimed,
    ClaimSeat,
    CreateChoiceGame,
    CreateChoiceSpecialsGame,
    CreateChoiceSpecialsTournament,
    CreateChoiceTournament,
    CreateChoptaGame,
    CreateChoptaTournament,
    GameCreated,
    MarksRequest,
    MoveAccepted,
    NextDecision,
    OneMove,
    PostalMoves,
    Problem,
    Register,
    Registered,
    RulesetInfo,
    TournamentCreated,
    Turn,
)

__all__ = ["finish_contract", "openapi_config"]


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="referee",
        version=__version__,
        description="A REST/JSON referee for dice-game bot tournaments.",
        path="/docs",
        render_plugins=[ScalarRenderPlugin()],
        components=Components(
            security_schemes={
                "bearer": SecurityScheme(
                    type="http", scheme="bearer", description="the seat's token"
                ),
                "organizer": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="an organizer key: needed to create games and tournaments "
                    "where the referee has organizer keys (REFEREE_ORGANIZER_KEYS); 401 "
                    "organizer-key-required without one, 403 organizer-key-refused with a "
                    "wrong one. A referee with no keys lets anyone create",
                ),
            }
        ),
    )


# Operations reachable from a created game, for clients and for stateful tests.
_GAME_LINKS = {
    "GetGame": "getGame",
    "GetTurn": "getTurn",
    "SubmitMove": "submitMove",
    "GetRecord": "getRecord",
    "ClaimSeat": "claimSeat",
}


def _spec(value: Any) -> Any:
    """A msgspec JSON Schema (dict) as Litestar's OpenAPI spec objects."""
    if isinstance(value, list):
        return [_spec(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$ref" in value:
        return Reference(ref=value["$ref"])
    fields: dict[str, Any] = {}
    for key, item in value.items():
        name = _SNAKE.sub(lambda m: "_" + m.group(0).lower(), key)
        if key == "items" and item is False:
            continue  # a tuple: prefixItems with minItems == maxItems already fix its length
        if key == "properties":
            fields[name] = {k: _spec(v) for k, v in item.items()}
        elif key == "discriminator":
            fields[name] = Discriminator(
                property_name=item["propertyName"], mapping=item.get("mapping")
            )
        elif key == "enum" and len(item) == 1:
            fields["const"] = item[0]  # a tag: generated clients make it a literal, not an enum
        elif key == "type" and isinstance(item, str):
            fields[name] = OpenAPIType(item)
        elif key == "required":
            fields[name] = list(item)
        else:
            fields[name] = _spec(item)
    return Schema(**fields)


_SNAKE = re.compile(r"[A-Z]")
_MODELS = (
    CreateChoiceGame,
    CreateChoiceSpecialsGame,
    CreateChoptaGame,
    ClaimSeat,
    OneMove,
    PostalMoves,
    MarksRequest,
    AreaRequest,
    ChoiceScore,
    AreaScored,
    GameCreated,
    Claimed,
    MoveAccepted,
    Turn,
    RulesetInfo,
    Problem,
    CreateChoiceTournament,
    CreateChoiceSpecialsTournament,
    CreateChoptaTournament,
    Register,
    Registered,
    TournamentCreated,
    NextDecision,
)


def finish_contract(app: Litestar) -> None:
    """Make the contract as exact as the validators: component schemas come from msgspec
    (tuple lengths, dice ranges, patterns, closed objects), and a created game links to the
    operations that take its id."""
    _, definitions = msgspec.json.schema_components(
        _MODELS, ref_template="#/components/schemas/{name}"
    )
    schema = app.openapi_schema
    components = schema.components.schemas  # type: ignore[union-attr]
    for name, definition in definitions.items():
        # a struct that forbids unknown fields is already closed (additionalProperties: false)
        components[name] = _spec(definition)  # type: ignore[index]
    _open_free_form_objects(schema)
    _limits_and_security(schema)
    _exact_bodies(schema)
    _optional_wait(schema)
    created = schema.paths["/v1/games"].post.responses["201"]  # type: ignore[index,union-attr]
    created.links = {
        name: Link(operation_id=operation, parameters={"game_id": "$response.body#/id"})
        for name, operation in _GAME_LINKS.items()
    }


#: what each operation's body is: one object, or one of several (told apart by ``ruleset``
#: where it names one; OneMove and PostalMoves by which of ``move`` and ``moves`` they hold)
_BODIES: dict[tuple[str, str], tuple[tuple[Any, ...], str | None]] = {
    ("/v1/games", "post"): (
        (CreateChoiceGame, CreateChoiceSpecialsGame, CreateChoptaGame),
        "ruleset",
    ),
    ("/v1/games/{game_id}/seats", "post"): ((ClaimSeat,), None),
    ("/v1/games/{game_id}/moves", "post"): ((OneMove, PostalMoves), None),
    ("/v1/tournaments", "post"): (
        (CreateChoiceTournament, CreateChoiceSpecialsTournament, CreateChoptaTournament),
        "ruleset",
    ),
    ("/v1/tournaments/{tournament_id}/entrants", "post"): ((Register,), None),
    ("/v1/rulesets/choice/score", "post"): ((MarksRequest,), None),
    ("/v1/rulesets/choice-specials/score", "post"): ((MarksRequest,), None),
    ("/v1/rulesets/chopta/score", "post"): ((AreaRequest,), None),
}


def _ref(model: Any) -> Reference:
    return Reference(ref=f"#/components/schemas/{model.__name__}")


def _exact_bodies(schema: Any) -> None:
    """The handlers read their bodies themselves, strictly (``problems.read_body``): each
    operation's body is stated here, one object per ruleset where it names one."""
    for (path, method), (models, tag) in _BODIES.items():
        if len(models) == 1:
            body_schema: Schema | Reference = _ref(models[0])
        else:
            body_schema = Schema(one_of=[_ref(model) for model in models])
            if tag is not None:
                mapping = {model.__struct_config__.tag: _ref(model).ref for model in models}
                body_schema.discriminator = Discriminator(property_name=tag, mapping=mapping)
        operation = getattr(schema.paths[path], method)
        operation.request_body = RequestBody(
            content={"application/json": OpenAPIMediaType(schema=body_schema)}, required=True
        )


def _optional_wait(schema: Any) -> None:
    """``POST /moves?wait=``: a number from 0 to 60 when sent (Litestar states an optional
    number as number-or-null and drops its ``minimum`` of 0)."""
    for parameter in schema.paths["/v1/games/{game_id}/moves"].post.parameters:
        if parameter.name == "wait":
            described = parameter.schema.description
            parameter.schema = Schema(
                type=OpenAPIType.NUMBER, minimum=0, maximum=60, description=described
            )


def _limits_and_security(schema: Any) -> None:
    """Every operation but the health checks may meet the shared rate limit (429), and one
    with no security of its own is public (``security: []``)."""
    too_many = schema.paths["/v1/games/{game_id}/moves"].post.responses["429"]
    for path, item in schema.paths.items():
        for method in ("get", "post"):
            operation = getattr(item, method, None)
            if operation is None:
                continue
            if operation.security is None:
                operation.security = []
            if path not in ("/healthz", "/readyz") and "429" not in operation.responses:
                operation.responses["429"] = too_many


def _open_free_form_objects(node: Any, seen: set[int] | None = None) -> None:
    """``dict[str, Any]`` renders as a bare object; say that any property is welcome, so
    generated clients type it as a map of anything rather than an empty object."""
    seen = set() if seen is None else seen
    if id(node) in seen or node is None or isinstance(node, (str, int, float, bool)):
        return
    seen.add(id(node))
    if isinstance(node, Schema):
        kind = node.type
        if (
            (kind == OpenAPIType.OBJECT or kind == "object")
            and not node.properties
            and node.additional_properties is None
        ):
            node.additional_properties = True
    if isinstance(node, dict):
        children = list(node.values())
    elif isinstance(node, (list, tuple)):
        children = list(node)
    elif hasattr(node, "__dataclass_fields__"):
        children = [getattr(node, name) for name in node.__dataclass_fields__]
    else:
        return
    for child in children:
        _open_free_form_objects(child, seen)
