"""The league's routes: bot accounts and their tokens, the arena, leaderboards and challenges.
A bot's games reach it through ``/v1/me/next`` (``tournament_routes``), with its bot token.
As in ``routes``, each handler checks its input, calls one use case and shapes its answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any
from urllib.parse import quote

import msgspec
from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import State
from litestar.params import Parameter

from ..core.league import is_bot_token
from ..core.refusals import Refusal
from .access import organizer_of
from .league_models import (
    ArenaSeek,
    BotCreated,
    BotProfile,
    BotStatus,
    BotToken,
    BotWebhook,
    BotWebhookInfo,
    Challenge,
    ChangeBotStatus,
    CreateBot,
    CreateChallenge,
    DeclineChallenge,
    JoinArena,
    Leaderboard,
    SetWebhook,
)
from .models import MoveSubmission
from .params import ORGANIZER, GameId, Wait, services_of, waiting
from .problems import check_id, problems, read_body, request_bearer, require_entrant_token
from .tournament_models import NextDecision, next_decision

__all__ = ["BOT", "LEAGUE_CONTROLLERS"]

#: a bot's token (createBot, rotateBotToken)
BOT: list[dict[str, list[str]]] = [{"bot": []}]
#: the bot itself, or the organizer who created it
BOT_OR_ORGANIZER: list[dict[str, list[str]]] = [{"bot": []}, {"organizer": []}]

BotName = Annotated[str, Parameter(description="the bot's name", max_length=256)]
RulesetId = Annotated[str, Parameter(description="a ruleset's id", max_length=64)]
ChallengeId = Annotated[str, Parameter(description="the challenge's id", max_length=64)]
Offset = Annotated[int, Parameter(ge=0, le=1_000_000, description="rows to skip")]
Limit = Annotated[int, Parameter(ge=1, le=100, description="rows per page")]


def _manager(request: Request[Any, Any, Any]) -> tuple[str | None, str | None]:
    """The bot token, or else the organizer, a request to manage a bot bears."""
    token = request_bearer(request)
    if is_bot_token(token):
        return token, None
    return None, organizer_of(request)


#: The headers of an answer that differs by who asks (a bot's profile shows its webhook's
#: calls to the bot and its organizer alone): no cache keeps it for another caller, and a
#: cache that keeps one for its own caller asks again before it reuses it.
BY_VIEWER = {"cache-control": "private, no-cache", "vary": "Authorization"}


def viewer(request: Request[Any, Any, Any]) -> tuple[str | None, str | None]:
    """What ``_manager`` finds of a request that anyone may make (a bot's profile): the bot
    token, or else the organizer; neither (None, None) where it is no organizer's."""
    token = request_bearer(request)
    if is_bot_token(token):
        return token, None
    try:
        return None, organizer_of(request)
    except Refusal:
        return None, None


class BotController(Controller):
    """Bot accounts: register, look up, rotate or revoke the token, pause or ban."""

    path = "/v1/bots"
    tags: Sequence[str] | None = ["league"]

    @post(
        "/",
        operation_id="createBot",
        status_code=201,
        summary="Register a bot account; its token is shown once",
        security=ORGANIZER,
        responses=problems(400, 401, 403, 409, 413, 422, 429),
    )
    async def create_bot(
        self, request: Request[Any, Any, Any], state: State
    ) -> Response[BotCreated]:
        owner = organizer_of(request)
        data = await read_body(request, CreateBot)
        doc, token, secret = await services_of(state).league.create_bot(
            data.name, data.description, owner, data.contact, data.webhook_url
        )
        return Response(
            BotCreated(doc.name, token, secret),
            status_code=201,
            headers={"Location": f"/v1/bots/{quote(doc.name, safe='')}"},
        )

    @get(
        "/{name:str}",
        operation_id="getBot",
        summary="A bot's profile, ratings per ruleset and recent games; its webhook's calls "
        "for the bot or its organizer",
        responses=problems(400, 404),
    )
    async def get_bot(
        self, request: Request[Any, Any, Any], state: State, name: BotName
    ) -> Response[BotProfile]:
        profile = await services_of(state).league.profile(name, *viewer(request))
        return Response(msgspec.convert(profile, BotProfile), headers=BY_VIEWER)

    @post(
        "/{name:str}/token",
        operation_id="rotateBotToken",
        status_code=200,
        summary="A new token for the bot (the old one stops working); by the bot or its organizer",
        security=BOT_OR_ORGANIZER,
        responses=problems(400, 401, 403, 404, 429),
    )
    async def rotate(
        self, request: Request[Any, Any, Any], state: State, name: BotName
    ) -> BotToken:
        token, organizer = _manager(request)
        league = services_of(state).league
        new = await league.rotate(name, token, organizer)
        _, _, doc = await league.load_bot(name)
        return BotToken(doc.name, new)

    @post(
        "/{name:str}/webhook",
        operation_id="setBotWebhook",
        status_code=200,
        summary="Set, change or remove the bot's webhook; a new signing secret is shown once",
        security=BOT_OR_ORGANIZER,
        responses=problems(400, 401, 403, 404, 413, 422, 429),
    )
    async def set_webhook(
        self, request: Request[Any, Any, Any], state: State, name: BotName
    ) -> BotWebhook:
        token, organizer = _manager(request)
        data = await read_body(request, SetWebhook)
        doc, secret = await services_of(state).league.set_webhook(
            name, data.webhook_url, token, organizer
        )
        return BotWebhook(doc.name, doc.webhook, secret)

    @post(
        "/{name:str}/webhook/info",
        operation_id="askBotWebhook",
        status_code=200,
        summary="Ask the bot's webhook who it is (the info call); its profile keeps the answer",
        security=BOT_OR_ORGANIZER,
        responses=problems(400, 401, 403, 404, 409, 429),
    )
    async def ask_webhook(
        self, request: Request[Any, Any, Any], state: State, name: BotName
    ) -> BotWebhookInfo:
        token, organizer = _manager(request)
        league = services_of(state).league
        info, error = await league.webhook_info(name, token, organizer)
        return BotWebhookInfo(name, info, error)

    @post(
        "/{name:str}/revoke",
        operation_id="revokeBotToken",
        status_code=204,
        summary="Revoke the bot's token (its organizer gives it a new one)",
        security=BOT_OR_ORGANIZER,
        responses=problems(400, 401, 403, 404, 429),
    )
    async def revoke(self, request: Request[Any, Any, Any], state: State, name: BotName) -> None:
        token, organizer = _manager(request)
        await services_of(state).league.revoke(name, token, organizer)

    @post(
        "/{name:str}/status",
        operation_id="setBotStatus",
        status_code=200,
        summary="Pause, ban or reinstate a bot: its organizer's alone",
        security=ORGANIZER,
        responses=problems(400, 401, 403, 404, 413, 429),
    )
    async def set_status(
        self, request: Request[Any, Any, Any], state: State, name: BotName
    ) -> BotStatus:
        organizer = organizer_of(request)
        data = await read_body(request, ChangeBotStatus)
        doc = await services_of(state).league.set_status(name, data.status, organizer)
        return BotStatus(doc.name, doc.status)  # type: ignore[arg-type]


class ArenaController(Controller):
    """The arena: a bot seeks rated games until it leaves."""

    path = "/v1/arena"
    tags: Sequence[str] | None = ["league"]

    @post(
        "/",
        operation_id="joinArena",
        status_code=200,
        summary="Seek arena games (again: the seek is replaced); games come through nextDecision",
        security=BOT,
        responses=problems(400, 401, 403, 413, 422, 429),
    )
    async def join(self, request: Request[Any, Any, Any], state: State) -> ArenaSeek:
        token = request_bearer(request)
        data = await read_body(request, JoinArena)
        seek = await services_of(state).league.join(
            token, data.ruleset, data.seats, data.deadline_s, data.concurrent_games
        )
        return ArenaSeek(
            seek["ruleset"], seek["seats"], seek["deadline_s"], seek["concurrent"], seek["since"]
        )

    @delete(
        "/",
        operation_id="leaveArena",
        status_code=204,
        summary="Leave the arena (games in play go on)",
        security=BOT,
        responses=problems(400, 401, 403, 429),
    )
    async def leave(self, request: Request[Any, Any, Any], state: State) -> None:
        await services_of(state).league.leave(request_bearer(request))


class LeaderboardController(Controller):
    path = "/v1/leaderboards"
    tags: Sequence[str] | None = ["league"]

    @get(
        "/{ruleset:str}",
        operation_id="getLeaderboard",
        summary="A ruleset's bots by mu - 3 sigma, best first, a page at a time",
        responses=problems(400, 404),
    )
    async def leaderboard(
        self, state: State, ruleset: RulesetId, offset: Offset = 0, limit: Limit = 50
    ) -> Leaderboard:
        page = await services_of(state).league.leaderboard(ruleset, offset, limit)
        return msgspec.convert(page, Leaderboard)


class ChallengeController(Controller):
    """A bot challenges another, which accepts or declines."""

    path = "/v1/challenges"
    tags: Sequence[str] | None = ["league"]

    @post(
        "/",
        operation_id="createChallenge",
        status_code=201,
        summary="Challenge another bot to a game, rated or casual",
        security=BOT,
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429),
    )
    async def create(self, request: Request[Any, Any, Any], state: State) -> Response[Challenge]:
        token = request_bearer(request)
        data = await read_body(request, CreateChallenge, names_ruleset=True)
        shown = await services_of(state).league.challenge(
            token,
            data.opponent,
            data.ruleset,
            data.options,
            data.rated,
            data.deadline_s,
            data.expires_s,
        )
        return Response(
            msgspec.convert(shown, Challenge),
            status_code=201,
            headers={"Location": f"/v1/challenges/{shown['id']}"},
        )

    @get(
        "/{challenge_id:str}",
        operation_id="getChallenge",
        summary="A challenge and its answer",
        responses=problems(400, 404),
    )
    async def get_challenge(self, state: State, challenge_id: ChallengeId) -> Challenge:
        check_id(challenge_id, "challenge")
        shown = await services_of(state).league.get_challenge(challenge_id)
        return msgspec.convert(shown, Challenge)

    @post(
        "/{challenge_id:str}/accept",
        operation_id="acceptChallenge",
        status_code=200,
        summary="Accept a challenge: its game is created (game_id), and reaches both bots "
        "through nextDecision",
        security=BOT,
        responses=problems(400, 401, 403, 404, 409, 429),
    )
    async def accept(
        self, request: Request[Any, Any, Any], state: State, challenge_id: ChallengeId
    ) -> Challenge:
        check_id(challenge_id, "challenge")
        league = services_of(state).league
        shown = await league.answer(challenge_id, request_bearer(request), True)
        return msgspec.convert(shown, Challenge)

    @post(
        "/{challenge_id:str}/decline",
        operation_id="declineChallenge",
        status_code=200,
        summary="Decline a challenge with a machine-readable reason",
        security=BOT,
        responses=problems(400, 401, 403, 404, 409, 413, 429),
    )
    async def decline(
        self, request: Request[Any, Any, Any], state: State, challenge_id: ChallengeId
    ) -> Challenge:
        check_id(challenge_id, "challenge")
        data = await read_body(request, DeclineChallenge)
        league = services_of(state).league
        shown = await league.answer(challenge_id, request_bearer(request), False, data.reason)
        return msgspec.convert(shown, Challenge)

    @post(
        "/{challenge_id:str}/cancel",
        operation_id="cancelChallenge",
        status_code=200,
        summary="Withdraw an open challenge (its challenger alone): it leaves the opponent's "
        "inbox, and the challenger may challenge that bot again",
        security=BOT,
        responses=problems(400, 401, 403, 404, 409, 429),
    )
    async def cancel(
        self, request: Request[Any, Any, Any], state: State, challenge_id: ChallengeId
    ) -> Challenge:
        check_id(challenge_id, "challenge")
        shown = await services_of(state).league.cancel(challenge_id, request_bearer(request))
        return msgspec.convert(shown, Challenge)


class DecideNextController(Controller):
    """One request per decision across a bot's (or an entrant's) games."""

    path = "/v1/me"
    tags: Sequence[str] | None = ["league"]

    @post(
        "/games/{game_id:str}/moves",
        operation_id="decideNext",
        status_code=200,
        security=[{"bot": []}, {"entrant": []}],
        guards=[require_entrant_token],
        summary="Submit a decision in one of its games and get its next one in any of them",
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429),
    )
    async def decide_next(
        self, request: Request[Any, Any, Any], state: State, game_id: GameId, wait: Wait = 0
    ) -> NextDecision:
        check_id(game_id)
        data = await read_body(request, MoveSubmission)
        moves = data.decided()
        services = services_of(state)
        token = request_bearer(request)
        async with waiting(request, services, wait):  # held before the decision is taken
            result = await services.league.decide_next(token, game_id, data.seq, moves, wait)
        return next_decision(**result)


LEAGUE_CONTROLLERS = [
    BotController,
    ArenaController,
    LeaderboardController,
    ChallengeController,
    DecideNextController,
]
