"""A tournament's page follows it through one event stream (``/tournaments/{id}/events``, a
page's route, outside the contract) instead of asking for the whole tournament every 2 s: the
first event (``tournament``) is its view whole (``getTournament``'s), each next one
(``patch``) only what changed since (``replay_deltas.diff``), sent only when something did;
the stream ends once the tournament is over. The process looks at the tournament once a
second per stream (as ``getTournament`` does: advancing it if a round is over), and sends
nothing when nothing changed, but a keep-alive comment now and then."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from litestar import Request, get
from litestar.datastructures import State
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from ..service import AVAILABILITY, STORE_UNAVAILABLE
from .access import client_address
from .params import TournamentId, services_of, trusted_of
from .problems import check_id
from .replay_deltas import diff

__all__ = ["LOOK_EVERY_S", "tournament_events"]

#: how often a stream looks at its tournament
LOOK_EVERY_S = 1.0
_KEEP_ALIVE_S = 15.0
_ENCODER = msgspec.json.Encoder()


@get(
    "/tournaments/{tournament_id:str}/events",
    name="page-tournament-events",
    include_in_schema=False,
)
async def tournament_events(
    request: Request[Any, Any, Any], state: State, tournament_id: TournamentId
) -> ServerSentEvent:
    """The tournament's view, then what changed in it, as it changes, until it is over."""
    check_id(tournament_id, "tournament")
    services = services_of(state)
    tournaments = services.tournaments
    first = _plain(await tournaments.get(tournament_id))  # 404 for an unknown one
    limits = services.limits
    address = client_address(request.scope, trusted_of(request))
    await limits.start_waiting(address)  # 429 past the address's cap

    async def told() -> AsyncIterator[ServerSentEventMessage]:
        view = first
        yield ServerSentEventMessage(
            data=_ENCODER.encode({"view": view}).decode(), event="tournament"
        )
        quiet_until = time.monotonic() + _KEEP_ALIVE_S
        while view.get("status") != "finished" and not services.games.memory.stopping:
            await asyncio.sleep(LOOK_EVERY_S)
            now = _plain(await tournaments.get(tournament_id))
            patch = diff(view, now)
            view = now
            if patch:
                yield ServerSentEventMessage(
                    data=_ENCODER.encode({"patch": patch}).decode(), event="patch"
                )
                quiet_until = time.monotonic() + _KEEP_ALIVE_S
            elif time.monotonic() >= quiet_until:
                yield ServerSentEventMessage(comment="keep-alive", data=None)
                quiet_until = time.monotonic() + _KEEP_ALIVE_S

    async def stream() -> AsyncIterator[ServerSentEventMessage]:
        try:
            async for message in told():
                yield message
        except STORE_UNAVAILABLE as exc:  # begun: only an end now (the page reconnects)
            AVAILABILITY.refused(exc)
        finally:
            limits.stop_waiting(address)

    return ServerSentEvent(stream())


def _json(value: Any) -> str:
    return _ENCODER.encode(value).decode()


def _plain(value: Any) -> dict[str, Any]:
    decoded: dict[str, Any] = msgspec.json.decode(_ENCODER.encode(value))
    return decoded
