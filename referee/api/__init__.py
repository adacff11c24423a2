"""The HTTP contract: a tiny Litestar app factory, controllers with stable operation ids,
and RFC 9457 problem+json for every error."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Litestar, Request, Response, get, post
from litestar.datastructures import State
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.plugins import ScalarRenderPlugin
from litestar.openapi.spec import (
    Components,
    Discriminator,
    Link,
    OpenAPIType,
    Reference,
    Schema,
    SecurityScheme,
)
from litestar.params import JSONBody, Parameter
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .. import __version__
from .._gc import settle_collector
from ..games import RULESETS, GameError, commitment, score_area, score_marks, warm_caches
from ..games.choice import FreeThrow, Mark
from ..games.choice_specials import Fdh, Kur, Minus1, Minus2, Null, SuppenKasper
from ..games.chopta import Place, Swap
from ..service import ApiError, GameService
from ..settings import Settings
from ..store import Store
from ..tournament_service import TournamentService
from ..tournaments import TournamentSpec
from ._fast import GAME_ID, FrontedLitestar, bearer
from .models import (
    Claimed,
    ClaimSeat,
    CreateGame,
    GameCreated,
    MoveAccepted,
    MoveSubmission,
    NextDecision,
    Problem,
    Register,
    Registered,
    RulesetInfo,
    RulesetOption,
    ScoreOptions,
    ScoreRequest,
    SeatSpec,
    SeatToken,
    TournamentCreated,
    Turn,
)

__all__ = ["create_app", "openapi_document"]

log = logging.getLogger("referee")
PROBLEM = "application/problem+json"
PROBLEM_BASE = "https://referee.invalid/problems/"
TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Body too large",
    422: "Rule violation",
    500: "Internal error",
    503: "Unavailable",
}
CODES = {
    400: "invalid-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    409: "conflict",
    413: "body-too-large",
    422: "unprocessable",
    500: "internal-error",
    503: "unavailable",
}


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    return {
        status: ResponseSpec(
            data_container=Problem,
            media_type=PROBLEM,
            description=TITLES.get(status, "Error"),
            generate_examples=False,
        )
        for status in statuses
    }


def _require_bearer(connection: Any, _: Any) -> None:
    """Guard: the seat routes need a token, checked before the body is read."""
    if _bearer(connection) is None:
        raise ApiError(401, "unauthorized", "send the seat's token as 'Authorization: Bearer'")


def problem_response(
    request: Request | None,
    status: int,
    code: str,
    detail: str,
    field: str | None = None,
    **extra: Any,
) -> Response:
    body = Problem(
        type=PROBLEM_BASE + code,
        title=TITLES.get(status, "Error"),
        status=status,
        detail=detail,
        code=code,
        field=field,
        current_seq=extra.get("current_seq"),
        instance=str(request.url.path) if request is not None else None,
    )
    return Response(msgspec.json.encode(body), status_code=status, media_type=PROBLEM)


_AT = re.compile(r" - at `\$(?P<path>[^`]*)`")
_UNKNOWN = re.compile(r"unknown field `(?P<name>[^`]*)`")


def _validation_handler(request: Request, exc: ValidationException) -> Response:
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
                field = "body" if key == "data" or item.get("source") == "body" else key
                field += at.group("path") if at else ""
                field += "." + unknown.group("name") if unknown else ""
    detail = "; ".join(messages) or str(exc.detail)
    return problem_response(request, 400, "invalid-request", detail, field)


def _api_error_handler(request: Request, exc: ApiError) -> Response:
    return problem_response(request, exc.status, exc.code, exc.detail, exc.field, **exc.extra)


def _http_handler(request: Request, exc: HTTPException) -> Response:
    status = exc.status_code
    response = problem_response(
        request, status, CODES.get(status, f"http-{status}"), str(exc.detail)
    )
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


def _redis_down_handler(request: Request, exc: Exception) -> Response:
    log.warning("redis unavailable on %s: %r", request.url.path, exc)
    response = problem_response(
        request, 503, "redis-unavailable", "the game store does not answer; nothing changed"
    )
    response.headers["Retry-After"] = "1"
    return response


def _internal_handler(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s", request.url.path)
    return problem_response(request, 500, "internal-error", "the referee failed; nothing changed")


def _service(state: State) -> GameService:
    return state.service


def _check_id(game_id: str, code: str = "game-not-found") -> None:
    if not GAME_ID.fullmatch(game_id):
        raise ApiError(404, code, f"there is no such id: {game_id!r}")


def _bearer(request: Any) -> str | None:
    """The bearer token of a request (or any connection), or None."""
    return bearer(request.headers.get("authorization", ""))


SECURITY = [{"bearer": []}]
GameId = Annotated[str, Parameter(description="the game's id", max_length=64)]


class SystemController(Controller):
    tags: ClassVar[list[str]] = ["system"]

    @get("/healthz", operation_id="healthz", summary="The process is up")
    async def healthz(self) -> dict[str, str]:
        return {"status": "ok"}

    @get("/readyz", operation_id="readyz", summary="Redis is reachable", responses=problems(503))
    async def readyz(self, state: State) -> dict[str, str]:
        try:
            await state.redis.ping()
        except Exception:
            raise ApiError(503, "redis-unreachable", "Redis does not answer") from None
        return {"status": "ready"}


class RulesetController(Controller):
    path = "/v1/rulesets"
    tags: ClassVar[list[str]] = ["rulesets"]

    @get("/", operation_id="listRulesets", summary="Rulesets, their options and limits")
    async def list_rulesets(self) -> list[RulesetInfo]:
        out = []
        for ruleset in RULESETS.values():
            schema = msgspec.json.schema(ruleset.Options)
            definition = schema["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
            defaults = msgspec.to_builtins(ruleset.Options())
            out.append(
                RulesetInfo(
                    ruleset.id,
                    ruleset.title,
                    ruleset.min_seats,
                    ruleset.max_seats,
                    [
                        RulesetOption(name, defaults[name], prop)
                        for name, prop in definition["properties"].items()
                    ],
                    [t.__struct_config__.tag for t in getattr(ruleset.Move, "__args__", ())],
                )
            )
        return out

    @post(
        "/{ruleset_id:str}/score",
        operation_id="scoreCalculator",
        status_code=200,
        summary="Score CHOICE marks or a CHOPTA play area",
        responses=problems(400, 404, 413, 422),
    )
    async def score(
        self, ruleset_id: Annotated[str, Parameter(max_length=64)], data: JSONBody[ScoreRequest]
    ) -> dict[str, Any]:
        if ruleset_id not in RULESETS:
            raise ApiError(
                404, "unknown-ruleset", f"unknown ruleset {ruleset_id!r}", field="ruleset_id"
            )
        if ruleset_id == "chopta":
            if data.area is None or data.marks is not None:
                raise ApiError(
                    422, "area-required", "CHOPTA scores an 'area' of dice", field="area"
                )
            bonus = bool(data.options and data.options.bonus)
            face = bool(data.options and data.options.face_value)
            result = score_area(data.area, bonus=bonus, face_value=face)
            return {"total": result.points, **msgspec.to_builtins(result)}
        if data.marks is None or data.area is not None or data.options is not None:
            raise ApiError(
                422, "marks-required", "CHOICE scores 'marks' (sum -> marks)", field="marks"
            )
        result = score_marks({int(k): v for k, v in data.marks.items()})
        return msgspec.to_builtins(result)


class GameController(Controller):
    path = "/v1/games"
    tags: ClassVar[list[str]] = ["games"]

    @post(
        "/",
        operation_id="createGame",
        status_code=201,
        summary="Create a game",
        responses=problems(400, 413, 422),
    )
    async def create_game(self, state: State, data: JSONBody[CreateGame]) -> GameCreated:
        doc, tokens = await _service(state).create(
            data.ruleset,
            data.options,
            [msgspec.to_builtins(s) for s in data.seats],
            data.deadline_s,
        )
        return GameCreated(
            doc.id,
            doc.ruleset,
            doc.status,
            doc.commitment,
            [SeatToken(i, s.name, tokens[i]) for i, s in enumerate(doc.seats)],
        )

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        summary="The public view of a game",
        responses=problems(400, 404),
    )
    async def get_game(self, state: State, game_id: GameId) -> dict[str, Any]:
        _check_id(game_id)
        service = _service(state)
        game = await service.fresh(game_id)
        if await service.sealed(game):
            return service.sealed_view(game)
        return service.public_view(game)

    @post(
        "/{game_id:str}/seats",
        operation_id="claimSeat",
        status_code=201,
        summary="Claim an open seat",
        responses=problems(400, 404, 409, 413),
    )
    async def claim_seat(self, state: State, game_id: GameId, data: JSONBody[ClaimSeat]) -> Claimed:
        _check_id(game_id)
        seat, token = await _service(state).claim(game_id, data.name, data.client_seed)
        return Claimed(game_id, seat, data.name, token)

    @get(
        "/{game_id:str}/turn",
        operation_id="getTurn",
        security=SECURITY,
        summary="What this seat must decide now",
        responses=problems(400, 401, 403, 404),
    )
    async def get_turn(
        self,
        request: Request,
        state: State,
        game_id: GameId,
        wait: Annotated[float, Parameter(ge=0, le=60, description="long-poll seconds")] = 0,
    ) -> Turn:
        _check_id(game_id)
        turn = await _service(state).wait_turn(game_id, _bearer(request), wait)
        return Turn(**turn)

    @post(
        "/{game_id:str}/moves",
        operation_id="submitMove",
        status_code=200,
        security=SECURITY,
        summary="Submit a decision (any element of legal_moves, verbatim)",
        responses=problems(400, 401, 403, 404, 409, 413, 422),
    )
    async def submit_move(
        self, request: Request, state: State, game_id: GameId, data: JSONBody[MoveSubmission]
    ) -> MoveAccepted:
        _check_id(game_id)
        if (data.move is None) == (data.moves is None):
            raise ApiError(
                422, "move-or-moves", "send exactly one of 'move' and 'moves'", field="move"
            )
        moves = [data.move] if data.move is not None else list(data.moves or [])
        result = await _service(state).move(game_id, _bearer(request), data.seq, moves)
        return MoveAccepted(**result)

    @get(
        "/{game_id:str}/events",
        operation_id="streamEvents",
        summary="Server-Sent Events of public events (resumable with Last-Event-ID)",
        responses=problems(400, 404, 409),
        media_type="text/event-stream",
    )
    async def events(self, request: Request, state: State, game_id: GameId) -> ServerSentEvent:
        _check_id(game_id)
        service = _service(state)
        game = await service.fresh(game_id)  # 404 for an unknown game
        await service.check_unsealed(game)  # 409 while its dice are dealt elsewhere
        finished = game.doc.status == "finished"
        # a grouped game's stored game_over withheld its seed: told now, the group being over
        game_over = (
            msgspec.json.encode(service.game_over_event(game, sealed=False)).decode()
            if finished
            else ""
        )
        last_id = request.headers.get("last-event-id") or "0"
        if not re.fullmatch(r"\d+(-\d+)?", last_id):
            last_id = "0"

        async def stream() -> AsyncIterator[ServerSentEventMessage]:
            cursor = last_id
            while True:
                # a finished game has nothing more to wait for: read what is left, if its
                # stream has not expired yet (REFEREE_EVENTS_RETENTION_S), then end
                entries = await service.events_after(game_id, cursor, None if finished else 15)
                if not entries and finished:
                    yield ServerSentEventMessage(data=game_over, event="game_over", id=cursor)
                    return
                if not entries:
                    yield ServerSentEventMessage(comment="keep-alive")
                    continue
                for entry_id, fields in entries:
                    cursor = entry_id.decode()
                    data = fields[b"e"].decode()
                    kind = msgspec.json.decode(data).get("type", "event")
                    if kind == "game_over":
                        told = game_over if game.doc.group else data
                        yield ServerSentEventMessage(data=told, event=kind, id=cursor)
                        return
                    yield ServerSentEventMessage(data=data, event=kind, id=cursor)

        return ServerSentEvent(stream())

    @get(
        "/{game_id:str}/record",
        operation_id="getRecord",
        summary="The record: what is disclosed while the game runs; all, and the seed, at the end",
        responses=problems(400, 404, 409),
    )
    async def record(self, state: State, game_id: GameId) -> dict[str, Any]:
        _check_id(game_id)
        return await _service(state).record(game_id)


TournamentId = Annotated[str, Parameter(description="the tournament's id", max_length=64)]


class TournamentController(Controller):
    path = "/v1/tournaments"
    tags: ClassVar[list[str]] = ["tournaments"]

    @post(
        "/",
        operation_id="createTournament",
        status_code=201,
        summary="Create a tournament; it starts when its entrants have registered",
        responses=problems(400, 413, 422),
    )
    async def create_tournament(
        self, state: State, data: JSONBody[TournamentSpec]
    ) -> TournamentCreated:
        doc = await state.tournaments.create(data)
        return TournamentCreated(doc.id, doc.status, commitment(doc.seed))

    @post(
        "/{tournament_id:str}/entrants",
        operation_id="registerEntrant",
        status_code=201,
        summary="Register an entrant; its token is shown once",
        responses=problems(400, 404, 409, 413),
    )
    async def register(
        self, state: State, tournament_id: TournamentId, data: JSONBody[Register]
    ) -> Registered:
        _check_id(tournament_id, "tournament-not-found")
        entrant, token = await state.tournaments.register(tournament_id, data.name)
        return Registered(tournament_id, entrant, data.name, token)

    @get(
        "/{tournament_id:str}",
        operation_id="getTournament",
        summary="Rounds, tables and standings with ratings",
        responses=problems(400, 404),
    )
    async def get_tournament(self, state: State, tournament_id: TournamentId) -> dict[str, Any]:
        _check_id(tournament_id, "tournament-not-found")
        return await state.tournaments.get(tournament_id)


class MeController(Controller):
    path = "/v1/me"
    tags: ClassVar[list[str]] = ["tournaments"]

    @get(
        "/next",
        operation_id="nextDecision",
        security=SECURITY,
        guards=[_require_bearer],
        summary="An entrant's next decision across all of its games",
        responses=problems(400, 401, 403, 404),
    )
    async def next_decision(
        self,
        request: Request,
        state: State,
        wait: Annotated[float, Parameter(ge=0, le=60, description="long-poll seconds")] = 0,
    ) -> NextDecision:
        result = await state.tournaments.next_decision(_bearer(request), wait)
        turn = result.pop("turn", None)
        return NextDecision(**result, turn=Turn(**turn) if turn else None)


def create_app(settings: Settings | None = None) -> Litestar:
    """The ASGI app. Without a Redis URL it starts an embedded Valkey for itself."""
    settings = settings or Settings.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: FrontedLitestar) -> AsyncIterator[None]:
        embedded = None
        url = settings.redis_url
        if url is None:
            from ..embedded import embedded_url, start_embedded

            embedded = start_embedded(settings.data_dir)
            url = embedded_url(embedded)
        # no per-socket-call timeouts (redis-py runs each write as a task of its own for
        # them): the store puts one deadline on each of its operations instead
        redis = Redis.from_url(url, max_connections=256, socket_timeout=None)
        blocking = Redis.from_url(url, max_connections=4096, socket_timeout=None)
        app.state.redis = redis
        app.state.service = GameService(
            Store(redis, blocking),
            retention_s=settings.retention_s,
            events_retention_s=settings.events_retention_s,
            recent_games=settings.recent_games,
        )
        app.state.tournaments = TournamentService(app.state.service)
        if settings.fast_routes:
            app.fast.service = app.state.service
        # the app, the engines' caches and the pools live as long as the process (see _gc)
        warm_caches()
        settle_collector()
        service = app.state.service
        tasks = [
            asyncio.create_task(service.sweep_forever(settings.sweep_interval_s)),
            asyncio.create_task(service.watch_commits()),
        ]
        try:
            yield
        finally:
            app.fast.service = None
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=5)
            await service.store.aclose()
            await redis.aclose()
            await blocking.aclose()
            if embedded is not None:
                embedded.stop()

    app = FrontedLitestar(
        route_handlers=[
            SystemController,
            RulesetController,
            GameController,
            TournamentController,
            MeController,
        ],
        lifespan=[lifespan],
        exception_handlers={
            ApiError: _api_error_handler,
            ValidationException: _validation_handler,
            HTTPException: _http_handler,
            GameError: lambda r, e: problem_response(r, 422, e.code, e.message, e.field),
            RedisConnectionError: _redis_down_handler,
            RedisTimeoutError: _redis_down_handler,
            TimeoutError: _redis_down_handler,
            Exception: _internal_handler,
        },
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="referee",
            version=__version__,
            description="A REST/JSON referee for dice-game bot tournaments.",
            path="/docs",
            render_plugins=[ScalarRenderPlugin()],
            components=Components(
                security_schemes={
                    "bearer": SecurityScheme(
                        type="http", scheme="bearer", description="the seat's token"
                    )
                }
            ),
        ),
        debug=False,
    )
    _finish_contract(app)
    return app


_INPUTS = {
    model.__name__: model
    for model in (
        CreateGame,
        SeatSpec,
        ClaimSeat,
        MoveSubmission,
        ScoreRequest,
        ScoreOptions,
        Mark,
        FreeThrow,
        Fdh,
        Null,
        Kur,
        Minus1,
        Minus2,
        SuppenKasper,
        Place,
        Swap,
        TournamentSpec,
        Register,
    )
}

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
        elif key == "type" and isinstance(item, str):
            fields[name] = OpenAPIType(item)
        elif key == "required":
            fields[name] = list(item)
        else:
            fields[name] = _spec(item)
    return Schema(**fields)


_SNAKE = re.compile(r"[A-Z]")
_MODELS = (
    CreateGame,
    ClaimSeat,
    MoveSubmission,
    ScoreRequest,
    GameCreated,
    Claimed,
    MoveAccepted,
    Turn,
    RulesetInfo,
    Problem,
    TournamentSpec,
    Register,
    Registered,
    TournamentCreated,
    NextDecision,
)


def _finish_contract(app: Litestar) -> None:
    """Make the contract as exact as the validators: component schemas come from msgspec
    (tuple lengths, dice ranges, patterns, closed objects), and a created game links to the
    operations that take its id."""
    _, definitions = msgspec.json.schema_components(
        _MODELS, ref_template="#/components/schemas/{name}"
    )
    schema = app.openapi_schema
    components = schema.components.schemas  # type: ignore[union-attr]
    for name, definition in definitions.items():
        converted = _spec(definition)
        model = _INPUTS.get(name)
        if model is not None and model.__struct_config__.forbid_unknown_fields:
            converted.additional_properties = False
        components[name] = converted  # type: ignore[index]
    _open_free_form_objects(schema)
    created = schema.paths["/v1/games"].post.responses["201"]  # type: ignore[index,union-attr]
    created.links = {
        name: Link(operation_id=operation, parameters={"game_id": "$response.body#/id"})
        for name, operation in _GAME_LINKS.items()
    }


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


def openapi_document() -> str:
    """The OpenAPI document of the app, as committed in openapi/openapi.json."""
    schema = create_app(Settings(redis_url="redis://unused")).openapi_schema.to_schema()
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
