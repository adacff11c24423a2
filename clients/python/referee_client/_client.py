"""Sync and async clients over httpx; errors come back as RefereeError with the problem."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any, TypeVar

import httpx
import msgspec

from ._models import Claimed, GameCreated, MoveAccepted, NextDecision, Problem, Registered, Turn

T = TypeVar("T")


class RefereeError(Exception):
    """The referee refused a request; ``problem`` says which rule or field, and why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.status} {problem.code}: {problem.detail}")
        self.problem = problem

    @property
    def code(self) -> str:
        return self.problem.code

    @property
    def status(self) -> int:
        return self.problem.status


#: answers that changed nothing and invite a retry: a limit, or a referee restarting
AGAIN = frozenset({429, 503})
#: a proxy's answers when the referee behind it died or did not answer in time: the request
#: may have arrived, so it is sent again only if that is safe
PROXY_LOST = frozenset({502, 504})


def _safe_again(request: httpx.Request) -> bool:
    """Whether the request may be sent again though it may have arrived: reads, decisions
    (the referee answers a seq decided before with the same answer), and creations sent with
    an Idempotency-Key (the referee answers the key's first request again)."""
    return (
        request.method == "GET"
        or request.url.path.endswith("/moves")
        or "idempotency-key" in request.headers
    )


def _again(request: httpx.Request, reply: httpx.Response) -> bool:
    status = reply.status_code
    if status == 409 and "retry-after" in reply.headers and "idempotency-key" in request.headers:
        return True  # idempotency-key-in-progress: the first request is still answered
    return status in AGAIN or (status in PROXY_LOST and _safe_again(request))


def _pause(reply: httpx.Response | None, attempt: int) -> float:
    """``Retry-After`` if the referee gave one, else a backoff from 0.1 s to 5 s."""
    try:
        return min(60.0, float(reply.headers["retry-after"]))  # type: ignore[union-attr]
    except (AttributeError, KeyError, ValueError):
        return min(5.0, 0.1 * 2**attempt)


#: an idle connection is opened anew after this long: under the referee's keep-alive
#: (``REFEREE_KEEP_ALIVE_S``, 5 s by default, httpx's own expiry too), so that a request is not
#: sent on a connection the referee is closing, which would lose it unread (a creation
#: without an Idempotency-Key is not sent again)
KEEPALIVE_EXPIRY_S = 4.0


def _options(options: dict[str, Any]) -> dict[str, Any]:
    """A transport's options, with ``KEEPALIVE_EXPIRY_S`` unless limits are given."""
    # httpx's own limits on connections (100, 20 kept), with the shorter expiry
    limits = httpx.Limits(
        max_connections=100, max_keepalive_connections=20, keepalive_expiry=KEEPALIVE_EXPIRY_S
    )
    return {"limits": limits, **options}


class PatientTransport(httpx.BaseTransport):
    """Waits out a rate limit (429), a referee that is restarting (503, connection refused)
    and, for requests safe to repeat, a proxy's 502 or 504 (the referee behind it died) or a
    connection lost mid-request: for up to
    ``patience`` seconds, then gives the last answer or error."""

    def __init__(self, patience: float = 120.0, **options: Any) -> None:
        self.inner = httpx.HTTPTransport(**_options(options))
        self.patience = patience

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        stop = time.monotonic() + self.patience
        attempt = 0
        while True:
            reply = None
            try:
                reply = self.inner.handle_request(request)
                if not _again(request, reply) or time.monotonic() > stop:
                    return reply
                reply.read()
                reply.close()
            except httpx.TransportError as error:
                again = isinstance(error, httpx.ConnectError) or _safe_again(request)
                if not again or time.monotonic() > stop:
                    raise
            time.sleep(_pause(reply, attempt))
            attempt += 1

    def close(self) -> None:
        self.inner.close()


class AsyncPatientTransport(httpx.AsyncBaseTransport):
    """``PatientTransport`` for the async client."""

    def __init__(self, patience: float = 120.0, **options: Any) -> None:
        self.inner = httpx.AsyncHTTPTransport(**_options(options))
        self.patience = patience

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        stop = time.monotonic() + self.patience
        attempt = 0
        while True:
            reply = None
            try:
                reply = await self.inner.handle_async_request(request)
                if not _again(request, reply) or time.monotonic() > stop:
                    return reply
                await reply.aread()
                await reply.aclose()
            except httpx.TransportError as error:
                again = isinstance(error, httpx.ConnectError) or _safe_again(request)
                if not again or time.monotonic() > stop:
                    raise
            await asyncio.sleep(_pause(reply, attempt))
            attempt += 1

    async def aclose(self) -> None:
        await self.inner.aclose()


def _decode(reply: httpx.Response, type_: type[T]) -> T:
    if reply.status_code >= 400:
        try:
            problem = msgspec.json.decode(reply.content, type=Problem)
        except msgspec.DecodeError:
            problem = Problem(
                "about:blank",
                reply.reason_phrase,
                reply.status_code,
                reply.text[:500],
                f"http-{reply.status_code}",
            )
        raise RefereeError(problem)
    return msgspec.json.decode(reply.content, type=type_)


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _keyed(headers: dict[str, str], idempotency_key: str | None) -> dict[str, str]:
    """A creation's headers with its Idempotency-Key, a new random one unless given: every
    retry of the request (``PatientTransport``) sends the same key, so none makes twice."""
    return {**headers, "Idempotency-Key": idempotency_key or str(uuid.uuid4())}


def _create_body(
    ruleset: str, seats: list[dict[str, Any]] | int, options: dict | None, deadline_s: float | None
) -> dict[str, Any]:
    if isinstance(seats, int):
        seats = [{"name": f"seat{i}"} for i in range(seats)]
    body: dict[str, Any] = {"ruleset": ruleset, "seats": seats, "options": options or {}}
    if deadline_s is not None:
        body["deadline_s"] = deadline_s
    return body


def _claim_body(name: str, client_seed: str | None, invite_code: str | None) -> dict[str, Any]:
    body = {"name": name}
    if client_seed:
        body["client_seed"] = client_seed
    if invite_code:
        body["invite_code"] = invite_code
    return body


def _challenge_body(
    opponent: str,
    ruleset: str,
    rated: bool = True,
    deadline_s: float = 10.0,
    expires_s: float = 60.0,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "opponent": opponent,
        "ruleset": ruleset,
        "options": options or {},
        "rated": rated,
        "deadline_s": deadline_s,
        "expires_s": expires_s,
    }


def _waiting(wait: float | None) -> dict[str, float]:
    return {} if wait is None else {"wait": wait}


def _move_body(seq: int, move: Any) -> dict[str, Any]:
    if isinstance(move, list):
        return {"seq": seq, "moves": move}
    return {"seq": seq, "move": move}


class Client:
    """``Client("http://127.0.0.1:8000")``: one method per operation of the contract.

    It waits out rate limits and a restarting referee for up to ``patience`` seconds
    (``PatientTransport``); ``organizer_key`` is sent where creating needs one."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 75.0,
        patience: float = 120.0,
        organizer_key: str | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.http = http or httpx.Client(
            base_url=base_url, timeout=timeout, transport=PatientTransport(patience)
        )
        self.organizer = _auth(organizer_key)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rulesets(self) -> list[dict[str, Any]]:
        return _decode(self.http.get("/v1/rulesets"), list[dict[str, Any]])

    def score(self, ruleset: str, body: dict[str, Any]) -> dict[str, Any]:
        return _decode(self.http.post(f"/v1/rulesets/{ruleset}/score", json=body), dict[str, Any])

    def create_game(
        self,
        ruleset: str,
        seats: list[dict[str, Any]] | int,
        options: dict | None = None,
        deadline_s: float | None = None,
        idempotency_key: str | None = None,
    ) -> GameCreated:
        body = _create_body(ruleset, seats, options, deadline_s)
        headers = _keyed(self.organizer, idempotency_key)
        reply = self.http.post("/v1/games", json=body, headers=headers)
        return _decode(reply, GameCreated)

    def claim_seat(
        self,
        game_id: str,
        name: str,
        client_seed: str | None = None,
        invite_code: str | None = None,
        idempotency_key: str | None = None,
    ) -> Claimed:
        body = _claim_body(name, client_seed, invite_code)
        headers = _keyed({}, idempotency_key)
        reply = self.http.post(f"/v1/games/{game_id}/seats", json=body, headers=headers)
        return _decode(reply, Claimed)

    def game(self, game_id: str) -> dict[str, Any]:
        return _decode(self.http.get(f"/v1/games/{game_id}"), dict[str, Any])

    def turn(self, game_id: str, token: str, wait: float = 0) -> Turn:
        reply = self.http.get(
            f"/v1/games/{game_id}/turn", params={"wait": wait}, headers=_auth(token)
        )
        return _decode(reply, Turn)

    def move(
        self, game_id: str, token: str, seq: int, move: Any, wait: float | None = None
    ) -> MoveAccepted:
        """Submit one move, or a list of moves for a postal round; with ``wait``, the answer
        also holds the seat's next turn (``.turn``), long-polled up to ``wait`` seconds."""
        reply = self.http.post(
            f"/v1/games/{game_id}/moves",
            json=_move_body(seq, move),
            headers=_auth(token),
            params=_waiting(wait),
        )
        return _decode(reply, MoveAccepted)

    def record(self, game_id: str) -> dict[str, Any]:
        return _decode(self.http.get(f"/v1/games/{game_id}/record"), dict[str, Any])

    def create_tournament(
        self, spec: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        headers = _keyed(self.organizer, idempotency_key)
        reply = self.http.post("/v1/tournaments", json=spec, headers=headers)
        return _decode(reply, dict[str, Any])

    def register(
        self,
        tournament_id: str,
        name: str,
        invite_code: str | None = None,
        idempotency_key: str | None = None,
    ) -> Registered:
        body = _claim_body(name, None, invite_code)
        headers = _keyed({}, idempotency_key)
        path = f"/v1/tournaments/{tournament_id}/entrants"
        reply = self.http.post(path, json=body, headers=headers)
        return _decode(reply, Registered)

    def tournament(self, tournament_id: str) -> dict[str, Any]:
        return _decode(self.http.get(f"/v1/tournaments/{tournament_id}"), dict[str, Any])

    def next_decision(self, entrant_token: str, wait: float = 0) -> NextDecision:
        reply = self.http.get("/v1/me/next", params={"wait": wait}, headers=_auth(entrant_token))
        return _decode(reply, NextDecision)

    def decide_next(
        self, token: str, game_id: str, seq: int, move: Any, wait: float = 0
    ) -> NextDecision:
        """A bot's (or an entrant's) decision in one of its games; the answer is its next
        decision in any of them (one request per decision)."""
        reply = self.http.post(
            f"/v1/me/games/{game_id}/moves",
            json=_move_body(seq, move),
            headers=_auth(token),
            params={"wait": wait},
        )
        return _decode(reply, NextDecision)

    def join_arena(
        self, bot_token: str, ruleset: str, seats: int = 2, deadline_s: float = 10.0
    ) -> dict[str, Any]:
        body = {"ruleset": ruleset, "seats": seats, "deadline_s": deadline_s}
        reply = self.http.post("/v1/arena", json=body, headers=_auth(bot_token))
        return _decode(reply, dict[str, Any])

    def leave_arena(self, bot_token: str) -> None:
        reply = self.http.delete("/v1/arena", headers=_auth(bot_token))
        if reply.status_code != 204:
            _decode(reply, dict[str, Any])  # raises the refusal

    def challenge(
        self, bot_token: str, opponent: str, ruleset: str, **terms: Any
    ) -> dict[str, Any]:
        """Challenge another bot; its answer comes to the challenge (``challenge_of``). The
        terms, by name: ``rated`` (True), ``deadline_s`` (10), ``expires_s`` (60) and the
        ruleset's ``options`` ({})."""
        body = _challenge_body(opponent, ruleset, **terms)
        reply = self.http.post("/v1/challenges", json=body, headers=_auth(bot_token))
        return _decode(reply, dict[str, Any])

    def challenge_of(self, challenge_id: str) -> dict[str, Any]:
        return _decode(self.http.get(f"/v1/challenges/{challenge_id}"), dict[str, Any])

    def accept_challenge(self, bot_token: str, challenge_id: str) -> dict[str, Any]:
        """Accept a challenge: its ``game_id`` reaches both bots through ``next_decision``."""
        path = f"/v1/challenges/{challenge_id}/accept"
        return _decode(self.http.post(path, headers=_auth(bot_token)), dict[str, Any])

    def decline_challenge(self, bot_token: str, challenge_id: str, reason: str) -> None:
        path = f"/v1/challenges/{challenge_id}/decline"
        _decode(self.http.post(path, json={"reason": reason}, headers=_auth(bot_token)), dict)

    def cancel_challenge(self, bot_token: str, challenge_id: str) -> dict[str, Any]:
        """Withdraw this bot's open challenge."""
        path = f"/v1/challenges/{challenge_id}/cancel"
        return _decode(self.http.post(path, headers=_auth(bot_token)), dict[str, Any])


class AsyncClient:
    """The same operations, awaitable."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 75.0,
        patience: float = 120.0,
        organizer_key: str | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.http = http or httpx.AsyncClient(
            base_url=base_url, timeout=timeout, transport=AsyncPatientTransport(patience)
        )
        self.organizer = _auth(organizer_key)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def rulesets(self) -> list[dict[str, Any]]:
        return _decode(await self.http.get("/v1/rulesets"), list[dict[str, Any]])

    async def score(self, ruleset: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = await self.http.post(f"/v1/rulesets/{ruleset}/score", json=body)
        return _decode(reply, dict[str, Any])

    async def create_game(
        self,
        ruleset: str,
        seats: list[dict[str, Any]] | int,
        options: dict | None = None,
        deadline_s: float | None = None,
        idempotency_key: str | None = None,
    ) -> GameCreated:
        body = _create_body(ruleset, seats, options, deadline_s)
        headers = _keyed(self.organizer, idempotency_key)
        reply = await self.http.post("/v1/games", json=body, headers=headers)
        return _decode(reply, GameCreated)

    async def claim_seat(
        self,
        game_id: str,
        name: str,
        client_seed: str | None = None,
        invite_code: str | None = None,
        idempotency_key: str | None = None,
    ) -> Claimed:
        body = _claim_body(name, client_seed, invite_code)
        headers = _keyed({}, idempotency_key)
        reply = await self.http.post(f"/v1/games/{game_id}/seats", json=body, headers=headers)
        return _decode(reply, Claimed)

    async def game(self, game_id: str) -> dict[str, Any]:
        return _decode(await self.http.get(f"/v1/games/{game_id}"), dict[str, Any])

    async def turn(self, game_id: str, token: str, wait: float = 0) -> Turn:
        reply = await self.http.get(
            f"/v1/games/{game_id}/turn", params={"wait": wait}, headers=_auth(token)
        )
        return _decode(reply, Turn)

    async def move(
        self, game_id: str, token: str, seq: int, move: Any, wait: float | None = None
    ) -> MoveAccepted:
        reply = await self.http.post(
            f"/v1/games/{game_id}/moves",
            json=_move_body(seq, move),
            headers=_auth(token),
            params=_waiting(wait),
        )
        return _decode(reply, MoveAccepted)

    async def record(self, game_id: str) -> dict[str, Any]:
        return _decode(await self.http.get(f"/v1/games/{game_id}/record"), dict[str, Any])

    async def create_tournament(
        self, spec: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        headers = _keyed(self.organizer, idempotency_key)
        reply = await self.http.post("/v1/tournaments", json=spec, headers=headers)
        return _decode(reply, dict[str, Any])

    async def register(
        self,
        tournament_id: str,
        name: str,
        invite_code: str | None = None,
        idempotency_key: str | None = None,
    ) -> Registered:
        body = _claim_body(name, None, invite_code)
        headers = _keyed({}, idempotency_key)
        path = f"/v1/tournaments/{tournament_id}/entrants"
        reply = await self.http.post(path, json=body, headers=headers)
        return _decode(reply, Registered)

    async def tournament(self, tournament_id: str) -> dict[str, Any]:
        return _decode(await self.http.get(f"/v1/tournaments/{tournament_id}"), dict[str, Any])

    async def next_decision(self, entrant_token: str, wait: float = 0) -> NextDecision:
        headers = _auth(entrant_token)
        reply = await self.http.get("/v1/me/next", params={"wait": wait}, headers=headers)
        return _decode(reply, NextDecision)

    async def decide_next(
        self, token: str, game_id: str, seq: int, move: Any, wait: float = 0
    ) -> NextDecision:
        """``Client.decide_next``: one request per decision across a bot's games."""
        path, params = f"/v1/me/games/{game_id}/moves", {"wait": wait}
        body, headers = _move_body(seq, move), _auth(token)
        reply = await self.http.post(path, json=body, headers=headers, params=params)
        return _decode(reply, NextDecision)

    async def join_arena(
        self, bot_token: str, ruleset: str, seats: int = 2, deadline_s: float = 10.0
    ) -> dict[str, Any]:
        seek = {"ruleset": ruleset, "seats": seats, "deadline_s": deadline_s}
        reply = await self.http.post("/v1/arena", json=seek, headers=_auth(bot_token))
        return _decode(reply, dict[str, Any])

    async def leave_arena(self, bot_token: str) -> None:
        reply = await self.http.delete("/v1/arena", headers=_auth(bot_token))
        if reply.status_code != 204:
            _decode(reply, dict[str, Any])  # raises the refusal

    async def challenge(
        self, bot_token: str, opponent: str, ruleset: str, **terms: Any
    ) -> dict[str, Any]:
        """``Client.challenge``'s terms (rated, deadline_s, expires_s, options) by name."""
        body = _challenge_body(opponent, ruleset, **terms)
        reply = await self.http.post("/v1/challenges", json=body, headers=_auth(bot_token))
        return _decode(reply, dict[str, Any])

    async def challenge_of(self, challenge_id: str) -> dict[str, Any]:
        return _decode(await self.http.get(f"/v1/challenges/{challenge_id}"), dict[str, Any])

    async def accept_challenge(self, bot_token: str, challenge_id: str) -> dict[str, Any]:
        return await self._answer(bot_token, challenge_id, "accept", None)

    async def decline_challenge(self, bot_token: str, challenge_id: str, reason: str) -> None:
        await self._answer(bot_token, challenge_id, "decline", {"reason": reason})

    async def cancel_challenge(self, bot_token: str, challenge_id: str) -> dict[str, Any]:
        return await self._answer(bot_token, challenge_id, "cancel", None)

    async def _answer(
        self, bot_token: str, challenge_id: str, answer: str, body: dict[str, str] | None
    ) -> dict[str, Any]:
        """A challenge accepted, declined (``body``: the reason) or withdrawn."""
        reply = await self.http.post(
            f"/v1/challenges/{challenge_id}/{answer}", json=body, headers=_auth(bot_token)
        )
        return _decode(reply, dict[str, Any])
