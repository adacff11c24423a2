"""What the routes share: the security each operation states, the parameters they take, the
services of the app, and the hold a long-poll takes on its address's waits."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

from litestar import Request
from litestar.datastructures import State
from litestar.params import Parameter

from ..service import Services
from .access import client_address
from .hot import HotRoutesLitestar

__all__ = [
    "ENTRANT",
    "ORGANIZER",
    "SECURITY",
    "Before",
    "GameId",
    "PageLimit",
    "TournamentId",
    "Wait",
    "WaitNext",
    "cursor_of",
    "services_of",
    "trusted_of",
    "waiting",
]

SECURITY: list[dict[str, list[str]]] = [{"bearer": []}]
ENTRANT: list[dict[str, list[str]]] = [{"entrant": []}]
#: an organizer key where the referee has them (REFEREE_ORGANIZER_KEYS); none in open mode
ORGANIZER: list[dict[str, list[str]]] = [{"organizer": []}, {}]
GameId = Annotated[str, Parameter(description="the game's id", max_length=64)]
TournamentId = Annotated[str, Parameter(description="the tournament's id", max_length=64)]
PageLimit = Annotated[int, Parameter(ge=1, le=100, description="entries per page")]
#: a listing's cursor: a creation time, as a page's ``next`` gives it (a float's digits)
Before = Annotated[
    str | None,
    Parameter(
        pattern=r"^[0-9]{1,16}(\.[0-9]{1,9})?$",
        description="the page after this cursor (a page's next)",
    ),
]
#: ``?wait`` means one thing on every route: how many seconds the answer may wait for what
#: it holds; absent, it does not wait (0). On POST /moves it also asks for the next turn
Wait = Annotated[
    float,
    Parameter(
        ge=0, le=60, description="seconds the answer may wait (long-poll); absent: 0, no waiting"
    ),
]
WaitNext = Annotated[
    float | None,
    Parameter(
        ge=0,
        le=60,
        description="seconds the answer may wait for the seat's next turn, which it then "
        "holds (``turn``): one request per decision. wait=0 holds the turn as it is, without "
        "waiting; absent: no waiting and no turn",
    ),
]


def cursor_of(before: str | None) -> float | None:
    """A listing's cursor as the store reads it (``Before``'s pattern: a float's digits)."""
    return None if before is None else float(before)


def services_of(state: State) -> Services:
    services: Services = state.services
    return services


def trusted_of(request: Request[Any, Any, Any]) -> tuple[str, ...]:
    """The proxies trusted to name a client's address (the app's ``hot.trusted``)."""
    app = request.app
    assert isinstance(app, HotRoutesLitestar)  # the app ``create_app`` makes
    return app.hot.trusted


@contextlib.asynccontextmanager
async def waiting(
    request: Request[Any, Any, Any], services: Services, wait: float
) -> AsyncIterator[None]:
    """A long-poll holds one of its address's open streams and long-polls (429 past the
    cap); a request that does not wait holds none."""
    if not wait:
        yield
        return
    address = client_address(request.scope, trusted_of(request))
    await services.limits.start_waiting(address)
    try:
        yield
    finally:
        services.limits.stop_waiting(address)
