"""The routes a bot calls in a loop, answered without Litestar's per-request machinery.

``GET /turn`` and ``POST /moves`` are nearly every request of a tournament (and ``POST
/v1/me/games/{id}/moves``, a decision then the next in any of the bot's games, and ``GET
/v1/me/next``, nearly every one of the league's), and Litestar's
routing, parameter parsing, dependency injection and response building cost about a third of
such a request, and uvicorn's ASGI cycle (a scope, messages, two writes per answer) a fifth
of what was left (``benchmarks/results/README.md``). The server's HTTP protocol
(``web.serving``) answers a plainly well-formed request on the exact path from what this
module decides: the bytes the handler itself would send, or, if the service refuses or fails,
the problem the handler would send (``problems.answer``), so a request reaches the service
once. Anything else (no token, any other query, a body the strict decoder refuses) goes on to
the handler, which owns the contract.

``POST /v1/games`` is answered here too (``creation.game_created``, as its handler makes
it): through Litestar, a bench game's creation cost about as much as two of its game
requests (py-spy, ``referee bench``), here about one. One with an ``Idempotency-Key``, or
refused before the game is made, goes on to the handler.

In front of Litestar, ``HotRoutesLitestar`` passes every request through the shared limits
and answers ``OPTIONS`` on fixed paths itself.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from io import BytesIO
from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Litestar
from litestar.enums import CompressionEncoding
from litestar.middleware.compression.gzip_facade import GzipCompression
from litestar.routes import HTTPRoute

from ..core.refusals import Refusal
from ..service.limits import Limits
from .access import Organizers, client_address
from .compression import COMPRESSION
from .creation import game_created
from .models import CreateGame, MoveSubmission
from .problems import GAME_ID, PROBLEM, answer, bearer, decoded_body
from .tournament_models import next_decision

if TYPE_CHECKING:
    from litestar.middleware.compression.facade import CompressionFacade

    from ..service import Services
    from ..service.league import LeagueService
    from ..service.seats import Seats

__all__ = ["Answer", "HotRoutes", "HotRoutesLitestar", "admitted", "answered", "taken"]

_HOT = re.compile(rf"/v1/(me/)?games/({GAME_ID.pattern})/(turn|moves)")
#: ``wait=s`` as the handlers take it (a JSON number's digits: no leading zero, which the
#: handlers refuse with 400; any other form is handed to them)
_WAIT = re.compile(rb"wait=((?:0|[1-9][0-9]?)(?:\.[0-9]{1,6})?)")
_submission = msgspec.json.Decoder(MoveSubmission)
_encode = msgspec.json.Encoder().encode
_JSON = b"application/json"
_PROBLEM = PROBLEM.encode()
#: what the load balancer's health checks ask: never limited
_UNLIMITED = frozenset({"/healthz", "/readyz"})
_RATE_LIMITED = Refusal(
    "rate-limited",
    "too many requests from this token or address in this second",
    retry_after=1,
)

#: an answer: status, media type, body and any more headers (lower-case names)
Answer = tuple[int, bytes, bytes, list[tuple[bytes, bytes]]]
#: a request the hot routes answer: its game, what it asks (``TURN``, ``MOVES``, ``NEXT``: a
#: decision then the next in any of the bot's games, ``ONLY_NEXT``, that alone, for no
#: game, or ``CREATE``, a new game) and its wait (None: none asked)
Route = tuple[str, str, float | None]
TURN, MOVES, NEXT, ONLY_NEXT, CREATE = "turn", "moves", "next", "only-next", "create"
_ME_NEXT = "/v1/me/next"
_CREATION = "/v1/games"


def _wait(query: bytes) -> float:
    """The seconds of a query that is ``wait=s`` alone; -1 for any other (the handler
    answers those)."""
    matched = _WAIT.fullmatch(query)
    return float(matched.group(1)) if matched is not None else -1.0


def token_of(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The bearer token of a request's headers (lower-case names, as servers give them)."""
    for name, value in headers:
        if name == b"authorization":
            return bearer(value.decode("latin-1"))
    return None


class HotRoutes:
    """What the hot routes answer with: the seats' service and every service a creation
    uses, set once the app has started (None: the handlers answer every request), the
    organizers who may create, and the app's limit on a body; and the shared limits every
    request passes (None until started), with the proxies trusted to name a client's
    address."""

    __slots__ = ("league", "limit", "limits", "organizers", "seats", "services", "trusted")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seats: Seats | None = None
        self.league: LeagueService | None = None
        self.services: Services | None = None
        self.organizers: Organizers | None = None
        self.limits: Limits | None = None
        self.trusted: tuple[str, ...] = ()


def taken(
    routes: HotRoutes, method: bytes, path: str, query: bytes, token: str | None
) -> Route | None:
    """The game, what is asked and the wait of a request the hot routes answer; None for
    one the handlers answer: another path or method, no token, a query other than
    ``wait=s`` (0 to 60), or the service not started. A creation needs no token (the
    organizer's key, where there are keys, is checked as it is answered)."""
    if path == _CREATION:
        if method != b"POST" or query or routes.services is None:
            return None
        return "", CREATE, None
    if token is None or routes.seats is None:
        return None
    if path == _ME_NEXT:
        if method != b"GET" or routes.league is None:
            return None
        seconds = _wait(query or b"wait=0")
        return ("", ONLY_NEXT, seconds) if 0 <= seconds <= 60 else None
    hot = _HOT.fullmatch(path)
    if hot is None:
        return None
    mine, asked = hot.group(1), hot.group(3)
    if asked == TURN:
        if method != b"GET" or mine:
            return None
        wait: float | None = _wait(query or b"wait=0")
    else:
        if method != b"POST" or (mine and routes.league is None):
            return None
        wait = _wait(query) if query else None
        if mine:
            asked, wait = NEXT, wait or 0.0
    if wait is not None and not 0 <= wait <= 60:
        return None
    return hot.group(2), asked, wait


async def admitted(routes: HotRoutes, address: str, token: str | None) -> bool:
    """Whether the shared limits let a request through (always, before the app starts)."""
    limits = routes.limits
    if limits is None:
        return True
    allowed = limits.admits(address, token)
    if allowed is None:
        allowed = await limits.request(address, token)
    return allowed


def rate_limited(path: str) -> Answer:
    return problem(_RATE_LIMITED, path)


async def answered(
    routes: HotRoutes,
    route: Route,
    token: str | None,
    address: str,
    path: str,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
) -> Answer | None:
    """The answer to a request ``taken`` with its whole ``body`` and its ``headers``, once it
    passed the limits; None for a body the strict decoder refuses, or a service stopped
    since the request was taken (the handler answers it)."""
    game_id, asked, wait = route
    if asked == CREATE:
        return await _created(routes, token, address, path, body, headers)
    if token is None:  # ``taken`` takes no other request without one
        return None
    seats, league = routes.seats, routes.league
    if seats is None or (league is None and asked in (ONLY_NEXT, NEXT)):
        return None
    waited = wait or 0.0  # a wait is given for all but a decision without one (``taken``)
    if asked == ONLY_NEXT and league is not None:
        call = league.next_of(token, waited)
        return await _long_poll(routes, address, waited, call, path, _next_decision)
    if asked == TURN:
        call = seats.wait_turn(game_id, token, waited)
        return await _long_poll(routes, address, waited, call, path)
    try:
        data = _submission.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    try:
        decided = data.decided()
    except Refusal as exc:
        return problem(exc, path)
    if asked == NEXT and league is not None:
        call = league.decide_next(token, game_id, data.seq, decided, waited)
        return await _long_poll(routes, address, waited, call, path, _next_decision)
    if wait is None:
        return await _answer(seats.move(game_id, token, data.seq, decided), path)
    call = seats.move_then_turn(game_id, token, data.seq, decided, wait)
    return await _long_poll(routes, address, wait, call, path)


async def _created(
    routes: HotRoutes,
    key: str | None,
    address: str,
    path: str,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
) -> Answer | None:
    """A new game, as ``createGame`` answers it (``creation.game_created``); None for what
    the handler answers: a request with an ``Idempotency-Key`` (made once per key), and
    every refusal before the game is made (an organizer key missing or refused, a body the
    strict decoder refuses)."""
    services, organizers = routes.services, routes.organizers
    if services is None or organizers is None:
        return None
    accepted = None
    for name, value in headers:
        if name == b"idempotency-key":
            return None
        if name == b"accept-encoding" and accepted is None:  # the first, as Litestar reads
            accepted = value.decode("latin-1")
    try:
        owner = organizers.owner_of(address, key)
        data = decoded_body(body, CreateGame, names_ruleset=True)
    except Refusal:
        return None
    try:
        created = await game_created(services, data, owner)
    except Exception as exc:
        return problem(exc, path)
    encoded, extra = _compressed(_encode(created), accepted or "")
    return 201, _JSON, encoded, [(b"location", created.location.encode()), *extra]


def _compressed(body: bytes, accepted: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """``body`` and its added headers as the app's compression middleware sends them to a
    client that accepts ``accepted`` (``compression.COMPRESSION``): compressed from its
    minimum size, with the app's encoding where accepted, else gzip where accepted."""
    config = COMPRESSION
    if len(body) < config.minimum_size:
        return body, []
    facade: type[CompressionFacade] = config.compression_facade
    encoding = facade.encoding
    if encoding not in accepted:
        if not config.gzip_fallback or CompressionEncoding.GZIP not in accepted:
            return body, []
        facade, encoding = GzipCompression, CompressionEncoding.GZIP
    buffer = BytesIO()
    compressor = facade(buffer=buffer, compression_encoding=encoding, config=config)
    compressor.write(body)
    compressor.close()
    headers = [(b"content-encoding", encoding.encode()), (b"vary", b"Accept-Encoding")]
    return buffer.getvalue(), headers


def _as_is(answer: dict[str, Any]) -> bytes:
    """The service's answer encoded as it is: its keys come in the order of the contract's
    model (``Turn``, ``MoveAccepted``), whose bytes the handlers send (tested); building the
    model first cost a third more."""
    return _encode(answer)


def _next_decision(answer: dict[str, Any]) -> bytes:
    """A next decision as ``NextDecision`` encodes it (every field, in its order): a turn's
    dict as it is, challenges through the model."""
    if answer.get("challenges") is not None:
        return _encode(next_decision(**answer))
    return _encode(
        {
            "status": answer["status"],
            "tournament_id": answer.get("tournament_id"),
            "game_id": answer.get("game_id"),
            "seat_token": answer.get("seat_token"),
            "turn": answer.get("turn"),
            "challenges": None,
        }
    )


async def _long_poll(
    routes: HotRoutes,
    address: str,
    wait: float,
    call: Coroutine[Any, Any, dict[str, Any]],
    path: str,
    encoded: Callable[[dict[str, Any]], bytes] = _as_is,
) -> Answer:
    """``call``'s answer, holding one of the address's waits while it may long-poll (429
    past the cap): a request that does not wait holds none."""
    limits = routes.limits
    if wait == 0 or limits is None:
        return await _answer(call, path, encoded)
    if not limits.waits_held(address):
        try:
            await limits.start_waiting(address)
        except Refusal as exc:
            call.close()  # never started
            return problem(exc, path)
    try:
        return await _answer(call, path, encoded)
    finally:
        limits.stop_waiting(address)


async def _answer(
    call: Awaitable[dict[str, Any]],
    path: str,
    encoded: Callable[[dict[str, Any]], bytes] = _as_is,
) -> Answer:
    """The service's answer, or the problem its refusal (or failure) makes."""
    try:
        return 200, _JSON, encoded(await call), []
    except Exception as exc:
        return problem(exc, path)


def problem(exc: BaseException, path: str) -> Answer:
    """The problem a refusal (or failure) makes, as the handlers answer it."""
    status, body, headers = answer(exc, path)
    return status, _PROBLEM, body, [(k.lower().encode(), v.encode()) for k, v in headers.items()]


class HotRoutesLitestar(Litestar):
    """Litestar, with every request but the health checks passed through the shared limits
    first, ``OPTIONS`` on a fixed path answered with all its methods, and ``HEAD`` as
    ``GET``; ``hot`` holds what the server's protocol answers the hot routes with.

    It answers through the server's ``send``: the app has no ``before_send`` hooks (tested)
    for it to skip.
    """

    hot: HotRoutes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # an int: create_app gives one (REFEREE_MAX_BODY_BYTES), not Litestar's None or EMPTY
        self.hot = HotRoutes(self.request_max_body_size)  # type: ignore[arg-type]
        # Litestar answers OPTIONS on a path with handlers of two registrations (GET and
        # POST /v1/tournaments) with the first one's methods: every fixed path's methods
        self.allow = {
            route.path: _allowed(route.methods)
            for route in self.routes
            if isinstance(route, HTTPRoute) and "{" not in route.path
        }

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        method = scope["method"]
        if method == "OPTIONS" and scope["path"] in self.allow:
            headers = [(b"allow", self.allow[scope["path"]].encode())]
            await send({"type": "http.response.start", "status": 204, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        if method == "HEAD" and not scope["path"].rstrip("/").endswith("/events"):
            # answered as GET (uvicorn, whose scope still says HEAD, sends no body); an event
            # stream never ends, so it takes GET alone
            scope = {**scope, "method": "GET"}
        if scope["path"] not in _UNLIMITED:
            address = client_address(scope, self.hot.trusted)
            if not await admitted(self.hot, address, token_of(scope["headers"])):
                await _send(send, rate_limited(scope["path"]))
                return
        await super().__call__(scope, receive, send)

    async def routed(self, scope: Any, receive: Any, send: Any) -> None:
        """Litestar's own entry point: for a request that has passed the limits already."""
        await super().__call__(scope, receive, send)


def _allowed(methods: Iterable[str]) -> str:
    """A route's methods as ``Allow`` names them: HEAD wherever GET (answered as GET)."""
    names = set(methods)
    return ", ".join(sorted(names | {"HEAD"} if "GET" in names else names))


async def _send(send: Any, answer: Answer) -> None:
    status, media, body, extra = answer
    headers = [(b"content-type", media), (b"content-length", b"%d" % len(body)), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
