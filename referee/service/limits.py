"""Quotas and rate limits, shared by every replica through Redis (``store.limits``), cheap on
a request's path.

- **Requests per second**, per token and per client address: a process leases a slice of a
  second's budget at a time (a quarter) and spends it locally, so a bot's requests cost a
  Redis call now and then, not one each; the budget is counted in Redis, so every replica
  together grants at most the limit (a slice leased and not spent is lost to that second).
  With each lease it takes a small slice (a sixteenth) of each of the next ``LEASE_AHEAD``
  seconds' budgets too: a bot that thinks a second or two between requests, as real bots
  do, would otherwise find a second of its own at every request, and pay a Redis round trip
  before each.
- **Open event streams and long-polls per address**: a process holds a few units of the
  address's cap at a time and gives back what it no longer needs; its holding lapses if it
  dies (it renews it every ``RENEW_S``).
- **Live games and tournaments per owner** (an organizer key, or an address in open mode):
  counted until they finish, or for at most the idle time.

A limit of 0 turns that limit off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from typing import Any

from ..core.documents import token_hash
from ..core.refusals import Refusal
from ..settings import Settings
from ..store import STORE_UNAVAILABLE
from ..store.limits import LimitStore

__all__ = ["LEASE_AHEAD", "RENEW_S", "Limits"]

log = logging.getLogger("referee")
#: how often a process renews what it holds of the addresses' caps (they lapse after 3 ×)
RENEW_S = 20.0
#: a process leases a quarter of a second's budget at a time: a bot's requests cost a
#: Redis call about once a second, and what one replica leases and leaves unspent in a
#: second is at most a quarter of the budget
_SLICES = 4
#: and with it a sixteenth of each of the next three seconds' (those it holds none of yet):
#: a bot asking about once a second or less leases once every four seconds, not at each
#: request; what a replica holds of a second before that second comes is at most a
#: sixteenth of its budget
LEASE_AHEAD = 3
_AHEAD_SLICES = 16


class _Budget:
    """This process's lease of one second's budget: ``left`` to spend; ``refused``: Redis
    granted none in that second (no call until the next)."""

    __slots__ = ("left", "refused")

    def __init__(self, left: int, refused: bool) -> None:
        self.left, self.refused = left, refused


class Limits:
    """One process's side of the shared quotas and limits (``Settings`` gives the caps)."""

    def __init__(self, store: LimitStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        # read on every request
        self.rate_per_token = settings.rate_per_token
        self.rate_per_address = settings.rate_per_address
        self.process = secrets.token_hex(6)
        # a second's budget of a token (by its hash, ``token_hash``, remembered for the
        # seats playing now) or of an address (by itself), by (who, second)
        self._budgets: dict[tuple[bytes | str, int], _Budget] = {}
        self._held: dict[str, list[int]] = {}  # address -> [in use, held in Redis]
        self._tasks: set[asyncio.Task[Any]] = set()
        self._leasing: dict[bytes | str, asyncio.Future[Any]] = {}  # who -> its lease on its way
        self._holding: dict[str, asyncio.Future[Any]] = {}  # address -> its reservation on its way

    # -- requests per second -------------------------------------------------------------------

    def admits(self, address: str, token: str | None) -> bool | None:
        """Whether a request of ``address`` (with ``token``) is within both budgets, from this
        process's leases alone, spending from them if so; None when a lease must be asked
        for first (``request``). Nearly every request is told here, without awaiting."""
        second = int(time.time())
        budgets = self._budgets
        by_token = None
        if token is not None and self.rate_per_token > 0:
            by_token = budgets.get((token_hash(token), second))
            if by_token is None:
                return None
            if by_token.left <= 0:
                return False if by_token.refused else None
        by_address = None
        if self.rate_per_address > 0:
            by_address = budgets.get((address, second))
            if by_address is None:
                return None
            if by_address.left <= 0:
                return False if by_address.refused else None
        if by_token is not None:
            by_token.left -= 1
        if by_address is not None:
            by_address.left -= 1
        return True

    async def request(self, address: str, token: str | None) -> bool:
        """``admits``, asking Redis for the leases it lacks; a store that does not answer
        refuses nothing (the request will meet it anyway)."""
        settings = self.settings
        try:
            limit = settings.rate_per_token
            if token is not None and limit > 0 and not await self._spend(token_hash(token), limit):
                return False
            if settings.rate_per_address > 0:
                return await self._spend(address, settings.rate_per_address)
        except STORE_UNAVAILABLE:
            return True
        return True

    async def _spend(self, who: bytes | str, limit: int) -> bool:
        """Spend one of ``who``'s budget (a token's hash, or an address), leasing more first
        if this process has none left in this second; one lease at a time per ``who``
        (requests arriving meanwhile wait for it: each leasing its own slice would take the
        whole budget in an instant)."""
        # named in Redis by a prefix of the token's hash: never the token itself
        name = "t" + who[:10].hex() if isinstance(who, bytes) else who
        while True:
            second = int(time.time())
            budgets = self._budgets
            budget = budgets.get((who, second))
            if budget is not None:
                if budget.left > 0:
                    budget.left -= 1
                    return True
                if budget.refused:
                    return False
            pending = self._leasing.get(who)
            if pending is not None:
                await asyncio.shield(pending)
                continue
            self._leasing[who] = asyncio.get_running_loop().create_future()
            ahead = range(second + 1, second + 1 + LEASE_AHEAD)
            seconds = [second, *(s for s in ahead if (who, s) not in budgets)]
            slices = max(1, limit // _SLICES), max(1, limit // _AHEAD_SLICES)
            try:
                granted = await self.store.lease_rate(name, seconds, *slices, limit)
            finally:
                self._leasing.pop(who).set_result(None)
            budgets = self._budgets  # as it is now, after the lease
            if len(budgets) > 65536:  # seconds gone by
                budgets = self._budgets = {k: b for k, b in budgets.items() if k[1] >= second}
            for each, grant in zip(seconds, granted, strict=True):
                # a second's budget leased twice (a slice ahead, then one in it) adds up
                held = budgets.get((who, each))
                if held is None:
                    budgets[(who, each)] = _Budget(grant, grant == 0)
                else:
                    held.left += grant
                    held.refused = held.left <= 0 and grant == 0

    # -- open streams and long-polls -----------------------------------------------------------

    def waits_held(self, address: str) -> bool:
        """``start_waiting`` without awaiting, where this process holds a unit for
        ``address`` already (nearly every long-poll); False: call ``start_waiting``."""
        if self.settings.max_waiting_per_address <= 0:
            return True
        held = self._held.get(address)
        if held is None or held[0] >= held[1]:
            return False
        held[0] += 1
        return True

    async def start_waiting(self, address: str) -> None:
        """Hold one of ``address``'s open streams and long-polls, until ``stop_waiting``;
        refused with 429 ``too-many-waiting`` when the address holds its cap."""
        cap = self.settings.max_waiting_per_address
        if cap <= 0:
            return
        while True:
            held = self._held.get(address)
            if held is None:
                held = self._held[address] = [0, 0]
            if held[0] < held[1]:  # held here already: no call
                held[0] += 1
                return
            pending = self._holding.get(address)
            if pending is not None:  # one reservation at a time per address, then look again
                await asyncio.shield(pending)
                continue
            self._holding[address] = asyncio.get_running_loop().create_future()
            try:
                granted = await self._hold(address, max(1, cap // 16), cap)
            except STORE_UNAVAILABLE:
                granted = 1  # the wait will meet the store anyway
            finally:
                self._holding.pop(address).set_result(None)
            held[1] += granted
            if granted == 0:
                raise Refusal(
                    "too-many-waiting",
                    f"this address holds {cap} open event streams and long-polls already",
                    retry_after=5,
                )

    def stop_waiting(self, address: str) -> None:
        """Give back what ``start_waiting`` held; units held beyond need go back to Redis
        (the rest when the address has been idle a while: ``renew_forever``)."""
        cap = self.settings.max_waiting_per_address
        held = self._held.get(address)
        if cap <= 0 or held is None:
            return
        held[0] -= 1
        chunk = max(1, cap // 16)
        spare = held[1] - held[0] - chunk
        if spare > chunk:
            held[1] -= spare
            task = asyncio.get_running_loop().create_task(self._give_back(address, spare))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _give_back(self, address: str, units: int) -> None:
        with contextlib.suppress(*STORE_UNAVAILABLE):
            await self._hold(address, -units, self.settings.max_waiting_per_address)

    async def _hold(self, address: str, units: int, cap: int) -> int:
        now = time.time()
        return await self.store.hold(address, self.process, units, cap, now, now + 3 * RENEW_S)

    async def renew_forever(self) -> None:
        """Keep this process's holdings from lapsing while in use, and give back those of
        addresses that wait no more, for as long as the process runs."""
        while True:
            await asyncio.sleep(RENEW_S)
            for address, held in list(self._held.items()):
                if held[0] == 0:
                    del self._held[address]
                    await self._give_back(address, held[1])
                else:
                    await self._give_back(address, 0)  # renews its time

    # -- live games and tournaments ------------------------------------------------------------

    async def admit(self, owner: str, kind: str, member: str) -> None:
        """Count a new live game or tournament of ``owner``; refused with 429
        ``quota-exceeded`` when the owner has its cap of them live."""
        cap = (
            self.settings.live_games_per_owner
            if kind == "games"
            else self.settings.live_tournaments_per_owner
        )
        if cap <= 0:
            return
        now = time.time()
        until = now + self.settings.idle_ttl_s
        if not await self.store.admit(owner, kind, member, cap, now, until):
            raise Refusal(
                "quota-exceeded",
                f"{cap} live {kind} of this organizer already: finish some first",
                retry_after=60,
            )

    async def release(self, owner: str, kind: str, member: str) -> None:
        with contextlib.suppress(*STORE_UNAVAILABLE):
            await self.store.release(owner, kind, member)
