"""Idempotency keys, as Stripe's API has them, for the creations whose answers hold a token
shown once (a game, a tournament, a seat claimed, an entrant registered): a client that lost
an answer sends the same request with the same key and gets the same answer, and nothing is
made twice, whichever replica either request reaches.

The first request under a key claims it in Redis (SET NX, in one script; the claim expires
after ``IN_FLIGHT_S`` should its process die), makes what it asks for, and replaces the claim
by its answer, kept ``ttl_s``. The same key again: with the same body, that answer
(``replayed``); with another, 422 ``idempotency-key-reused``; while the first still runs, 409
``idempotency-key-in-progress``. A refusal keeps nothing: the key may be used again.

Who may replay what: a key counts within its ``scope`` (the operation, what it acts on, and
who asks: the organizer's key, or the client's address), so another organizer or another
client with the same key gets nothing of the first's answer. Redis never holds a token in a
form a reader of it can use: a record is named by an HMAC of (scope, key) under the server's
secret, and sealed (AES-GCM) with a key derived from the same, so opening it takes the
idempotency key itself, which only its client has, and which is never stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import NamedTuple

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..core.refusals import Refusal
from ..store import STORE_UNAVAILABLE, IdempotencyStore

__all__ = ["IN_FLIGHT_S", "KEY_PATTERN", "Answer", "Idempotency", "check_key"]

log = logging.getLogger("referee")

HEADER = "Idempotency-Key"
#: seconds a claim holds its key while its request runs (a dead process's claim lapses)
IN_FLIGHT_S = 30
#: how long a shared secret lives unused in Redis, and how often a process reads it again
SECRET_TTL_S = 30 * 24 * 3600
SECRET_REREAD_S = 3600
#: 1 to 255 printable ASCII characters, none of the spaces HTTP strips at either end (the
#: same in Python's and ECMA's syntax, for the contract)
KEY_PATTERN = r"^[!-~]([ -~]{0,253}[!-~])?$"
_KEY = re.compile(KEY_PATTERN)
_CLAIM, _ANSWER = b"C", b"A"
_FINGERPRINT = 32  # bytes of a request's fingerprint in a record
_NONCE = 12


class Answer(NamedTuple):
    """An answer as it is kept and given again: status, media type, body byte for byte, and
    where what it made is read (its ``Location``; "" for none)."""

    status: int
    media_type: str
    body: bytes
    location: str = ""


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Answer).decode


def check_key(key: str) -> None:
    """1 to 255 printable ASCII characters (a UUID is a good key), else 400."""
    if not _KEY.fullmatch(key) or key.endswith("\n"):
        raise Refusal(
            "invalid-idempotency-key",
            "an Idempotency-Key is 1 to 255 printable ASCII characters",
            field=HEADER,
        )


class Idempotency:
    """Creations under idempotency keys (``once``), for every replica of one Redis."""

    def __init__(
        self, store: IdempotencyStore, ttl_s: int = 24 * 3600, secret: str | None = None
    ) -> None:
        self.store = store
        self.ttl_s = ttl_s
        # a configured secret never reaches Redis; without one, the replicas share one there
        self._secret = hashlib.sha256(secret.encode()).digest() if secret else None
        self._shared: tuple[bytes, float] | None = None

    async def once(
        self, scope: str, key: str, request: bytes, make: Callable[[], Awaitable[Answer]]
    ) -> tuple[Answer, bool]:
        """``make``'s answer, made once for ``key`` within ``scope`` for the request body
        ``request``; and whether it is a replay of an earlier request's."""
        check_key(key)
        if self.ttl_s <= 0:  # kept for no time: every request is a first one
            return await make(), False
        derived = hmac.digest(await self._secret_now(), f"{scope}\0{key}".encode(), "sha256")
        name = hmac.digest(derived, b"name", "sha256").hex()
        seal = AESGCM(hmac.digest(derived, b"seal", "sha256"))
        fingerprint = hmac.digest(derived, b"request\0" + request, "sha256")
        claim = _CLAIM + fingerprint + secrets.token_bytes(8)
        found = await self.store.claim(name, claim, IN_FLIGHT_S)
        if found is not None:
            return self._replayed(found, fingerprint, seal, name), True
        # a client that hangs up does not stop the creation half way: its answer is kept
        made = asyncio.ensure_future(self._made(name, claim, fingerprint, seal, make))
        return await asyncio.shield(made), False

    async def _made(
        self,
        name: str,
        claim: bytes,
        fingerprint: bytes,
        seal: AESGCM,
        make: Callable[[], Awaitable[Answer]],
    ) -> Answer:
        try:
            answer = await make()
        except BaseException:
            with contextlib.suppress(*STORE_UNAVAILABLE):  # else the claim lapses by itself
                await self.store.release(name, claim)
            raise
        nonce = secrets.token_bytes(_NONCE)
        sealed = seal.encrypt(nonce, _encode(answer), name.encode())
        try:
            await self.store.answer(name, claim, _ANSWER + fingerprint + nonce + sealed, self.ttl_s)
        except STORE_UNAVAILABLE as exc:
            # made, but not kept: its claim lapses, and the key then makes it again
            log.warning("an idempotent answer was not kept: Redis does not answer (%r)", exc)
        return answer

    def _replayed(self, found: bytes, fingerprint: bytes, seal: AESGCM, name: str) -> Answer:
        if not hmac.compare_digest(found[1 : 1 + _FINGERPRINT], fingerprint):
            raise Refusal(
                "idempotency-key-reused",
                "this Idempotency-Key was used with another request body; use a new key for "
                "a new request",
                field=HEADER,
            )
        if found[:1] == _CLAIM:
            raise Refusal(
                "idempotency-key-in-progress",
                "the first request with this Idempotency-Key is still being answered; try "
                "again in a moment",
                field=HEADER,
                retry_after=1,
            )
        nonce = found[1 + _FINGERPRINT : 1 + _FINGERPRINT + _NONCE]
        try:
            return _decode(seal.decrypt(nonce, found[1 + _FINGERPRINT + _NONCE :], name.encode()))
        except InvalidTag:  # not sealed with this key: not its record
            raise RuntimeError("an idempotent answer that does not open") from None

    async def _secret_now(self) -> bytes:
        if self._secret is not None:
            return self._secret
        now = time.monotonic()
        if self._shared is None or now > self._shared[1]:
            secret = await self.store.shared_secret(SECRET_TTL_S)
            self._shared = (secret, now + SECRET_REREAD_S)
        return self._shared[0]
