"""The arena: its pool, the quotas, the matchmaker and the league's games it starts."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from typing import Any

import msgspec

from ...core.documents import check_name, new_token, token_hash
from ...core.league import (
    BotDoc,
    LeagueGame,
    Rating,
    Seek,
    decode,
    encode,
    is_organizer,
    pair,
    seat_order,
)
from ...core.refusals import Refusal, from_rules
from ...games import GameError, check_seats, get_ruleset, new_seed
from ..delivery import Registration
from ..seat_keys import rekey_seat
from .ratings import Ratings

__all__ = ["Arena"]


_opponents = msgspec.json.Decoder(list[str]).decode


def _day(now: float) -> str:
    return time.strftime("%Y%m%d", time.gmtime(now))


def _until_tomorrow(now: float) -> int:
    return int(86400 - now % 86400) + 1


class Arena(Ratings):
    """The arena's pool and matchmaker, and the league games it makes."""

    holder: str
    waiting: int
    matching: bool

    # -- the arena -----------------------------------------------------------------------------

    async def join(
        self, token: str | None, ruleset: str, seats: int, deadline_s: float, concurrent: int
    ) -> dict[str, Any]:
        """Put the bot in the arena's pool (again: its seek replaced)."""
        key, _ = await self.bot_of(token)
        try:
            engine = get_ruleset(ruleset)
            check_seats(seats, engine.min_seats, engine.max_seats, engine.id)
        except GameError as exc:
            raise from_rules(exc) from None
        self.check_deadline(deadline_s)
        await self._check_quota(key, concurrent)
        now = time.time()
        seek = Seek(ruleset, seats, deadline_s, now, now, concurrent)
        await self.store.seek(key, encode(seek), now)
        self.freed.set()
        return {
            "ruleset": ruleset,
            "seats": seats,
            "deadline_s": deadline_s,
            "concurrent": concurrent,
            "since": round(now, 3),
        }

    def check_deadline(self, deadline_s: float) -> None:
        """A league game's deadline is one a bot can meet over a network: no request meets a
        thousandth of a second, and three such games paused a bot whoever it was."""
        least = self.settings.min_deadline_s
        if deadline_s < least:
            raise Refusal(
                "unprocessable",
                f"a league game gives each decision at least {least:g} s "
                "(REFEREE_BOT_MIN_DEADLINE_S)",
                field="deadline_s",
            )

    async def _check_quota(self, key: str, concurrent: int) -> None:
        settings = self.settings
        if concurrent > settings.concurrent_games:
            # no wait helps: 422, not a quota used up (429 with a Retry-After)
            raise Refusal(
                "unprocessable",
                f"a bot plays at most {settings.concurrent_games} arena games at once "
                "(REFEREE_BOT_CONCURRENT_GAMES)",
                field="concurrent_games",
            )
        now = time.time()
        if await self.store.games_today(key, _day(now)) >= settings.games_per_day:
            raise Refusal(
                "bot-quota-exceeded",
                f"a bot plays at most {settings.games_per_day} arena games a day (UTC)",
                field="games_per_day",
                retry_after=_until_tomorrow(now),
            )

    async def leave(self, token: str | None) -> None:
        key, _ = await self.bot_of(token, playing=False)
        await self.store.leave(key)

    async def matchmake(self) -> int:
        """Seat the pool's tables (``core.league.pair``) and create their games: the number
        of games made. The caller holds the matchmaker's lock."""
        now = time.time()
        blobs, seen, free = await self.store.pool()
        self.waiting = len(blobs)
        seekers: dict[str, Seek] = {}
        docs: dict[str, BotDoc] = {}
        last_opponents: dict[str, list[str]] = {}
        last_first: dict[str, bool] = {}
        day = _day(now)
        asked = {key: decode(blob, Seek) for key, blob in blobs.items()}
        limits = [seek.concurrent for seek in asked.values()]
        found = await self.store.seekers(list(asked), limits, day)
        for (key, seek), seeker in zip(asked.items(), found, strict=True):
            playing, today = seeker.playing, seeker.today
            if playing >= seek.concurrent:
                continue  # not read: looked at again once it is free
            doc = decode(seeker.account, BotDoc) if seeker.account else None
            if (
                doc is None
                or doc.status != "active"
                or not doc.token_hash  # revoked: none of its games would reach it
                # a bot with a webhook is called, it does not ask
                or (not doc.webhook and seen.get(key, 0) < now - self.settings.stale_s)
            ):
                await self.store.leave(key)  # gone, barred, or no longer asking
                continue
            if today >= self.settings.games_per_day:
                await self.store.leave(key)
                continue
            seek.since = max(seek.since, free.get(key, seek.since))
            seekers[key], docs[key] = seek, doc
            last_opponents[key] = _opponents(seeker.opponents)
            last_first[key] = seeker.first
        ratings: dict[tuple[str, str], Rating] = {}
        for ruleset in {s.ruleset for s in seekers.values()}:
            keys = [k for k, s in seekers.items() if s.ruleset == ruleset]
            for key, rated in zip(keys, await self.store.ratings(ruleset, keys), strict=True):
                if rated is not None:
                    ratings[(ruleset, key)] = decode(rated, Rating)
        owners = {key: doc.owner for key, doc in docs.items() if is_organizer(doc.owner)}
        tables = pair(seekers, ratings, last_opponents, now, owners=owners)
        # the tables are seated side by side: their commands share the connection's writes
        # and their bots are told together, so that they play on in step with one another
        # (a bot's requests then share the loop's turns with many others')
        seated = await asyncio.gather(
            *(self._seat(seat_order(table, last_first), seekers, docs) for table in tables),
            return_exceptions=True,
        )
        made = 0
        for outcome in seated:
            if isinstance(outcome, BaseException):
                raise outcome
            made += outcome
        return made

    async def _seat(
        self, order: list[str], seekers: dict[str, Seek], docs: dict[str, BotDoc]
    ) -> int:
        """One table's game made: how many were (1, or 0 if a bot left or is busy).

        Never two games of the same dice for the same bots ("duplicates", seats swapped, so
        that luck cancels): a bot would hold at one of them what its opponent holds hidden
        at the other (CHOPTA's pools), or, from the one that plays faster, the dice the
        other has not dealt yet. docs/LEAGUE.md."""
        seeks = [seekers[k] for k in order]
        started = await self._start(
            seeks[0].ruleset,
            {},
            order,
            [docs[k].name for k in order],
            seeks[0].deadline_s,  # a table's seeks ask for one deadline (``pair``)
            rated=True,
            kind="arena",
            concurrent=[seekers[k].concurrent for k in order],
            docs=docs,
        )
        return 0 if started is None else 1  # whether each bot sat first is kept when settled

    async def _start(
        self,
        ruleset: str,
        options: dict[str, Any],
        keys: list[str],
        names: list[str],
        deadline_s: float,
        *,
        rated: bool,
        kind: str,
        concurrent: list[int] | None = None,
        docs: dict[str, BotDoc] | None = None,
        game_id: str | None = None,
    ) -> str | None:
        """A league game between bots, with a fresh seed; None if an arena table could not
        be seated (a bot left, or is busy). ``docs``: the bots' accounts, as just read;
        ``game_id``: the id the game is to have (an accepted challenge names it first)."""
        game_id = game_id or secrets.token_hex(8)
        tokens = [new_token(game_id) for _ in keys]
        hooks = await self._hooks(keys, tokens, docs)
        # each seat's token is for the bot token its account holds as just read: a replica
        # that takes an older one a moment more (``known_bot``) is handed none of them
        keyed_for = (
            [docs[k].token_hash for k in keys] if docs and all(k in docs for k in keys) else []
        )
        league_game = LeagueGame(
            ruleset,
            keys,
            rated,
            tokens,
            time.time(),
            kind,
            webhooks=sorted(hooks),
            keyed_for=keyed_for,
        )
        blob = encode(league_game)
        # heard from before its creation, so that the created form is remembered: its
        # bots' first turns are told from memory, not read back (a seat that waits would
        # have it heard anyway)
        hearing = self.games.hear(game_id)
        if concurrent is not None:
            seats = list(zip(keys, concurrent, strict=True))
            taken, _ = await asyncio.gather(
                self.store.take(game_id, blob, _day(time.time()), seats), hearing
            )
            if not taken:
                return None
        else:
            await asyncio.gather(self.store.add_game(game_id, blob, keys), hearing)
        try:
            await self._register_hooks(game_id, hooks)
            await self.games.create(
                ruleset,
                options,
                [{"name": name} for name in names],
                deadline_s,
                new_seed(),
                game_id=game_id,
                token_hashes=[token_hash(t) for t in tokens],
            )
        except Refusal:
            await self.store.drop_game(game_id, keys)
            raise
        league_game = await self._rekeyed_meanwhile(game_id, blob, league_game)
        self._made(keys, game_id, league_game)  # its bots' next decisions find it
        if hooks and self.webhooks is not None:
            self.webhooks.follow(game_id)
        return game_id

    async def _rekeyed_meanwhile(
        self, game_id: str, blob: bytes, league_game: LeagueGame
    ) -> LeagueGame:
        """The record as it is once its game is made: a rotation between the record's write
        and the game's creation rekeyed the record and found no game to rekey, and the game
        was made with the tokens of before; its seats follow the record now."""
        now = await self.store.league_game(game_id)
        if now is None or now == blob:
            return league_game
        rekeyed = decode(now, LeagueGame)
        for index, (was, token) in enumerate(
            zip(league_game.seat_tokens, rekeyed.seat_tokens, strict=True)
        ):
            if was != token:
                seat = rekeyed.seat_of(rekeyed.bots[index])
                await rekey_seat(self.games, game_id, seat, token_hash(token))
        return rekeyed

    async def _hooks(
        self, keys: list[str], tokens: list[str], docs: dict[str, BotDoc] | None = None
    ) -> dict[int, Registration]:
        """The webhook registrations of the bots (by seat) that have one (from ``docs``
        where given, else as read)."""
        hooks: dict[int, Registration] = {}
        if self.webhooks is None:
            return hooks
        for seat, (key, token) in enumerate(zip(keys, tokens, strict=True)):
            doc = docs.get(key) if docs is not None else None
            if doc is None:
                found = await self.store.load_bot(key)
                doc = decode(found[1], BotDoc) if found else None
            if doc is not None and doc.webhook and doc.webhook_secret:
                hooks[seat] = Registration(doc.webhook, doc.webhook_secret, token, key)
        return hooks

    async def seat_accounts(
        self,
        game_id: str,
        ruleset: str,
        seats: list[dict[str, Any]],
        owner: str | None,
        deadline_s: float,
    ) -> list[str]:
        """Bot accounts in seats of ``POST /v1/games`` (``{"account": NAME}``; ``seats``
        changed in place into named seats with tokens the league keeps): only the
        organizer who created a bot seats it; the game is casual (logged, rated for no one)
        and reaches each bot as its league games do (its webhook, else ``/v1/me/next``)."""
        keys: list[str] = []
        tokens: list[str] = []
        keyed_for: list[bytes] = []  # each seat's token is for the bot's token as just read
        at: list[int] = []
        for index, seat in enumerate(seats):
            name = seat.pop("account", None)
            if name is None:
                continue
            where = f"seats[{index}].account"
            if seat.get("bot") is not None or seat.get("webhook") is not None:
                raise Refusal(
                    "account-seat-invalid",
                    "a seat is a house bot, a webhook or a bot account",
                    field=where,
                )
            key, _, doc = await self.load_bot(name)
            if doc.owner != owner:
                raise Refusal(
                    "not-bot-owner", "only the organizer who created a bot seats it", field=where
                )
            if doc.status != "active":
                raise Refusal("bot-not-active", f"the bot is {doc.status}: it may not play now")
            if key in keys:
                raise Refusal(
                    "account-seat-invalid", "a bot account takes one seat of a game", field=where
                )
            if doc.webhook and deadline_s <= 0:
                raise Refusal(
                    "account-seat-invalid",
                    "a bot with a webhook plays games with a deadline (deadline_s above 0)",
                    field="deadline_s",
                )
            seat["token"] = new_token(game_id)
            # the seat shows the bot's name unless the organizer names it
            given = seat.get("name")
            seat["name"] = check_name(given, f"seats[{index}].name") if given else doc.name
            keys.append(key)
            tokens.append(seat["token"])
            keyed_for.append(doc.token_hash)
            at.append(index)
        if not keys:
            return keys
        found = await self._hooks(keys, tokens)
        hooks = {at[i]: registration for i, registration in found.items()}
        await self._register_hooks(game_id, hooks)
        league_game = LeagueGame(
            ruleset,
            keys,
            False,
            tokens,
            time.time(),
            "game",
            "",
            sorted(hooks),
            at,
            keyed_for=keyed_for,
        )
        await self.store.add_game(game_id, encode(league_game), keys)
        self._changed(keys)
        return keys

    async def seated(self, game_id: str, keys: list[str], created: bool) -> None:
        """After ``seat_accounts``: the game was created (its webhook seats followed), or
        refused (the league forgets it)."""
        if not created:
            await self.store.drop_game(game_id, keys)
        elif self.webhooks is not None:
            self.webhooks.follow(game_id)

    async def run_forever(self) -> None:
        """The matchmaker and the settling sweep, in whichever replica holds the lock: every
        ``interval_s`` while bots wait in the arena, every half second while none does, and
        sooner (``soonest_s`` after the last round began) when bots came free through this
        replica meanwhile; the other replicas look for the lock every second (it lapses 2 s
        after its holder's last renewal). The two bots of a game that just ended come free
        together: the rematch penalty of ``pair`` keeps them apart until their windows have
        widened past it, so a round right then pairs each with another bot or with none."""
        interval, soonest = self.settings.interval_s, self.settings.soonest_s
        sweep_at = 0.0
        with contextlib.suppress(Exception):  # else done by the first name looked up
            await self.looks_ready()
        while True:
            began = time.monotonic()
            self.freed.clear()  # bots freed from now on bring the next round forward
            pause, matched = 1.0, False
            # a matchmaker must not die; the next round tries again
            with contextlib.suppress(Exception):
                matched = self.matching = await self.store.lock(self.holder, 2000)
                if matched:
                    if time.monotonic() >= sweep_at:
                        await self.settle_all()
                        sweep_at = time.monotonic() + 0.5
                    await self.matchmake()
                    pause = interval if self.waiting else 0.5
            if matched and soonest < pause:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.freed.wait(), pause)
                pause = began + soonest - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
