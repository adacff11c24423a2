"""The committed contract (``openapi/openapi.json``) made as exact as the validators: the
component schemas come from msgspec (tuple lengths, dice ranges, patterns, closed objects),
the bodies and answers are stated exactly (``contract_schemas``), every operation's edge
answers and headers once (``contract_edge``), and a created game links to the operations
that take its id."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Litestar, Response, Router, get
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import (
    Components,
    Contact,
    Discriminator,
    License,
    Link,
    OpenAPIResponse,
    OpenAPIType,
    Reference,
    Schema,
    SecurityScheme,
    Tag,
)
from litestar.response import Redirect

from .. import __version__
from ..games import RULESETS
from .contract_edge import EDGE_STATUSES, RESPONSE_HEADERS, operations, state_edge
from .contract_schemas import exact_bodies, explicit_optionals, name_unions, typed_answers
from .league_models import (
    LEAGUE_MODELS,
)
from .models import (
    CREATE_GAMES,
    Claimed,
    ClaimSeat,
    GameCreated,
    MoveAccepted,
    OneMove,
    PostalMoves,
    Problem,
    RulesetInfo,
    Turn,
)
from .replay_views import REPLAYS, GamePage
from .tournament_models import (
    CREATE_TOURNAMENTS,
    NextDecision,
    Register,
    Registered,
    TournamentCreated,
)
from .tournament_views import TOURNAMENT_VIEWS
from .views import GAME_VIEWS, RECORDS

__all__ = [
    "DOCS_ASSETS",
    "EDGE_STATUSES",
    "RESPONSE_HEADERS",
    "docs_assets",
    "finish_contract",
    "openapi_config",
    "openapi_json",
]

#: where the docs UI's script and styles are served from (``docs_assets``)
DOCS_ASSETS = "/docs/assets"


#: the docs' page and files: framed by no other site (a page in a frame can be clicked on
#: unseen); Swagger UI's inline script leaves no script policy for the page itself
DOCS_HEADERS = {
    "x-frame-options": "DENY",
    "content-security-policy": "frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
}


async def _docs_headers(response: Response[Any]) -> Response[Any]:
    response.headers.update(DOCS_HEADERS)
    return response


def docs_assets() -> Any:
    """The docs UI's files, from the swagger-ui-py package the referee installs."""
    from pathlib import Path

    import swagger_ui
    from litestar.static_files import create_static_files_router

    static = Path(swagger_ui.__file__).parent / "static"
    return create_static_files_router(
        path=DOCS_ASSETS,
        directories=[static],
        include_in_schema=False,
        name="docs-assets",
        after_request=_docs_headers,
    )


@get("/openapi.json", include_in_schema=False, name="openapi-json")
async def openapi_json() -> Redirect:
    """Where a client looks for the contract first: it is served at /docs/openapi.json."""
    return Redirect("/docs/openapi.json", status_code=308)


_TAGS = {
    "games": "Create a game, watch it, claim a seat, and play it: GET /turn, then POST /moves "
    "(with ?wait= the answer holds the next turn: one request per decision)",
    "tournaments": "Create a tournament, register entrants, follow the standings; an entrant "
    "plays all of its games through nextDecision",
    "league": "Bot accounts with lifetime ratings, the arena (rated games by rating), "
    "challenges and leaderboards; a bot plays all of its games through nextDecision",
    "rulesets": "The rulesets, their options and limits, and a score calculator for each",
    "system": "Whether the process is up and its store answers",
}

#: the creations whose answers hold a token shown once take an Idempotency-Key (README)
_IDEMPOTENT = (
    " Safe to retry with an Idempotency-Key: the same key and body get this answer again "
    "(Idempotent-Replayed: true) for 24 hours, and nothing is made twice. The referee keeps "
    "the answer sealed (AES-GCM) under a key derived from the Idempotency-Key and a server "
    "secret, named by an HMAC of them: Redis never holds a usable token."
)
#: what each operation does, for people reading the contract (the summary is its title)
_DESCRIPTIONS = {
    "healthz": "200 while the process runs, whatever its store does.",
    "readyz": "200 when the store (Redis or Valkey) answers; 503 redis-unreachable otherwise.",
    "listRulesets": "Each ruleset's id, seat limits, options (name, default, JSON Schema) and "
    "move types.",
    "createGame": "A game of one ruleset. A named seat's token is in the answer (shown once); an "
    "open seat is claimed later (claimSeat). The commitment is the SHA-256 of the seed that "
    "makes every die: the seed is shown when the game is over." + _IDEMPOTENT,
    "getGame": "What anyone may see: who sits where, the board, each seat's public figures, who "
    "decides now. Hidden pools and undisclosed decisions never appear here.",
    "claimSeat": "Take an open seat under a name; its token is in the answer (shown once)."
    + _IDEMPOTENT,
    "getTurn": "The seat's status, its seq, its legal moves and its private view. With "
    "?wait=N the answer waits up to N seconds for the seat's turn; without it (or wait=0) it "
    "answers at once. ?wait means the same on every route: seconds the answer may wait.",
    "submitMove": "Send one of legal_moves verbatim with the turn's seq. Sending the same "
    "decision again is answered alike (safe to retry). With ?wait=N the answer also holds the "
    "seat's next turn, long-polled like getTurn (wait=0: the turn as it is, at once): one "
    "request per decision. Without ?wait the answer holds no turn and does not wait.",
    "streamEvents": "Public events as Server-Sent Events; resume with Last-Event-ID. 409 "
    "game-sealed while other games dealt the same dice play on.",
    "listGames": "Every game the referee keeps, newest first: its ruleset, status, who sits "
    "where and whether it is a tournament's table, and which (no more than its sealed view "
    "shows). ?tournament= lists one tournament's games alone. Ask for the next page with "
    "?before= the page's next.",
    "getReplay": "A finished game's every step: each decision and the public view after it, "
    "replayed from the record with the revealed seed, and whether the replay matches what "
    "the referee published (verified). 409 game-not-over while it runs, game-sealed while "
    "other games dealt the same dice play on.",
    "getRecord": "While the game runs, the decisions anyone may see; at the end every decision, "
    "every die and the seed, so that `referee verify` can replay it.",
    "createTournament": "A tournament of one ruleset. It starts when its entrants have "
    "registered; the referee schedules its games and rates the entrants." + _IDEMPOTENT,
    "registerEntrant": "An entrant under a name; its entrant token is in the answer (shown once)."
    + _IDEMPOTENT,
    "listTournaments": "Every tournament the referee keeps, newest first: its ruleset, "
    "status, format, entrants so far and whether registering needs an invite code. Ask for "
    "the next page with ?before= the page's next.",
    "getTournament": "Rounds, tables (with results once their dice group is over) and standings "
    "(by rating, highest first, then points).",
    "createBot": "A bot account under a name (RFC 8266 Nickname, unique whatever its case); "
    "its bot token is in the answer (shown once, kept as a hash). Where the referee has "
    "organizer keys, an organizer creates bots.",
    "getBot": "A bot's profile, status, whether it is in the arena, its lifetime rating per "
    "ruleset (openskill mu, sigma, mu - 3 sigma, provisional under 10 games; wins, draws, "
    "losses), its recent games and its games in play.",
    "rotateBotToken": "A new bot token (shown once); the old one stops working at once. By "
    "the bot itself (its token) or the organizer who created it.",
    "setBotWebhook": "The bot itself (its token) or its organizer sets the URL the referee "
    "calls with each of the bot's turns (a host that is an address not globally routable is "
    "refused, 422 webhook-url-refused), or removes it with null; either way a new signing "
    "secret is answered, once. Games already running keep the webhook they started with.",
    "askBotWebhook": 'The info call, as Battlesnake\'s: the referee POSTs {"type": "info"} '
    "to the bot's webhook, signed as every call is, and takes the answer's name, author, "
    "version, description and color (strings, 200 characters at most) as what the bot says "
    "it is, shown on its profile (webhook.info). By the bot itself or its organizer; a call "
    "that fails is answered with its error, and the profile keeps what the bot said last.",
    "revokeBotToken": "The bot keeps no working token until its organizer gives it one "
    "(rotateBotToken); it leaves the arena.",
    "setBotStatus": "Pause, ban or reinstate a bot (the organizer who created it): a bot "
    "that is not active may not play (403 bot-not-active) and leaves the arena.",
    "joinArena": "Seek rated games of one ruleset and table size until leaveArena, or until "
    "the bot stops asking nextDecision for a minute. The referee pairs bots by rating "
    "(docs/LEAGUE.md); the games come through nextDecision. 429 bot-quota-exceeded: the day's "
    "arena games are used up (field games_per_day), with Retry-After; more concurrent_games "
    "than the referee allows is 422.",
    "leaveArena": "Leave the arena's pool; games in play go on.",
    "getLeaderboard": "A ruleset's bots by mu - 3 sigma, best first, with rank, mu, sigma, "
    "games and wins/draws/losses; ?offset= and ?limit= page it (next_offset).",
    "createChallenge": "Offer another bot a game (ruleset, options, rated or casual, deadline), "
    "open for expires_s seconds; the challenged bot sees it in nextDecision.",
    "getChallenge": "A challenge: open, accepted (with its game_id), declined (with the "
    "reason), canceled by its challenger, or expired.",
    "acceptChallenge": "The challenged bot accepts: the game is created and reaches both bots "
    "through nextDecision. 409 challenge-closed once answered or expired.",
    "declineChallenge": "The challenged bot declines with a machine-readable reason. 409 "
    "challenge-closed once answered or expired.",
    "cancelChallenge": "The challenger withdraws its open challenge: it leaves the opponent's "
    "inbox, and the challenger may challenge that bot again. 403 not-challenger for another "
    "bot; 409 challenge-closed once answered or expired.",
    "decideNext": "One request per decision across all of a bot's (or an entrant's) games: "
    "the decision is made in game_id as submitMove makes it, and the answer is nextDecision's, "
    "waiting up to ?wait=N seconds for the next turn in any of them.",
    "nextDecision": "The entrant's next decision across all of its games: the game, the seat "
    "token to post with, and the turn. With ?wait=N it waits up to N seconds for one. With a "
    "bot token: the bot's next turn in any of its arena and challenge games, or its open "
    "challenges (status challenged).",
}


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="referee",
        version=__version__,
        description="A REST/JSON referee for dice-game bot tournaments. Every answer carries "
        "X-Content-Type-Options: nosniff.",
        path="/docs",
        openapi_router=Router(
            path="/docs", route_handlers=[], include_in_schema=False, after_request=_docs_headers
        ),
        # Swagger UI from the swagger-ui-py wheel, served by the referee (DOCS_ASSETS): the
        # docs load with no network beyond the referee
        render_plugins=[
            SwaggerRenderPlugin(
                path="/",
                js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
                css_url=f"{DOCS_ASSETS}/swagger-ui.css",
                standalone_preset_js_url=f"{DOCS_ASSETS}/swagger-ui-standalone-preset.js",
                favicon=f'<link rel="icon" href="{DOCS_ASSETS}/favicon-32x32.png">',
            )
        ],
        contact=Contact(name="referee: see the README of the repository"),
        license=License(name="MIT", identifier="MIT"),
        tags=[Tag(name=name, description=text) for name, text in _TAGS.items()],
        components=Components(
            security_schemes={
                "bearer": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="a seat's token, for getTurn and submitMove: shown once by "
                    "createGame (a named seat) or claimSeat (an open one), or handed to an "
                    "entrant by nextDecision (seat_token). Not an entrant token",
                ),
                "entrant": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="an entrant token, for nextDecision: shown once by "
                    "registerEntrant. Not a seat's token",
                ),
                "bot": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="a bot's token (bot-...): shown once by createBot and "
                    "rotateBotToken; for the arena, challenges and nextDecision",
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
        if key == "prefixItems" and all(i == item[0] for i in item):
            # a tuple of one kind: items with minItems == maxItems says the same, and every
            # client generator reads it as a list (some make a field per position of a tuple)
            fields["items"] = _spec(item[0])
            continue
        if key == "properties":
            fields[name] = {k: _spec(v) for k, v in item.items()}
        elif key == "discriminator":
            fields[name] = Discriminator(
                property_name=item["propertyName"], mapping=item.get("mapping")
            )
        elif key == "enum" and len(item) == 1:
            fields["const"] = item[0]  # a tag: generated clients make it a literal, not an enum
            fields.setdefault("type", _kind(item))
        elif key == "enum":
            fields[name] = list(item)
            fields.setdefault("type", _kind(item))
        elif key == "anyOf" and "discriminator" in value:
            fields["one_of"] = _spec(item)  # a tagged union: exactly one variant matches
        elif key == "not":
            fields["schema_not"] = _spec(item)
        elif key == "type" and isinstance(item, str):
            fields[name] = OpenAPIType(item)
        elif key == "required":
            fields[name] = list(item)
        else:
            fields[name] = _spec(item)
    return Schema(**fields)


_SNAKE = re.compile(r"[A-Z]")


def _kind(values: list[Any]) -> OpenAPIType | None:
    """The type of an enum's values, stated beside it (msgspec leaves it out)."""
    return OpenAPIType.STRING if all(isinstance(v, str) for v in values) else None


_MODELS = (
    *CREATE_GAMES,
    ClaimSeat,
    OneMove,
    PostalMoves,
    GameCreated,
    Claimed,
    MoveAccepted,
    Turn,
    RulesetInfo,
    Problem,
    *CREATE_TOURNAMENTS,
    Register,
    Registered,
    TournamentCreated,
    NextDecision,
    *GAME_VIEWS,
    *RECORDS,
    *REPLAYS,
    GamePage,
    *TOURNAMENT_VIEWS,
    *LEAGUE_MODELS,
)


def finish_contract(app: Litestar) -> None:
    """Make the contract as exact as the validators: component schemas come from msgspec
    (tuple lengths, dice ranges, patterns, closed objects), and a created game links to the
    operations that take its id."""
    scorers = [s for r in RULESETS.values() if (s := getattr(r, "scorer", None)) is not None]
    _, definitions = msgspec.json.schema_components(
        (*_MODELS, *(shape for s in scorers for shape in (s.request, s.response))),
        ref_template="#/components/schemas/{name}",
    )
    name_unions(definitions)
    explicit_optionals(definitions)
    schema = app.openapi_schema
    components = schema.components.schemas
    for name, definition in definitions.items():
        # a struct that forbids unknown fields is already closed (additionalProperties: false)
        components[name] = _spec(definition)
    _open_free_form_objects(schema)
    state_edge(schema)
    exact_bodies(schema)
    typed_answers(schema)
    _described(schema)
    _optional_wait(schema)
    created = schema.paths["/v1/games"].post.responses["201"]  # type: ignore[index,union-attr]
    assert isinstance(created, OpenAPIResponse)  # written by the route, not a $ref
    created.links = {
        name: Link(operation_id=operation, parameters={"game_id": "$response.body#/id"})
        for name, operation in _GAME_LINKS.items()
    }


def _described(schema: Any) -> None:
    """Each operation's description; nextDecision's 401 names the token it wants."""
    for operation in operations(schema):
        # a ruleset's score route says its own (``Scorer.description``)
        operation.description = _DESCRIPTIONS.get(operation.operation_id, operation.description)
    next_decision = schema.paths["/v1/me/next"].get
    next_decision.responses["401"].description = "Unauthorized: send the entrant token"
    for path in ("/v1/games/{game_id}/turn", "/v1/games/{game_id}/moves"):
        for operation in (schema.paths[path].get, schema.paths[path].post):
            if operation is not None:
                operation.responses["401"].description = "Unauthorized: send the seat's token"


def _optional_wait(schema: Any) -> None:
    """``POST /moves?wait=``: a number from 0 to 60 when sent (Litestar states an optional
    number as number-or-null and drops its ``minimum`` of 0)."""
    for parameter in schema.paths["/v1/games/{game_id}/moves"].post.parameters:
        if parameter.name == "wait":
            described = parameter.schema.description
            parameter.schema = Schema(
                type=OpenAPIType.NUMBER, minimum=0, maximum=60, description=described
            )


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
