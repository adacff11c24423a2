"""The routes of the HTTP contract, as Litestar controllers with stable operation ids (the
tournaments' in ``tournament_routes``). Each handler checks what the contract says of its
input, calls one use case, and shapes its answer; refusals become problems in ``problems``.
``GET /turn`` and ``POST /moves`` are usually answered before these handlers (``hot``), with
the same bytes."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State
from litestar.handlers import HTTPRouteHandler
from litestar.params import Parameter
from litestar.response import ServerSentEvent

from .. import __version__
from ..core.documents import check_name
from ..core.refusals import Refusal
from ..core.views import Shown
from ..games import ORIGINS, RULESETS
from .access import client_address, organizer_of
from .caching import (
    NOT_MODIFIED,
    final_tag,
    held,
    immutable,
    immutable_when_over,
    not_modified,
)
from .codes import RULESET_CODES
from .creation import game_created
from .game_stream import game_events
from .idempotent import REPLAYED, IdempotencyKey, once
from .models import (
    Claimed,
    ClaimSeat,
    CreateGame,
    GameCreated,
    MoveAccepted,
    MoveSubmission,
    RulesetCode,
    RulesetInfo,
    RulesetOption,
    Turn,
    move_accepted,
)
from .params import (
    ORGANIZER,
    SECURITY,
    Before,
    GameId,
    PageLimit,
    Wait,
    WaitNext,
    cursor_of,
    services_of,
    trusted_of,
    waiting,
)
from .problems import (
    check_id,
    problems,
    read_body,
    request_bearer,
    require_seat_token,
)
from .replay_views import GamePage, GameSummary
from .tournament_routes import MeController, TournamentController
from .views import shape_name

__all__ = ["controllers"]

log = logging.getLogger("referee")
#: the listing of one tournament's games
OfTournament = Annotated[
    str | None,
    Parameter(
        max_length=64,
        description="only this tournament's games (its tables); 404 for an unknown tournament",
    ),
]


class SystemController(Controller):
    """Whether the process is up, and whether its Redis answers."""

    tags: Sequence[str] | None = ["system"]

    @get("/healthz", operation_id="healthz", summary="The process is up")
    async def healthz(self) -> dict[str, str]:
        return {"status": "ok"}

    @get("/readyz", operation_id="readyz", summary="Redis is reachable", responses=problems(503))
    async def readyz(self, state: State) -> dict[str, str]:
        try:
            await services_of(state).ready()
        except Exception:
            raise Refusal("redis-unreachable", "Redis does not answer", retry_after=1) from None
        return {"status": "ready"}


class RulesetController(Controller):
    """The rulesets, and a score calculator for each."""

    path = "/v1/rulesets"
    tags: Sequence[str] | None = ["rulesets"]

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
                    *ORIGINS.get(ruleset.id, ("referee", __version__)),
                    [
                        RulesetCode(code, declared.status, declared.meaning)
                        for code, (owner, declared) in RULESET_CODES.items()
                        if owner == ruleset.id
                    ],
                )
            )
        return out

    @post("/{ruleset_id:str}/score", include_in_schema=False)
    async def score_unknown(self, ruleset_id: Annotated[str, Parameter(max_length=64)]) -> None:
        """Each ruleset has a score route of its own: any other id names no ruleset."""
        raise Refusal(
            "ruleset-not-found", f"there is no ruleset {ruleset_id!r}", field="ruleset_id"
        )


def _score_route(ruleset: Any) -> HTTPRouteHandler:
    """A ruleset's score calculator (its ``scorer``): the body read strictly, the answer its
    pure function gives, each Struct the ruleset's own."""
    scorer = ruleset.scorer
    operation_id = f"score{shape_name(ruleset.id)}"

    async def score(request: Request[Any, Any, Any]) -> Any:
        return scorer.score(await read_body(request, scorer.request))

    score.__annotations__["return"] = scorer.response  # the answer's shape, for the contract
    return post(
        f"/v1/rulesets/{ruleset.id}/score",
        operation_id=operation_id,
        name=operation_id,
        status_code=200,
        tags=["rulesets"],
        summary=scorer.summary,
        description=scorer.description,
        responses=problems(400, 413),
    )(score)


class GameController(Controller):
    """Games: create, watch, claim a seat, and play it (turn, moves)."""

    path = "/v1/games"
    tags: Sequence[str] | None = ["games"]

    @post(
        "/",
        operation_id="createGame",
        status_code=201,
        summary="Create a game (with an organizer key, where the referee has them)",
        security=ORGANIZER,
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429),
        response_headers=REPLAYED,
    )
    async def create_game(
        self, request: Request[Any, Any, Any], state: State, idempotency_key: IdempotencyKey = None
    ) -> Response[GameCreated]:
        owner = organizer_of(request)  # 401 / 403 before the body is read

        async def make() -> GameCreated:
            data = await read_body(request, CreateGame, names_ruleset=True)
            return await game_created(services_of(state), data, owner)

        return await once(request, state, idempotency_key, f"createGame {owner}", 201, make)

    @get(
        "/",
        operation_id="listGames",
        summary="Games, newest first, a page at a time (a tournament's alone with ?tournament=)",
        responses=problems(400, 404),
    )
    async def list_games(
        self,
        state: State,
        limit: PageLimit = 20,
        before: Before = None,
        tournament: OfTournament = None,
    ) -> GamePage:
        services = services_of(state)
        if tournament is not None:
            check_id(tournament, "tournament")
            await services.tournaments.load(tournament)  # 404 for an unknown tournament
        page = await services.games.listed(cursor_of(before), limit, tournament or "")
        return GamePage(games=[GameSummary(**g) for g in page["games"]], next=page["next"])

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        summary="The public view of a game",
        responses=problems(400, 404),
    )
    async def get_game(self, state: State, game_id: GameId) -> Shown:
        check_id(game_id)
        return await services_of(state).games.view(game_id)

    @post(
        "/{game_id:str}/seats",
        operation_id="claimSeat",
        status_code=201,
        summary="Claim an open seat (with the game's invite code, if it has one)",
        responses=problems(400, 403, 404, 409, 413, 422, 429),
        response_headers=REPLAYED,
    )
    async def claim_seat(
        self,
        request: Request[Any, Any, Any],
        state: State,
        game_id: GameId,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Claimed]:
        check_id(game_id)

        async def make() -> Claimed:
            data = await read_body(request, ClaimSeat)
            league = services_of(state).league
            seat, token = await services_of(state).games.claim(
                game_id,
                data.name,
                data.client_seed,
                data.invite_code,
                check=lambda: league.refuse_bot_names([("name", data.name)]),
            )
            return Claimed(game_id, seat, check_name(data.name, "name"), token)  # as stored

        # a claim needs no credentials: its key counts for the client's address alone
        address = client_address(request.scope, trusted_of(request))
        return await once(
            request, state, idempotency_key, f"claimSeat {game_id} a{address}", 201, make
        )

    @get(
        "/{game_id:str}/turn",
        operation_id="getTurn",
        security=SECURITY,
        guards=[require_seat_token],
        summary="What this seat must decide now",
        responses=problems(400, 401, 403, 404, 429),
    )
    async def get_turn(
        self, request: Request[Any, Any, Any], state: State, game_id: GameId, wait: Wait = 0
    ) -> Turn:
        check_id(game_id)
        services = services_of(state)
        async with waiting(request, services, wait):
            turn = await services.seats.wait_turn(game_id, request_bearer(request), wait)
        return Turn(**turn)

    @post(
        "/{game_id:str}/moves",
        operation_id="submitMove",
        status_code=200,
        security=SECURITY,
        guards=[require_seat_token],  # no token: 401 before the body is read
        summary="Submit a decision (any element of legal_moves, verbatim)",
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429),
    )
    async def submit_move(
        self, request: Request[Any, Any, Any], state: State, game_id: GameId, wait: WaitNext = None
    ) -> MoveAccepted:
        check_id(game_id)
        data = await read_body(request, MoveSubmission)
        moves = data.decided()
        services = services_of(state)
        token = request_bearer(request)
        if wait is None:
            return move_accepted(**await services.seats.move(game_id, token, data.seq, moves))
        async with waiting(request, services, wait):
            answer = await services.seats.move_then_turn(game_id, token, data.seq, moves, wait)
        return move_accepted(**answer)

    @get(
        "/{game_id:str}/events",
        operation_id="streamEvents",
        summary="Server-Sent Events of public events (resumable with Last-Event-ID)",
        responses=problems(400, 404, 409, 429),
        media_type="text/event-stream",
    )
    async def events(
        self, request: Request[Any, Any, Any], state: State, game_id: GameId
    ) -> ServerSentEvent:
        return await game_events(request, state, game_id)

    @get(
        "/{game_id:str}/record",
        operation_id="getRecord",
        summary="The record: what is disclosed while the game runs; all, and the seed, at the end",
        responses={**problems(400, 404, 409), **NOT_MODIFIED},
    )
    async def record(
        self, state: State, request: Request[Any, Any, Any], game_id: GameId
    ) -> Response[Shown]:
        check_id(game_id)
        return immutable_when_over(request, await services_of(state).games.record(game_id))

    @get(
        "/{game_id:str}/replay",
        operation_id="getReplay",
        summary="A finished game step by step, from its record, verified",
        responses={**problems(400, 404, 409), **NOT_MODIFIED},
    )
    async def replay(
        self, state: State, request: Request[Any, Any, Any], game_id: GameId
    ) -> Response[dict[str, Any]]:
        check_id(game_id)
        games = services_of(state).games
        # a copy held is known from the view, before the replay is computed
        tag = final_tag(await games.view(game_id))
        if tag is not None and held(request, tag):
            return not_modified(tag)
        replay: Any = await games.replay(game_id)  # encoded already (computed in a thread)
        return Response(replay) if tag is None else immutable(request, tag, replay)


def controllers() -> list[Any]:
    """Every route handler of the API, a score calculator for each registered ruleset that
    has one among them: called once the registry is whole (after ``load_plugins``)."""
    scores = [
        _score_route(ruleset)
        for ruleset in RULESETS.values()
        if getattr(ruleset, "scorer", None) is not None
    ]
    return [
        SystemController,
        RulesetController,
        *scores,
        GameController,
        TournamentController,
        MeController,
    ]
