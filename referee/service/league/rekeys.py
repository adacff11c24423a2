"""What follows a bot's token when it is rotated or revoked: its tournament entries (the
accounts' ``_rekey``) and the seats it holds in its arena and challenge games in play. The
bot's account is written first; a store failure after that leaves the rest to a retry in the
background, and the answer (the new token) is still given: a 503 there lost the new token,
and the bot, whose old token was dead already, could not rotate again."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable

import msgspec

from ...core.documents import new_token, token_hash
from ...core.league import BotDoc, LeagueGame, decode, encode
from ...core.refusals import Refusal, busy
from ...store import STORE_UNAVAILABLE
from ..games import MAX_RETRIES
from ..seat_keys import rekey_seat
from .decisions import NextDecisions

__all__ = ["Rekeys"]

log = logging.getLogger("referee.league")

#: the pauses of the background retries of a rekey the store failed (seconds)
RETRY_PAUSES = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


class Rekeys(NextDecisions):
    """A bot's entries and seats, rekeyed after its token changed."""

    _rekeying: set[asyncio.Task[None]]

    async def _rekey(
        self, key: str, entrant_token: Callable[[str], str], keyed: int, digest: bytes
    ) -> None:
        rekey = functools.partial(self._rekey_now, key, entrant_token, keyed, digest)
        try:
            await rekey()
        except (*STORE_UNAVAILABLE, Refusal) as failure:
            if isinstance(failure, Refusal) and failure.code != "busy":
                raise
            log.warning("bot %s rekeyed in part (%r): the rest is retried", key, failure)
            task = asyncio.create_task(self._rekey_later(key, rekey))
            self._rekeying.add(task)
            task.add_done_callback(self._rekeying.discard)

    async def _rekey_now(
        self, key: str, entrant_token: Callable[[str], str], keyed: int, digest: bytes
    ) -> None:
        await super()._rekey(key, entrant_token, keyed, digest)
        await self.rekey_league_seats(key, digest, keyed)

    async def stop(self) -> None:
        """As the accounts stop; the rekeys left to retry are let go (their bots' organizers
        rotate again), not left running past the store."""
        retries = list(self._rekeying)
        for task in retries:
            task.cancel()
        await asyncio.gather(*retries, return_exceptions=True)
        await super().stop()

    async def _rekey_later(self, key: str, rekey: Callable[[], Awaitable[None]]) -> None:
        """``rekey`` (a ``_rekey_now``) again until it is whole (each of its steps is safe
        to do twice: a bot out of the arena, an entry keyed already, or a seat keyed for its
        digest already, is left)."""
        for pause in RETRY_PAUSES:
            await asyncio.sleep(pause)
            try:
                await rekey()
                return
            except (*STORE_UNAVAILABLE, Refusal) as failure:
                if isinstance(failure, Refusal) and failure.code != "busy":
                    log.error(
                        "bot %s: its rekey was refused (%s); rotate its token again", key, failure
                    )
                    return
        tries = len(RETRY_PAUSES) + 1
        log.error("bot %s: its rekey failed %d times; rotate its token again", key, tries)

    async def rekey_league_seats(self, key: str, digest: bytes, keyed: int) -> None:
        """Each seat the bot holds in its arena and challenge games in play answers to a new
        token, handed to the bot token whose hash is ``digest`` alone (``REVOKED``: to none):
        ``/v1/me/next`` handed the old ones to whoever held the bot's token, and the token
        was rotated or revoked because someone else may hold it; a replica that takes the
        old bot token a moment more (``known_bot``) hands out none of the new ones. A seat
        the referee plays through the bot's webhook was never handed out while the bot has
        its webhook, and is left then. ``keyed``: the version of the bot's account that
        ``digest`` follows (a rekey from an older one, which lost a race or is retried late,
        changes nothing)."""
        found = await self.store.load_bot(key)
        webhook = decode(found[1], BotDoc).webhook if found else None
        for game_id in await self.store.playing(key):
            await self._rekey_league_seat(game_id, key, digest, webhook is not None, keyed)

    async def _rekey_league_seat(
        self, game_id: str, key: str, digest: bytes, webhook: bool, keyed: int
    ) -> None:
        """The record's token for the bot's seat replaced (a swap: a record settled meanwhile
        is not written back), then the game's seat made to answer to the record's token as it
        is when looked at: of two rotations racing, each looks again after its own write, so
        the last to look leaves the game and the record alike."""
        for _ in range(MAX_RETRIES):
            blob = await self.store.league_game(game_id)
            if blob is None:
                return
            league_game = decode(blob, LeagueGame)
            if key not in league_game.bots or not league_game.seat_tokens:
                return  # a tournament's table: its seats follow the entry (rekey_entrant)
            if webhook and league_game.seat_of(key) in league_game.webhooks:
                return
            index, bots = league_game.bots.index(key), len(league_game.bots)
            keyed_for = list(league_game.keyed_for) or [b""] * bots
            keyed_at = list(league_game.keyed_at) or [0] * bots
            if keyed_at[index] >= keyed:
                break  # keyed by this change or a later one: its seat is seen to below
            tokens = list(league_game.seat_tokens)
            tokens[index], keyed_for[index], keyed_at[index] = new_token(game_id), digest, keyed
            # a webhook seat rekeyed (its bot had dropped its webhook) is the bot's to play
            # from now on: it is handed out whether or not a webhook comes back
            hooked = [s for s in league_game.webhooks if s != league_game.seat_of(key)]
            changed = msgspec.structs.replace(
                league_game,
                seat_tokens=tokens,
                keyed_for=keyed_for,
                keyed_at=keyed_at,
                webhooks=hooked,
            )
            if await self.store.swap_league_game(game_id, blob, encode(changed)):
                break
        else:
            raise busy("the league game")
        record = await self._league_game(game_id, again=True)
        for _ in range(MAX_RETRIES):
            if record is None:
                return
            seat_token = record.seat_tokens[record.bots.index(key)]
            try:
                await rekey_seat(self.games, game_id, record.seat_of(key), token_hash(seat_token))
            except Refusal as refusal:
                if refusal.code != "game-not-found":
                    raise
                return
            again = await self._league_game(game_id, again=True)
            if again is None or again.seat_tokens == record.seat_tokens:
                return
            record = again
        raise busy("the league game")

    async def _handing_out(
        self, game_id: str, league_game: LeagueGame, key: str, digest: bytes, stale: bool
    ) -> LeagueGame:
        """``NextDecisions._handing_out``, healed where a race left the seat keyed for
        another token than the one the bot's account holds (a rotation whose rekey failed,
        or one between a game's record and its creation): the account is read, and if the
        token asking is its current one, the seat is keyed for it now."""
        try:
            return await super()._handing_out(game_id, league_game, key, digest, stale)
        except Refusal as refusal:
            if refusal.code != "bot-token-refused":
                raise
            found = await self.store.load_bot(key)
            if found is None or decode(found[1], BotDoc).token_hash != digest:
                raise
            await self._rekey_league_seat(game_id, key, digest, False, int(found[0] or 0))
            return await super()._handing_out(game_id, league_game, key, digest, True)
