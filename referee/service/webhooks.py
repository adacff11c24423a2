"""Webhook bots: the referee calls the bot. Each turn of a webhook seat is POSTed to the bot's
URL (``{"type": "turn", "game_id": ..., "turn": <the Turn JSON of GET /turn>}``), signed per
the Standard Webhooks spec with the seat's secret, and the answer's body is the move. The
game starting and ending are told the same way (``"type": "start"`` and ``"end"``, the latter
with the final turn).

- One replica delivers each turn: it claims the turn in Redis (a lease it renews while it
  waits for the bot), so a referee killed mid-delivery loses nothing (another replica, or the
  same one restarted, claims the turn once the lease lapses and delivers it again, with the
  same ``webhook-id``, by which the bot knows it) and duplicates nothing (a seq is decided
  once: the commit's version check). Notifications are sent at most once.
- The call must be answered by the turn's deadline (connect and read timeouts come from it; a
  failed connection or a 5xx is tried again while time remains). A failure leaves the turn to
  its deadline, where the ruleset's default move is played, as for a polled bot; a 410
  unregisters the seat's webhook.
- A host that keeps failing is left alone for a while (a circuit breaker per host), and
  ``outbound.Outbound`` bounds the requests per host, guards against SSRF and pools the
  connections, so a slow or hostile bot cannot hurt other games.

Who names the URL and secret is outside this module: a seat of ``POST /v1/games`` does
(``prepare``), and the league does for a bot account with a webhook (``register``, its calls
reported to ``observer``). The call itself (signed, sent by a deadline, tried again, a
breaker per host) is ``service.delivery``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ..core.documents import WEBHOOK_SEAT, new_token
from ..core.refusals import Refusal
from ..games import get_ruleset
from ..outbound import Allowed, Failed, Refused, check_literal
from ..store import STORE_UNAVAILABLE
from ..store.webhooks import Claim, WebhookStore
from .delivery import Call, Delivery, Gone, Registration, new_game_id, new_secret
from .seats import Seats

__all__ = ["Observer", "WebhookSeats"]

log = logging.getLogger("referee")

#: told of each turn call to a bot account's webhook (``Registration.bot``)
Observer = Callable[[str, Call], Awaitable[None]]


class WebhookSeats:
    """Plays the webhook seats of every live game: each process follows them all (waiting on
    their turns costs no Redis round trip: commits wake the waits), and one claims each turn."""

    def __init__(
        self,
        store: WebhookStore,
        seats: Seats,
        delivery: Delivery,
        *,
        allowed: Allowed,
        lease_s: float = 2.0,
        scan_s: float = 0.5,
        notify_s: float = 5.0,
    ) -> None:
        self.store = store
        self.seats = seats
        self.delivery = delivery
        self.allowed = allowed
        self.lease_s = lease_s
        self.scan_s = scan_s
        self.notify_s = notify_s
        self._following: dict[str, asyncio.Task[None]] = {}
        self._first_missed: dict[str, float] = {}
        #: told of every turn call to a bot account's webhook (the league counts them)
        self.observer: Observer | None = None
        self.delivered = 0
        self.failed = 0

    # -- at a game's creation ---------------------------------------------------------------

    def check_url(self, url: str, where: str) -> None:
        """A webhook URL as a creation names it: 422 if malformed, or if its host is an
        address the guard refuses (a name is checked at each call, as it resolves then)."""
        try:
            check_literal(url, self.allowed)
        except Refused as refused:
            raise Refusal("webhook-url-refused", str(refused), field=where) from None

    async def prepare(
        self, seats: list[dict[str, Any]], deadline_s: float, ttl_s: int
    ) -> tuple[str | None, dict[int, str]]:
        """A new game's webhook seats (``seats`` as the creation gave them, changed in
        place into named seats with the tokens the referee keeps), registered before the
        game is written, so that no replica misses them: the game's id to create it with
        (None: no webhook seat) and each webhook seat's secret, to show once."""
        registrations: dict[int, Registration] = {}
        game_id = new_game_id()
        for index, seat in enumerate(seats):
            webhook = seat.pop("webhook", None)
            if webhook is None:
                continue
            where = f"seats[{index}]"
            if seat.get("bot") is not None:
                raise Refusal(
                    "webhook-seat-invalid", "a seat is a house bot or a webhook", field=where
                )
            if deadline_s <= 0:
                raise Refusal(
                    "webhook-seat-invalid",
                    "a game with webhook seats needs a deadline (deadline_s above 0)",
                    field="deadline_s",
                )
            self.check_url(webhook["url"], f"{where}.webhook.url")
            seat["token"] = new_token(game_id)
            seat["name"] = seat.get("name") or WEBHOOK_SEAT
            registrations[index] = Registration(webhook["url"], new_secret(), seat["token"])
        if not registrations:
            return None, {}
        await self.register(game_id, registrations, ttl_s)
        return game_id, {seat: r.secret for seat, r in registrations.items()}

    async def register(
        self, game_id: str, registrations: dict[int, Registration], ttl_s: int
    ) -> None:
        """Whom to call for the seats of a game not yet written (a seat's own webhook, or a
        bot account's URL and secret with the seat's token, or an entrant's token for a
        tournament's table); then create the game under ``game_id`` and ``follow`` it."""
        encoded = {seat: msgspec.json.encode(r) for seat, r in registrations.items()}
        await self.store.register(game_id, encoded, ttl_s)

    def follow(self, game_id: str) -> None:
        """Start playing the game's webhook seats in this process (if not already)."""
        task = self._following.get(game_id)
        if task is None or task.done():
            self._following[game_id] = asyncio.create_task(self._follow(game_id))

    # -- following -----------------------------------------------------------------------------

    async def run_forever(self) -> None:
        """Follow every live game, as any replica registers them."""
        while True:
            with contextlib.suppress(Exception):
                for game_id in await self.store.live():
                    self.follow(game_id)
            await asyncio.sleep(self.scan_s)

    async def _follow(self, game_id: str) -> None:
        try:
            registrations = await self.store.registered(game_id)
            plays = [
                self._play(game_id, seat, msgspec.json.decode(value, type=Registration))
                for seat, value in registrations.items()
            ]
            if not plays:
                raise Refusal("game-not-found", "no webhook seats")
            tasks = [asyncio.ensure_future(play) for play in plays]
            try:
                await asyncio.gather(*tasks)
            finally:  # one seat's failure ends the others' plays too: the next scan
                for task in tasks:  # follows the game again, and none is left playing twice
                    task.cancel()
            await self.store.over(game_id)
        except Refusal:
            # no game (yet: it is written right after its registrations; or no longer)
            first = self._first_missed.setdefault(game_id, time.monotonic())
            if time.monotonic() - first > 60:
                self._first_missed.pop(game_id, None)
                await self.store.over(game_id)
        except STORE_UNAVAILABLE:
            pass  # the next scan follows it again
        finally:
            self._following.pop(game_id, None)

    async def _play(self, game_id: str, seat: int, registration: Registration) -> None:
        started = False
        while True:
            try:
                turn = await self.seats.wait_turn(game_id, registration.token, 30.0)
            except STORE_UNAVAILABLE:
                await asyncio.sleep(1.0)
                continue
            except Refusal as refusal:
                if refusal.code != "forbidden":
                    raise
                # the seat answers to another token now (its bot's token was rotated or
                # revoked: ``TournamentService.rekey_entrant``): the webhook leaves it, for
                # every replica, and its turns come through the bot's own requests
                await self.store.unregister(game_id, seat)
                return
            self._first_missed.pop(game_id, None)
            if not started and turn["game_status"] != "waiting":
                started = True
                await self._notify(game_id, seat, registration, "start", turn)
            if turn["status"] == "finished":
                await self._notify(game_id, seat, registration, "end", turn)
                return
            if turn["status"] != "your_turn":
                if self.seats.memory.stopping:  # waits end at once while the process stops
                    await asyncio.sleep(0.5)
                continue
            claim = self.store.claim(game_id, f"{seat}:{turn['seq']}", self.lease_s)
            try:
                taken = await claim.acquire()
            except STORE_UNAVAILABLE:
                taken = False
            if not taken:  # another replica delivers it; if it dies, its lease lapses
                await asyncio.sleep(self.lease_s / 8)
                continue
            if not await self._deliver(game_id, registration, turn, claim):
                return  # unregistered (410)

    async def _deliver(
        self, game_id: str, registration: Registration, turn: dict[str, Any], claim: Claim
    ) -> bool:
        """Deliver a claimed turn and play the bot's move; on a failure, hold the claim until
        the deadline, where the default move is played. False: the webhook is gone."""
        # most bots answer before a third of the lease: the renewing task starts only then
        renewing: list[asyncio.Task[None]] = []
        timer = asyncio.get_running_loop().call_later(
            self.lease_s / 3, lambda: renewing.append(asyncio.create_task(self._renew(claim)))
        )
        began, at = time.perf_counter(), time.time()
        try:
            move = await self.delivery.turn(registration, game_id, turn)
        except Gone:
            log.warning(
                "webhook of game %s seat %s answered 410: unregistered", game_id, turn["seat"]
            )
            await self.store.unregister(game_id, turn["seat"])
            await self._observe(registration, at, began, "answered 410", gone=True)
            return False
        except (Failed, Refused) as failure:
            self.failed += 1
            log.info("webhook of game %s seq %s failed: %s", game_id, turn["seq"], failure)
            await self._observe(registration, at, began, str(failure) or type(failure).__name__)
            await self._hold(claim, turn["deadline"])
            return True
        finally:
            timer.cancel()
            for task in renewing:
                task.cancel()
        try:
            # as strictly as a move posted over HTTP is decoded
            decoded = msgspec.convert(move, get_ruleset(turn["ruleset"]).Move)
            await self.seats.move(game_id, registration.token, turn["seq"], [decoded])
            self.delivered += 1
        except (Refusal, msgspec.ValidationError) as refusal:
            self.failed += 1
            log.info(
                "game %s seq %s: the bot's move was refused: %s", game_id, turn["seq"], refusal
            )
            await self._observe(registration, at, began, f"move refused: {refusal}")
            await self._hold(claim, turn["deadline"])
        else:
            await self._observe(registration, at, began, None)
        return True

    async def _observe(
        self,
        registration: Registration,
        at: float,
        began: float,
        error: str | None,
        gone: bool = False,
    ) -> None:
        """Tell the observer of a bot account's call; its own failure is only logged."""
        if not registration.bot or self.observer is None:
            return
        call = Call(round(at, 3), round((time.perf_counter() - began) * 1000, 2), error, gone)
        try:
            await self.observer(registration.bot, call)
        except Exception:  # the game goes on whatever the bookkeeping meets
            log.exception("webhook call of bot %s not recorded", registration.bot)

    async def _renew(self, claim: Claim) -> None:
        with contextlib.suppress(*STORE_UNAVAILABLE):
            while await claim.extend(self.lease_s):
                await asyncio.sleep(self.lease_s / 3)
            # lost (this process stalled): the seq check keeps it decided once

    async def _hold(self, claim: Claim, deadline: float) -> None:
        """Keep the turn claimed until its deadline has played the default move."""
        remaining = deadline - time.time()
        if remaining > 0:
            with contextlib.suppress(*STORE_UNAVAILABLE):
                await claim.extend(remaining + 1.0)
            await asyncio.sleep(remaining)

    async def _notify(
        self, game_id: str, seat: int, registration: Registration, kind: str, turn: dict[str, Any]
    ) -> None:
        """A start or end notification, at most once across replicas; its failure is only
        logged."""
        claim = self.store.claim(game_id, f"{seat}:{kind}", 24 * 3600)
        try:
            if not await claim.acquire():
                return
        except STORE_UNAVAILABLE:
            return
        message = {"type": kind, "game_id": game_id, "turn": turn}
        deadline = time.time() + self.notify_s
        if turn.get("status") == "your_turn" and turn.get("deadline"):
            # the first turn waits on the start: it may take a quarter of that turn's time
            deadline = min(deadline, time.time() + (turn["deadline"] - time.time()) / 4)
        try:
            await self.delivery.send(
                registration.url, registration.secret, f"{game_id}.{seat}.{kind}", message, deadline
            )
        except (Failed, Refused, Gone) as failure:
            log.info("webhook %s of game %s seat %s failed: %s", kind, game_id, seat, failure)

    async def stop(self) -> None:
        tasks = list(self._following.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        await self.delivery.outbound.aclose()
