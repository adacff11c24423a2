"""The contract's bodies and answers as exact as msgspec states them (``contract.
finish_contract``): each operation's body one object, or one of several told apart by
``ruleset``; the views one per ruleset; the unions of moves and seat views named once; an
answer's optional fields absent, never null."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar.openapi.spec import (
    Discriminator,
    OpenAPIMediaType,
    Reference,
    RequestBody,
    Schema,
)

from ..games import RULESETS
from .league_models import (
    ChangeBotStatus,
    CreateBot,
    CreateChallenge,
    DeclineChallenge,
    JoinArena,
    SetWebhook,
)
from .models import (
    CREATE_GAMES,
    MOVES,
    ClaimSeat,
    MoveAccepted,
    OneMove,
    PostalMoves,
    Problem,
)
from .replay_views import REPLAYS
from .tournament_models import CREATE_TOURNAMENTS, NextDecision, Register
from .tournament_views import TOURNAMENT_VIEWS
from .views import GAME_VIEWS, RECORDS, SEAT_VIEWS, shape_name

__all__ = ["exact_bodies", "explicit_optionals", "name_unions", "ref", "typed_answers"]


#: what each operation's body is: one object, or one of several (told apart by ``ruleset``
#: where it names one; OneMove and PostalMoves by which of ``move`` and ``moves`` they hold)
_BODIES: dict[tuple[str, str], tuple[tuple[Any, ...], str | None]] = {
    ("/v1/games", "post"): (
        CREATE_GAMES,
        "ruleset",
    ),
    ("/v1/games/{game_id}/seats", "post"): ((ClaimSeat,), None),
    ("/v1/games/{game_id}/moves", "post"): ((OneMove, PostalMoves), None),
    ("/v1/tournaments", "post"): (
        CREATE_TOURNAMENTS,
        "ruleset",
    ),
    ("/v1/tournaments/{tournament_id}/entrants", "post"): ((Register,), None),
    ("/v1/bots", "post"): ((CreateBot,), None),
    ("/v1/me/games/{game_id}/moves", "post"): ((OneMove, PostalMoves), None),
    ("/v1/bots/{name}/status", "post"): ((ChangeBotStatus,), None),
    ("/v1/bots/{name}/webhook", "post"): ((SetWebhook,), None),
    ("/v1/arena", "post"): ((JoinArena,), None),
    ("/v1/challenges", "post"): ((CreateChallenge,), None),
    ("/v1/challenges/{challenge_id}/decline", "post"): ((DeclineChallenge,), None),
}


def ref(model: Any) -> Reference:
    return Reference(ref=f"#/components/schemas/{model.__name__}")


def exact_bodies(schema: Any) -> None:
    """The handlers read their bodies themselves, strictly (``problems.read_body``): each
    operation's body is stated here, one object per ruleset where it names one (and each
    ruleset's score calculator's, from the registry)."""
    bodies = dict(_BODIES)
    for ruleset in RULESETS.values():
        if (scorer := getattr(ruleset, "scorer", None)) is not None:
            bodies[(f"/v1/rulesets/{ruleset.id}/score", "post")] = ((scorer.request,), None)
    for (path, method), (models, tag) in bodies.items():
        if len(models) == 1:
            body_schema: Schema | Reference = ref(models[0])
        else:
            union = Schema(one_of=[ref(model) for model in models])
            if tag is not None:
                mapping = {model.__struct_config__.tag: ref(model).ref for model in models}
                union.discriminator = Discriminator(property_name=tag, mapping=mapping)
            name = _BODY_NAMES.get((path, method))
            if name is None:
                body_schema = union
            else:
                schema.components.schemas[name] = union
                body_schema = Reference(ref=f"#/components/schemas/{name}")
        operation = getattr(schema.paths[path], method)
        operation.request_body = RequestBody(
            content={"application/json": OpenAPIMediaType(schema=body_schema)}, required=True
        )


#: the unions of the bodies, each a component of its own: every ruleset's new game, tournament
_BODY_NAMES = {("/v1/games", "post"): "CreateGame", ("/v1/tournaments", "post"): "CreateTournament"}

#: the answers the handlers build as plain values (the views), one per ruleset, each union a
#: component of its own
_ANSWERS: dict[tuple[str, str], tuple[str, tuple[Any, ...]]] = {
    ("/v1/games/{game_id}", "get"): ("GameView", GAME_VIEWS),
    ("/v1/games/{game_id}/record", "get"): ("GameRecord", RECORDS),
    ("/v1/games/{game_id}/replay", "get"): ("GameReplay", REPLAYS),
    ("/v1/tournaments/{tournament_id}", "get"): ("TournamentView", TOURNAMENT_VIEWS),
}


#: the answers encoded as their Structs are: what each field may be is exactly what it is sent as
_ANSWERED = (MoveAccepted, Problem, NextDecision)


def explicit_optionals(definitions: dict[str, Any]) -> None:
    """Optional or nullable, never left to guess: a field of an answer that omits its defaults
    is absent rather than null (so optional, not nullable), and every field of one that
    omits nothing is sent, null or not (so required)."""
    for struct in _ANSWERED:
        definition = definitions[struct.__name__]
        properties = definition["properties"]
        if struct.__struct_config__.omit_defaults:
            for field in msgspec.structs.fields(struct):
                if field.default is None and field.encode_name in properties:
                    prop = properties[field.encode_name]
                    kept = [x for x in prop.get("anyOf", ()) if x != {"type": "null"}]
                    if len(kept) == 1 and len(prop["anyOf"]) == 2:
                        rest = {k: v for k, v in prop.items() if k != "anyOf"}
                        properties[field.encode_name] = {**kept[0], **rest} if rest else kept[0]
        else:
            definition["required"] = list(properties)


def _union_names() -> dict[frozenset[str], str]:
    """The unions of moves and seat views that the Structs hold, by the components they join:
    every move (``AnyMove``), each ruleset's moves (``<Ruleset>Move``), the seat views
    (``SeatView``)."""

    def refs(types: Any) -> frozenset[str]:
        return frozenset(ref(t).ref for t in types)

    names = {refs(MOVES): "AnyMove", refs(SEAT_VIEWS): "SeatView"}
    for ruleset in RULESETS.values():
        moves = getattr(ruleset.Move, "__args__", ())
        if len(moves) > 1:
            names.setdefault(refs(moves), f"{shape_name(ruleset.id)}Move")
    return names


def name_unions(definitions: dict[str, Any]) -> None:
    """Each union of moves or seat views, one component that the others reference, rather
    than the same ``oneOf`` copied into each place it appears."""
    names = _union_names()
    found: dict[str, Any] = {}

    def named(node: Any) -> Any:
        if isinstance(node, dict):
            members = node.get("oneOf", node.get("anyOf"))
            if members is not None and "discriminator" in node:
                key = frozenset(x.get("$ref", "") for x in members)
                if key in names:
                    found[names[key]] = node
                    return {"$ref": f"#/components/schemas/{names[key]}"}
            return {k: named(v) for k, v in node.items()}
        if isinstance(node, list):
            return [named(v) for v in node]
        return node

    for name in list(definitions):
        definitions[name] = named(definitions[name])
    definitions.update(found)


def typed_answers(schema: Any) -> None:
    """The views are built as plain values (``referee.core.views``) and described by
    ``referee.web.views`` and ``tournament_views``: each 200 answer is one of them, told
    apart by ``ruleset``."""
    replaced: set[str] = set()
    for (path, method), (name, models) in _ANSWERS.items():
        mapping = {model.__struct_config__.tag: ref(model).ref for model in models}
        schema.components.schemas[name] = Schema(
            one_of=[ref(model) for model in models],
            discriminator=Discriminator(property_name="ruleset", mapping=mapping),
        )
        answer = Reference(ref=f"#/components/schemas/{name}")
        response = getattr(schema.paths[path], method).responses["200"]
        before = response.content["application/json"].schema if response.content else None
        response.content = {"application/json": OpenAPIMediaType(schema=answer)}
        # the handler's annotation (e.g. a Struct base, or one of it and a dict), if now unused
        replaced.update(_refs(before))
    for unused in replaced:
        if msgspec.json.encode(schema.to_schema()).count(unused.encode()) == 0:
            del schema.components.schemas[unused.rpartition("/")[2]]


def _refs(node: Any) -> set[str]:
    """The component references in an OpenAPI schema object."""
    if isinstance(node, Reference):
        return {node.ref}
    found: set[str] = set()
    for part in getattr(node, "one_of", None) or getattr(node, "any_of", None) or ():
        found |= _refs(part)
    return found
