"""A call to a bot's webhook: the message signed per the Standard Webhooks spec with the
seat's secret, POSTed through ``outbound.Outbound`` by a deadline and tried again
(``ATTEMPTS`` calls in all) while time remains, a host that keeps failing left alone for a
while (``Breaker``). ``WebhookSeats`` (``service.webhooks``) decides what to send and when."""

from __future__ import annotations

import asyncio
import base64
import datetime
import functools
import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from standardwebhooks.webhooks import Webhook

from ..outbound import Answer, Failed, Outbound, Refused, target_of

__all__ = [
    "ATTEMPTS",
    "Breaker",
    "Call",
    "Delivery",
    "Gone",
    "Registration",
    "new_game_id",
    "new_secret",
    "signed_headers",
]

#: the time a move needs to reach the game after the bot answered, taken off the deadline
MARGIN_S = 0.1
#: calls made for one message at most: a host that refuses connections or answers 5xx is
#: tried again twice, not until the deadline (nine times in five seconds, before)
ATTEMPTS = 3
#: what an info call's answer may say of the bot, and how long it may take
INFO_FIELDS = ("name", "author", "version", "description", "color")
INFO_TIMEOUT_S = 5.0


def new_game_id() -> str:
    """A game's id, made before the game so that its webhook seats are registered first."""
    return secrets.token_hex(8)


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


class Registration(msgspec.Struct, frozen=True):
    """Whom the referee calls for a seat: the URL, the secret it signs with, and the seat's
    token (kept in Redis as the seeds are; the referee plays the seat with it); ``bot``: the
    bot account whose webhook it is (its calls are reported to ``WebhookSeats.observer``)."""

    url: str
    secret: str
    token: str
    bot: str = ""


class Call(msgspec.Struct, frozen=True):
    """One turn's call to a bot account's webhook, as its profile shows it: when, how long
    until the answer or the failure, and what failed (None: the move was played)."""

    at: float
    ms: float
    error: str | None = None
    gone: bool = False  # it answered 410


@functools.lru_cache(maxsize=4096)
def _signer(secret: str) -> Webhook:
    """A secret's key, decoded once for every call it signs (not once per call)."""
    return Webhook(secret)


def signed_headers(secret: str, message_id: str, body: bytes, now: float) -> dict[str, str]:
    """The Standard Webhooks headers of ``body``: its id, time and signature."""
    at = datetime.datetime.fromtimestamp(int(now), tz=datetime.UTC)
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now)),
        "webhook-signature": _signer(secret).sign(message_id, at, body.decode()),
    }


@dataclass
class Breaker:
    """A circuit breaker per host (and signing secret: ``Delivery.send``): after
    ``threshold`` failures in a row, the host is not called for ``cooldown_s``; then one
    call tries it again (its failure opens it again)."""

    threshold: int = 5
    cooldown_s: float = 30.0
    clock: Callable[[], float] = time.monotonic
    _failures: dict[str, int] = field(default_factory=dict)
    _open_until: dict[str, float] = field(default_factory=dict)

    def closed(self, host: str) -> bool:
        """Whether ``host`` may be called now (an open breaker past its cooldown lets one
        call through, and stays open for the others until that call ends)."""
        until = self._open_until.get(host)
        if until is None:
            return True
        if self.clock() < until:
            return False
        self._open_until[host] = self.clock() + self.cooldown_s  # one trial at a time
        return True

    def failed(self, host: str) -> None:
        count = self._failures.get(host, 0) + 1
        self._failures[host] = count
        if count >= self.threshold:
            self._open_until[host] = self.clock() + self.cooldown_s

    def succeeded(self, host: str) -> None:
        self._failures.pop(host, None)
        self._open_until.pop(host, None)


def _breaker_key(host: str, secret: str) -> str:
    """A host's breaker for the calls signed with one secret (a digest of it, not the secret)."""
    return f"{host} {hashlib.blake2b(secret.encode(), digest_size=8).hexdigest()}"


class Gone(Exception):
    """The bot answered 410: its webhook is to be unregistered."""


class Delivery:
    """Signs and POSTs one message to a bot, by a deadline, trying it again (``ATTEMPTS``
    in all) while time remains."""

    def __init__(self, outbound: Outbound, breaker: Breaker | None = None) -> None:
        self.outbound = outbound
        self.breaker = breaker or Breaker()

    async def send(
        self, url: str, secret: str, message_id: str, message: dict[str, Any], deadline: float
    ) -> Answer:
        """The bot's 2xx answer to ``message``; ``Failed``, ``Refused`` or ``Gone`` else.

        The breaker is the host's for the calls signed with ``secret`` alone (a bot's, a
        seat's): one shared by all made anyone able to stop a bot's turn calls (and have its
        failures pause it) with a webhook of their own that fails on the same host."""
        host = self.outbound_host(url)
        if not self.breaker.closed(breaker := _breaker_key(host, secret)):
            raise Failed(f"{host} failed too often: not called for a while")
        body = msgspec.json.encode(message)
        attempt = 0
        while True:
            headers = signed_headers(secret, message_id, body, time.time())
            try:
                answer = await self.outbound.post(url, body, headers, deadline, breaker)
            except Refused:
                raise
            except Failed as failure:
                error: Failed = failure
                again = failure.again
            else:
                if 200 <= answer.status < 300:
                    self.breaker.succeeded(breaker)
                    return answer
                if answer.status == 410:
                    self.breaker.succeeded(breaker)
                    raise Gone(url)
                error = Failed(f"answered {answer.status}")
                again = answer.status >= 500 or answer.status == 429
            attempt += 1
            pause = 0.05 * 4 ** (attempt - 1)  # 0.05 s, then 0.2 s
            if not again or attempt >= ATTEMPTS or time.time() + pause + 0.1 > deadline:
                self.breaker.failed(breaker)
                raise error
            await asyncio.sleep(pause)

    async def info(
        self, url: str, secret: str, timeout_s: float = INFO_TIMEOUT_S
    ) -> dict[str, str]:
        """Battlesnake's info call: who the bot says it is (its answer's string fields of
        ``INFO_FIELDS``, each at most 200 characters), signed as every call is."""
        message_id = f"info.{secrets.token_hex(8)}"
        answer = await self.send(url, secret, message_id, {"type": "info"}, time.time() + timeout_s)
        said = _object_of(answer, "the info answer")
        return {k: v[:200] for k, v in said.items() if k in INFO_FIELDS and isinstance(v, str)}

    @staticmethod
    def outbound_host(url: str) -> str:
        return target_of(url).origin

    async def turn(self, registration: Registration, game_id: str, turn: dict[str, Any]) -> Any:
        """The bot's move for ``turn`` (its answer's body, a JSON object)."""
        deadline = turn["deadline"] - MARGIN_S
        message_id = f"{game_id}.{turn['seat']}.{turn['seq']}"
        message = {"type": "turn", "game_id": game_id, "turn": turn}
        answer = await self.send(
            registration.url, registration.secret, message_id, message, deadline
        )
        return _object_of(answer, "the answer")


def _object_of(answer: Answer, what: str) -> dict[str, Any]:
    """The answer's body, a JSON object; ``Failed``, naming ``what``, for anything else."""
    try:
        said = msgspec.json.decode(answer.body)
    except msgspec.DecodeError:
        raise Failed(f"{what} is not JSON") from None
    if not isinstance(said, dict):
        raise Failed(f"{what} is not a JSON object")
    return said
