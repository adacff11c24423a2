"""The routes of tournaments: create one, list them, register an entrant, watch one, and an
entrant's next decision across its games (``/v1/me/next``). As in ``routes``, each handler
checks its input, calls one use case and shapes its answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State

from ..core.documents import check_name
from ..core.league import bot_token_hash, is_bot_token
from ..games import commitment
from .access import client_address, organizer_of
from .idempotent import REPLAYED, IdempotencyKey, once
from .params import (
    ENTRANT,
    ORGANIZER,
    Before,
    PageLimit,
    TournamentId,
    Wait,
    cursor_of,
    services_of,
    trusted_of,
    waiting,
)
from .problems import check_id, problems, read_body, request_bearer, require_entrant_token
from .tournament_models import (
    CreateTournament,
    NextDecision,
    Register,
    Registered,
    TournamentCreated,
    next_decision,
)
from .tournament_views import TournamentPage, TournamentSummary

__all__ = ["MeController", "TournamentController"]


class TournamentController(Controller):
    """Tournaments: create, register, watch."""

    path = "/v1/tournaments"
    tags: Sequence[str] | None = ["tournaments"]

    @get(
        "/",
        operation_id="listTournaments",
        summary="Tournaments, newest first, a page at a time",
        responses=problems(400),
    )
    async def list_tournaments(
        self,
        state: State,
        limit: PageLimit = 20,
        before: Before = None,
    ) -> TournamentPage:
        page = await services_of(state).tournaments.listed(cursor_of(before), limit)
        return TournamentPage(
            tournaments=[TournamentSummary(**t) for t in page["tournaments"]], next=page["next"]
        )

    @post(
        "/",
        operation_id="createTournament",
        status_code=201,
        summary="Create a tournament; it starts when its entrants have registered",
        security=ORGANIZER,
        responses=problems(400, 401, 403, 409, 413, 422, 429),
        response_headers=REPLAYED,
    )
    async def create_tournament(
        self, request: Request[Any, Any, Any], state: State, idempotency_key: IdempotencyKey = None
    ) -> Response[TournamentCreated]:
        owner = organizer_of(request)  # 401 / 403 before the body is read

        async def make() -> TournamentCreated:
            data = await read_body(request, CreateTournament, names_ruleset=True)
            tournaments = services_of(state).tournaments
            doc = await tournaments.create(data.spec(), owner, data.invite_code, data.rated)
            # the document keeps a str: one of TournamentStatus
            return TournamentCreated(doc.id, doc.status, commitment(doc.seed))  # type: ignore[arg-type]

        return await once(request, state, idempotency_key, f"createTournament {owner}", 201, make)

    @post(
        "/{tournament_id:str}/entrants",
        operation_id="registerEntrant",
        status_code=201,
        summary="Register an entrant (with the invite code, if it has one); its token is shown "
        "once. With a bot token, the bot account enters (a rated tournament takes bots only)",
        security=[{}, {"bot": []}],
        responses=problems(400, 403, 404, 409, 413, 422, 429),
        response_headers=REPLAYED,
    )
    async def register(
        self,
        request: Request[Any, Any, Any],
        state: State,
        tournament_id: TournamentId,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Registered]:
        check_id(tournament_id, "tournament")

        bearer = request_bearer(request)

        async def make() -> Registered:
            data = await read_body(request, Register)
            services = services_of(state)
            if is_bot_token(bearer):  # a bot account enters under its own name
                entrant, name, token = await services.league.enter_tournament(
                    bearer, tournament_id, data.invite_code
                )
                return Registered(tournament_id, entrant, name, token)
            tournaments = services.tournaments
            entrant, token = await tournaments.register(tournament_id, data.name, data.invite_code)
            return Registered(tournament_id, entrant, check_name(data.name, "name"), token)

        # registering needs no credentials: its key counts for the client's address alone;
        # a bot's, for the bot (its answer holds the bot's entrant token: no one else's)
        if is_bot_token(bearer):
            assert bearer is not None
            scope = f"registerEntrant {tournament_id} b{bot_token_hash(bearer).hex()}"
        else:
            address = client_address(request.scope, trusted_of(request))
            scope = f"registerEntrant {tournament_id} a{address}"
        return await once(request, state, idempotency_key, scope, 201, make)

    @get(
        "/{tournament_id:str}",
        operation_id="getTournament",
        summary="Rounds, tables and standings with ratings",
        responses=problems(400, 404),
    )
    async def get_tournament(self, state: State, tournament_id: TournamentId) -> dict[str, Any]:
        check_id(tournament_id, "tournament")
        return await services_of(state).tournaments.get(tournament_id)


class MeController(Controller):
    """An entrant's view across its tournament's games."""

    path = "/v1/me"
    tags: Sequence[str] | None = ["tournaments"]

    @get(
        "/next",
        operation_id="nextDecision",
        security=[*ENTRANT, {"bot": []}],
        guards=[require_entrant_token],
        summary="An entrant's (or a bot's) next decision across all of its games",
        responses=problems(400, 401, 403, 404, 429),
    )
    async def next_decision(
        self, request: Request[Any, Any, Any], state: State, wait: Wait = 0
    ) -> NextDecision:
        services = services_of(state)
        token = request_bearer(request)
        async with waiting(request, services, wait):  # a bot's: its league games and challenges
            result = await services.league.next_of(token, wait)
        return next_decision(**result)
