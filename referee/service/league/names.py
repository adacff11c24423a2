"""Bot names as they look: each bot's name is its own and no one else's, by its UTS #39
skeletons (``core.league.name_looks``), which the store keeps for every bot; a seat, an
entrant or another bot whose name looks like a bot's is refused."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time

import msgspec

from ...core.documents import check_name
from ...core.league import BotDoc, bot_key, decode, name_looks, names_a_house_seat
from ...core.refusals import Refusal
from .base import BOTS_KEPT, RECHECK_S, LeagueBase

__all__ = ["BotNames"]


def _looks_of(blob: bytes) -> list[str]:
    """What a kept bot's name looks like (none for a document it cannot read)."""
    try:
        return name_looks(decode(blob, BotDoc).name)
    except msgspec.DecodeError:
        return []


class BotNames(LeagueBase):
    """The looks of the bots' names, and the names refused for looking like a bot's."""

    _free_looks: dict[str, float]
    _looks_kept: bool
    _bots_made: int
    _keeping_looks: asyncio.Lock

    async def looks_for_a_bot(self, name: str) -> list[str]:
        """What a new bot's ``name`` (checked) looks like, once the store's looks are ready;
        refused where it looks like a name the referee gives its own seats."""
        if names_a_house_seat(name):
            raise Refusal(
                "invalid-name",
                "a bot's name is not one the referee gives the seats it names itself (a "
                "house bot's, 'random (house bot)'; a webhook seat's, 'webhook bot')",
                field="name",
            )
        await self.looks_ready()
        return name_looks(name)

    def bot_named(self, looks: list[str]) -> None:
        """A bot with ``looks`` was just made through this process, and is seen at once: no
        look read free before, or while it was made, is taken as free (``refuse_bot_names``
        keeps none it read while a bot was made)."""
        self._bots_made += 1
        for look in looks:
            self._free_looks.pop(look, None)

    async def looks_ready(self) -> None:
        """The looks of the bots made before they were kept (an upgrade) put in, once per
        process (once for all replicas: then a flag in the store says so), before a name is
        compared with them: a look-alike of such a bot got through until then."""
        if self._looks_kept:
            return
        async with self._keeping_looks:
            if not self._looks_kept:
                await self.store.index_looks(_looks_of)
                self._free_looks.clear()
                self._looks_kept = True

    async def is_bot_name(self, name: str) -> bool:
        """Whether a bot account has ``name`` or one that looks like it (``name_looks``)."""
        await self.looks_ready()
        return any(key is not None for key in await self.store.looks_held(name_looks(name)))

    async def refuse_bot_names(
        self, named: list[tuple[str, str]], own: dict[str, str] | None = None
    ) -> None:
        """409 ``bot-name-taken`` for the first of ``named`` (field, name) that is a bot
        account's name or looks like one: a seat that is no bot's account would pass for
        the bot on every page, listing and replay. ``own``: field -> the name of the bot
        whose seat it names (an organizer's account seat), whose own looks it may show, and
        no other bot's."""
        await self.looks_ready()
        owners = {}
        for field, account in (own or {}).items():
            with contextlib.suppress(Refusal):  # no bot's name: refused where it is seated
                owners[field] = bot_key(check_name(account, field))
        looks = [name_looks(check_name(name, field)) for field, name in named]
        moment = time.monotonic()
        asked = sorted(
            {
                look
                for each in looks
                for look in each
                if moment - self._free_looks.get(look, -math.inf) >= RECHECK_S
            }
        )
        if not asked:
            return
        made = self._bots_made
        held = dict(zip(asked, await self.store.looks_held(asked), strict=True))
        # those no bot's as read: taken as such for RECHECK_S, as a bot token is (a game's
        # seats are named alike game after game); a bot made through this process since is
        # seen at once (none is kept if one was made while they were read), one made
        # through another replica within that second
        if len(self._free_looks) >= BOTS_KEPT:
            self._free_looks.clear()
        if made == self._bots_made:
            self._free_looks.update((look, moment) for look, key in held.items() if key is None)
        for (field, name), its_looks in zip(named, looks, strict=True):
            mine = owners.get(field)
            if any(held.get(look) not in (None, mine) for look in its_looks):
                raise Refusal(
                    "bot-name-taken",
                    f"{name!r} is a bot account's name, or looks like one: "
                    "only that bot plays under it",
                    field=field,
                )
