"""Bot accounts: their tokens, status, profile and webhook, and the bots a process knows."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from typing import Any

import msgspec

from ...core.documents import check_name, new_token
from ...core.league import (
    REVOKED,
    BotDoc,
    Rating,
    bot_entrant_token,
    bot_key,
    bot_token_hash,
    decode,
    encode,
    is_bot_token,
    new_bot_token,
    rating_view,
)
from ...core.refusals import Refusal, busy
from ...games import RULESETS
from ...outbound import Failed, Refused
from ...store import STORE_UNAVAILABLE
from ..delivery import Call, Gone, new_secret
from ..games import MAX_RETRIES
from .base import BOTS_KEPT, RECHECK_S, SEEN_BATCH_S, _not_found
from .names import BotNames

__all__ = ["BotAccounts"]

log = logging.getLogger("referee")


def _manages(doc: BotDoc, token: str | None, organizer: str | None) -> bool:
    """Whether the bot itself (its current token) or the organizer who created it asks."""
    if token and is_bot_token(token) and bot_token_hash(token) == doc.token_hash:
        return True
    return organizer is not None and organizer == doc.owner


class BotAccounts(BotNames):
    """Bot accounts and their tokens, as the league's other parts find them."""

    _bots: dict[bytes, tuple[str, BotDoc, float]]
    _token_of: dict[str, bytes]
    _digests: dict[str, bytes]
    _seen_at: dict[str, float]
    _unmarked: dict[str, float]
    _marked_at: float
    _marking: asyncio.TimerHandle | None
    _marks_written: set[asyncio.Task[None]]

    # -- bots ----------------------------------------------------------------------------------

    async def create_bot(
        self,
        name: str,
        description: str,
        owner: str,
        contact: str | None = None,
        webhook: str | None = None,
    ) -> tuple[BotDoc, str, str | None]:
        """A bot account, its token and its webhook's signing secret (each shown once; only
        the token's hash is kept)."""
        name = check_name(name, "name")
        if "/" in name or name in (".", ".."):
            # its routes and its page take the name as one segment of their path: such a bot
            # could be neither reached nor paused, banned or rotated by its organizer
            raise Refusal(
                "invalid-name",
                "a bot's name is a segment of its routes' paths: no '/', and not '.' or '..'",
                field="name",
            )
        if webhook is not None:
            self._check_webhook(webhook)
        token = new_bot_token()
        doc = BotDoc(name, description, owner, bot_token_hash(token), time.time(), "active")
        doc.contact, doc.webhook = contact, webhook
        doc.webhook_secret = new_secret() if webhook is not None else None
        looks = await self.looks_for_a_bot(name)
        if not await self.store.create_bot(bot_key(name), encode(doc), doc.token_hash, looks):
            raise Refusal(
                "bot-name-taken",
                f"a bot is named {name!r} already, or by a name that looks like it",
                field="name",
            )
        self.bot_named(looks)
        return doc, token, doc.webhook_secret

    def _check_webhook(self, url: str) -> None:
        """The SSRF guard's rules, as for a webhook seat: 422 ``webhook-url-refused``."""
        if self.webhooks is None:
            raise Refusal(
                "webhook-url-refused", "this referee calls no webhooks", field="webhook_url"
            )
        self.webhooks.check_url(url, "webhook_url")

    async def set_webhook(
        self, name: str, url: str | None, token: str | None, organizer: str | None
    ) -> tuple[BotDoc, str | None]:
        """Set (with a new signing secret, shown once), change or remove (None) the bot's
        webhook: by the bot itself or its organizer. Games started before keep the webhook
        they were started with."""
        key, _, doc = await self.load_bot(name)
        self._may_manage(doc, token, organizer)
        if url is not None:
            self._check_webhook(url)
        secret = new_secret() if url is not None else None

        def change(doc: BotDoc) -> None:
            self._may_manage(doc, token, organizer)  # as it is now, not as first read
            doc.webhook, doc.webhook_secret = url, secret

        doc = await self._update_bot(key, change)
        await self.store.reset_streak(key)
        return doc, secret

    async def webhook_info(
        self, name: str, token: str | None, organizer: str | None
    ) -> tuple[dict[str, str] | None, str | None]:
        """Ask the bot's webhook who it is (the info call), by the bot itself or its
        organizer: what it said, kept for its profile, or why the call failed (the profile
        keeps what it said last)."""
        key, _, doc = await self.load_bot(name)
        self._may_manage(doc, token, organizer)
        if doc.webhook is None or doc.webhook_secret is None or self.webhooks is None:
            raise Refusal("bot-has-no-webhook", f"{doc.name} has no webhook to ask", field="name")
        try:
            said = await self.webhooks.delivery.info(doc.webhook, doc.webhook_secret)
        except (Failed, Refused, Gone) as failure:
            return None, str(failure) or type(failure).__name__

        def keep(doc: BotDoc) -> None:
            doc.webhook_info = said

        await self._update_bot(key, keep)
        return said, None

    async def _webhook_call(self, key: str, call: Call) -> None:
        """A turn call to the bot's webhook (``WebhookSeats.observer``): counted and kept for
        its profile; a 410 removes its webhook (its next games reach it by polling); failures
        in a row pause it (a circuit breaker its organizer resets by reinstating it)."""
        streak = await self.store.record_call(key, encode(call), call.error is None)
        limit = self.settings.webhook_failures_to_pause
        gone = call.gone
        pause = bool(limit) and streak >= limit

        def change(doc: BotDoc) -> None:
            if gone:
                doc.webhook = doc.webhook_secret = None
            if pause and doc.status == "active":
                doc.status = "paused"

        if gone or pause:
            doc = await self._update_bot(key, change)
            if doc.status != "active":
                log.warning("bot %s paused: its webhook failed %s calls in a row", doc.name, streak)
                await self.store.leave(key)

    async def load_bot(self, name: str) -> tuple[str, str, BotDoc]:
        """The bot's key, version and document; any name that is none is not found."""
        try:
            key = bot_key(check_name(name, "name"))
        except Refusal:
            raise _not_found(name) from None
        found = await self.store.load_bot(key)
        if found is None:
            raise _not_found(name)
        return key, found[0], decode(found[1], BotDoc)

    async def bot_of(
        self, token: str | None, *, playing: bool = True, key: str | None = None
    ) -> tuple[str, BotDoc]:
        """The bot a token belongs to; ``playing``: it must be allowed to play. ``key``: the
        bot it belonged to when last looked at (its account alone is read again: the token
        is current while the account names it)."""
        if not is_bot_token(token):
            raise Refusal("unauthorized", "send a bot token as 'Authorization: Bearer'")
        assert token is not None
        if key is None:
            key = await self.store.bot_of_token(bot_token_hash(token))
        found = await self.store.load_bot(key) if key else None
        doc = decode(found[1], BotDoc) if found else None
        if key is None or doc is None or doc.token_hash != bot_token_hash(token):
            raise Refusal("bot-token-refused", "this is not a bot's current token")
        if playing and doc.status != "active":
            raise Refusal("bot-not-active", f"the bot is {doc.status}: it may not play now")
        return key, doc

    async def known_bot(self, token: str | None) -> tuple[str, BotDoc]:
        """``bot_of(token, playing=False)`` for the requests of a bot's games (its seat's
        token, its next decision), remembered for ``RECHECK_S``: a token rotated or revoked
        (or a bot changed) through this process is forgotten at once, through another
        replica it stops working here within ``RECHECK_S``."""
        digest = self._digests.get(token) if token is not None else None
        if digest is None:  # hashed once per token while it is known (a request's dict lookup)
            digest = bot_token_hash(token) if is_bot_token(token) and token is not None else b""
            if digest:
                if len(self._digests) >= BOTS_KEPT:
                    self._digests.clear()
                self._digests[token] = digest  # type: ignore[index]  # a bot token: a str
        known = self._bots.get(digest) if digest else None
        if known is not None and time.monotonic() - known[2] < RECHECK_S:
            return known[0], known[1]
        key, doc = await self.bot_of(token, playing=False, key=known[0] if known else None)
        if len(self._bots) >= BOTS_KEPT:
            self._bots.clear()
            self._token_of.clear()
        self._forget_bot(key)
        self._bots[digest] = (key, doc, time.monotonic())
        self._token_of[key] = digest
        return key, doc

    def _forget_bot(self, key: str) -> bytes | None:
        """Forget the bot as known by its token; the token's digest, if it was known."""
        digest = self._token_of.pop(key, None)
        if digest is not None:
            self._bots.pop(digest, None)
        return digest

    async def _seen(self, key: str, now: float) -> None:
        """Mark the bot seen (it asked), at most once in ``RECHECK_S``: the matchmaker looks
        for bots unseen for ``stale_s``. The marks of all the process's bots are written
        together, at most every ``SEEN_BATCH_S`` (one command, not one per bot a second): a
        mark is written by the request that makes it where the last write is that old, else
        by the next write, at most ``SEEN_BATCH_S`` later."""
        moment = time.monotonic()
        if moment - self._seen_at.get(key, -math.inf) < RECHECK_S:
            return
        if len(self._seen_at) >= BOTS_KEPT:
            self._seen_at.clear()
        self._seen_at[key] = moment
        self._unmarked[key] = now
        if moment - self._marked_at >= SEEN_BATCH_S:
            await self._write_marks()
        elif self._marking is None:
            loop = asyncio.get_running_loop()
            self._marking = loop.call_later(SEEN_BATCH_S, self._write_marks_later)

    async def _write_marks(self) -> None:
        """Write the marks not yet written (``_seen``), in one script."""
        self._marked_at = time.monotonic()
        if self._marking is not None:
            self._marking.cancel()
            self._marking = None
        marks, self._unmarked = self._unmarked, {}
        await self.store.seen(marks)

    async def stop(self) -> None:
        """The process stops: the marks left waiting are written now, and no write is left
        due (a store that does not answer loses them)."""
        if self._marking is not None or self._unmarked:
            with contextlib.suppress(*STORE_UNAVAILABLE):
                await self._write_marks()
        for task in list(self._marks_written):
            task.cancel()

    def _write_marks_later(self) -> None:
        """The marks left waiting by ``_seen``, written in a task of their own; a store that
        does not answer loses them (the bots' next requests mark them again)."""
        self._marking = None

        async def write() -> None:
            with contextlib.suppress(*STORE_UNAVAILABLE):
                await self._write_marks()

        task = asyncio.ensure_future(write())
        self._marks_written.add(task)
        task.add_done_callback(self._marks_written.discard)

    async def _update_bot(
        self,
        key: str,
        change: Callable[[BotDoc], dict[str, bytes] | None],
        written: list[int] | None = None,
    ) -> BotDoc:
        """``change`` applied to the bot's document as it is now, and written if its version
        has not moved meanwhile, else read and applied again. ``change`` checks whatever it
        needs on the document it is given, each time (a token that manages the bot, the
        bot's status): a check made on a document read before would let a request whose
        token was rotated or revoked meanwhile write after that. It returns the token hashes
        the write moves (``old_token``, ``new_token``), read off the same document.
        ``written``: the version written is appended to it."""
        digest: bytes | None = None
        for _ in range(MAX_RETRIES):
            found = await self.store.load_bot(key)
            if found is None:
                raise _not_found(key)
            doc = decode(found[1], BotDoc)
            tokens = change(doc) or {}
            digest = self._forget_bot(key) or digest
            if await self.store.save_bot(key, found[0], encode(doc), **tokens):
                if written is not None:
                    written.append(int(found[0] or 0) + 1)  # as the store numbers versions
                self._forget_bot(key)  # a request meanwhile may have read it as it was
                if digest is not None and doc.token_hash == digest and not tokens:
                    # known as just written: its games' next requests need not read it
                    self._bots[digest] = (key, doc, time.monotonic())
                    self._token_of[key] = digest
                return doc
        raise busy("the bot")

    def _may_manage(self, doc: BotDoc, token: str | None, organizer: str | None) -> None:
        """The bot itself (its current token) or the organizer who created it."""
        if not _manages(doc, token, organizer):
            raise Refusal("not-bot-owner", "only the bot itself or its organizer may do this")

    async def rotate(self, name: str, token: str | None, organizer: str | None) -> str:
        """A new token for the bot; its old one stops working at once (one rotation per
        token: requests racing with the same token get one new token, the others 403)."""
        key, _, _ = await self.load_bot(name)
        new = new_bot_token()
        digest = bot_token_hash(new)

        def change(doc: BotDoc) -> dict[str, bytes]:
            self._may_manage(doc, token, organizer)
            if doc.status == "banned" and organizer != doc.owner:
                raise Refusal("bot-not-active", "the bot is banned")
            old, doc.token_hash = doc.token_hash, digest
            return {"old_token": old, "new_token": digest}

        written: list[int] = []
        await self._update_bot(key, change, written)
        await self._rekey(
            key, lambda tournament: bot_entrant_token(tournament, new), written[0], digest
        )
        return new

    async def revoke(self, name: str, token: str | None, organizer: str | None) -> None:
        """The bot has no token until its organizer gives it one (``rotate``)."""
        key, _, _ = await self.load_bot(name)

        def change(doc: BotDoc) -> dict[str, bytes]:
            self._may_manage(doc, token, organizer)
            old, doc.token_hash = doc.token_hash, b""
            return {"old_token": old}

        written: list[int] = []
        await self._update_bot(key, change, written)
        await self._rekey(key, new_token, written[0], REVOKED)  # a token no one holds

    async def _rekey(
        self, key: str, entrant_token: Callable[[str], str], keyed: int, digest: bytes
    ) -> None:
        """The bot's entries in the tournaments it plays answer to ``entrant_token`` of each
        from now on: the entrant token derived from its old bot token (which its seat
        tokens are) plays no table, made before or after (``rekey_entrant``). Its webhook
        leaves the entrant tokens it kept, as the bot does. ``digest``: the new bot token's
        hash (``REVOKED``: none, and the bot leaves the arena first, unless its account
        changed since: the matchmaker drops a bot revoked), for the league's seats
        (``Rekeys``)."""
        if digest == REVOKED:
            await self.store.leave_at(key, keyed)
        await self.store.drop_entrant_tokens(key)
        if self.tournaments is None:
            return
        for tournament_id in await self.store.entered(key):
            token = entrant_token(tournament_id)
            await self.tournaments.rekey_entrant(tournament_id, key, token, keyed)

    async def set_status(self, name: str, status: str, organizer: str) -> BotDoc:
        """Pause, ban or reinstate a bot: its organizer's alone. A bot that may not play
        leaves the arena."""
        key, _, doc = await self.load_bot(name)
        if organizer != doc.owner:
            raise Refusal("not-bot-owner", "only the organizer who created the bot may do this")

        def change(doc: BotDoc) -> None:
            doc.status = status

        doc = await self._update_bot(key, change)
        await self.store.forgive_timeouts(key)  # its count of games lost to deadlines restarts
        if status != "active":
            await self.store.leave(key)
        else:  # reinstated: its webhook's failures in a row start again from none
            await self.store.reset_streak(key)
        return doc

    async def profile(
        self, name: str, token: str | None = None, organizer: str | None = None
    ) -> dict[str, Any]:
        """What anyone may see of a bot: its profile, a rating per ruleset it has played, its
        recent games and whether it is in the arena; and, for the bot itself (``token``) or
        its organizer, its webhook and the calls made to it. Those are no one else's: a call
        is made per decision, hidden steps of a postal round included, while the game runs,
        and a refused move's reason quotes what the seat holds (a CHOPTA pool)."""
        key, _, doc = await self.load_bot(name)
        ratings = []
        for ruleset in RULESETS:
            [blob] = await self.store.ratings(ruleset, [key])
            if blob is not None:
                ratings.append(rating_view(ruleset, decode(blob, Rating)))
        pool, _, _ = await self.store.pool()
        return {
            "name": doc.name,
            "description": doc.description,
            "status": doc.status,
            "created": round(doc.created, 3),
            "in_arena": key in pool,
            "ratings": ratings,
            "recent_games": [
                {"game_id": g, "href": f"/v1/games/{g}"} for g in await self.store.recent(key)
            ],
            "playing": await self.store.playing(key),
            "webhook": await self._webhook_view(key, doc)
            if _manages(doc, token, organizer)
            else None,
        }

    async def _webhook_view(self, key: str, doc: BotDoc) -> dict[str, Any] | None:
        """The bot's webhook as its profile shows it: the URL, its calls and failures, the
        failures in a row, and its latest calls with the latency measured for each."""
        latest, counts = await self.store.calls(key)
        if doc.webhook is None and not latest:
            return None
        calls = [msgspec.to_builtins(decode(c, Call)) for c in latest]
        return {
            "url": doc.webhook,
            "info": doc.webhook_info,
            "calls": counts.get("calls", 0),
            "failures": counts.get("failures", 0),
            "failures_in_a_row": counts.get("streak", 0),
            "latest_calls": calls,
        }
