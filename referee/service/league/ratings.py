"""Lifetime ratings: games settled exactly once, rebuilt, ranked; bots entering tournaments."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import msgspec

from ...core.league import (
    BotDoc,
    LeagueGame,
    LogEntry,
    Rating,
    decode,
    encode,
    is_organizer,
    rate_game,
    rating_view,
)
from ...core.refusals import Refusal, busy
from ...games import RULESETS
from ...store.league import SettledSeat
from ..delivery import Registration
from ..games import MAX_RETRIES
from .accounts import BotAccounts
from .base import LEAGUE_GAMES_KEPT

__all__ = ["Ratings"]

_json_encode = msgspec.json.Encoder().encode
#: how long a finished table of a rated tournament, found sealed, waits before its dice
#: group is read again (its rating then comes at most this late)
SEALED_RECHECK_S = 3.0


class Ratings(BotAccounts):
    """Lifetime ratings, from league and rated tournaments' games."""

    _settled: set[str]
    _sealed_until: dict[str, float]
    _settling: dict[str, asyncio.Future[bool]]
    freed: asyncio.Event  # see Arena.run_forever

    async def history(self, name: str, ruleset: str) -> list[tuple[float, float, float]]:
        """The bot's rating after each rated game of ``ruleset``: (time, mu, sigma)."""
        key, _, _ = await self.load_bot(name)
        points = await self.store.history(ruleset, key)
        return [tuple(msgspec.msgpack.decode(p)) for p in points]

    async def leaderboard(self, ruleset: str, offset: int, limit: int) -> dict[str, Any]:
        """A page of the ruleset's bots by mu - 3 sigma, best first."""
        if ruleset not in RULESETS:
            raise Refusal("ruleset-not-found", f"there is no ruleset {ruleset!r}")
        keys, total = await self.store.board(ruleset, offset, limit)
        blobs = await self.store.ratings(ruleset, keys)
        rows = []
        for rank, (key, blob) in enumerate(zip(keys, blobs, strict=True), offset + 1):
            found = await self.store.load_bot(key)
            if blob is None or found is None:
                continue
            doc = decode(found[1], BotDoc)
            rows.append(
                {"rank": rank, "name": doc.name, **rating_view(ruleset, decode(blob, Rating))}
            )
        following = offset + limit if offset + limit < total else None
        return {"ruleset": ruleset, "total": total, "bots": rows, "next_offset": following}

    # -- settling finished games, exactly once -------------------------------------------------

    async def settle(self, game_id: str) -> bool:
        """Rate a finished league game and free its bots: True for the one call that did.
        Calls of this process meanwhile (its bots, the sweep) wait for it and get False."""
        if game_id in self._settled:
            return False  # by this process (its other bots find it finished too)
        under_way = self._settling.get(game_id)
        if under_way is not None:
            await asyncio.shield(under_way)
            return False
        attempt = self._settling[game_id] = asyncio.ensure_future(self._settle(game_id))
        attempt.add_done_callback(lambda _: self._settling.pop(game_id, None))
        return await asyncio.shield(attempt)

    async def _settle(self, game_id: str) -> bool:
        if self._sealed_until.get(game_id, 0.0) > time.monotonic():
            return False  # found sealed just now: its group is looked at again in a while
        league_game = await self._league_game(game_id)
        if league_game is None:
            return False
        try:
            game = await self._game_now(game_id)
        except Refusal as refusal:
            # never made (a minute after it was listed: its creation may be on its way), or
            # long expired
            if refusal.code == "game-not-found" and league_game.created < time.time() - 60:
                await self.store.drop_game(game_id, league_game.bots)
            return False
        if game.doc.status != "finished":
            return False
        if await self.games.sealed(game):
            # a rated tournament's table whose dice group plays on: its result is told to no
            # one yet (the tournament withholds it too); settled by a sweep once it is over,
            # its group read again every SEALED_RECHECK_S (each sweep, every half second,
            # read a round's every table for each of its tables that had ended)
            if len(self._sealed_until) >= LEAGUE_GAMES_KEPT:
                self._sealed_until.clear()
            self._sealed_until[game_id] = time.monotonic() + SEALED_RECHECK_S
            return False
        places = list(game.ruleset.ranking(game.state))
        bots, ruleset, rated = league_game.bots, league_game.ruleset, league_game.rated
        # what the arena pairs by next (the last opponents, whether it sat first) and whether
        # a deadline decided for it, per bot
        kept = [
            (_json_encode([b for b in bots if b != key]), seat == 0, seat in game.doc.timed_out)
            for key, seat in ((key, league_game.seat_of(key)) for key in bots)
        ]
        for _ in range(MAX_RETRIES):
            now = time.time()
            read = await self.store.ratings(ruleset, bots) if rated else [None] * len(bots)
            before = [decode(b, Rating) if b else Rating() for b in read]
            after = rate_game(before, places) if rated else before
            entry = encode(LogEntry(game_id, ruleset, bots, places, rated, round(now, 3)))
            seats = [
                SettledSeat(
                    key,
                    old or b"",
                    encode(new) if rated else b"",
                    new.ordinal,
                    encode([round(now, 3), new.mu, new.sigma]),
                    *also,
                )
                for key, old, new, also in zip(bots, read, after, kept, strict=True)
            ]
            streaks = await self.store.settle(game_id, ruleset, entry, now, seats)
            if streaks != []:
                if len(self._settled) >= LEAGUE_GAMES_KEPT:
                    self._settled.clear()
                self._settled.add(game_id)
            if streaks is None:
                await self.store.drop_game(game_id)  # listed again after it was settled
                return False
            if streaks:
                self.freed.set()  # the matchmaker's next round comes sooner (run_forever)
                await self._pause_sleepers(bots, streaks)
                return True
        raise busy("the ratings")

    async def _pause_sleepers(self, bots: list[str], streaks: list[int]) -> None:
        """Pause a bot that let deadlines decide game after game (``timeouts_to_pause``
        league games in a row): it leaves the arena until its organizer reinstates it."""
        limit = self.settings.timeouts_to_pause
        for key, streak in zip(bots, streaks, strict=True):
            if not limit or streak < limit:
                continue

            def change(doc: BotDoc) -> None:
                if doc.status == "active":
                    doc.status = "paused"

            with contextlib.suppress(Refusal):
                doc = await self._update_bot(key, change)
                if doc.status != "active":
                    await self.store.leave(key)

    async def rate_tournament_games(
        self, ruleset: str, tournament_id: str, games: list[tuple[str, list[str]]]
    ) -> None:
        """A rated tournament's round: each game is settled into lifetime ratings as the
        league's own are (a round created again lists them again; settled ones are dropped).
        The seats of bots with a webhook are delivered to it (their entrant tokens kept at
        entry), registered before the games are created."""
        now = time.time()
        listed = {}
        for game_id, bots in games:
            hooks: dict[int, Registration] = {}
            for seat, key in enumerate(bots):
                found = await self.store.load_bot(key)
                doc = decode(found[1], BotDoc) if found else None
                entrant_token = (await self.store.entrant_tokens(key)).get(tournament_id)
                if doc is not None and doc.webhook and doc.webhook_secret and entrant_token:
                    hooks[seat] = Registration(doc.webhook, doc.webhook_secret, entrant_token, key)
            await self._register_hooks(game_id, hooks)
            listed[game_id] = encode(
                LeagueGame(ruleset, bots, True, [], now, "tournament", tournament_id, sorted(hooks))
            )
        await self.store.add_games(listed)
        for game_id in listed:
            if self.webhooks is not None:
                self.webhooks.follow(game_id)  # it waits for the game being created

    async def _register_hooks(self, game_id: str, hooks: dict[int, Registration]) -> None:
        if hooks and self.webhooks is not None:
            games = self.games
            await self.webhooks.register(game_id, hooks, games.idle_ttl_s + games.retention_s)

    async def enter_tournament(
        self, token: str | None, tournament_id: str, invite_code: str | None
    ) -> tuple[int, str, str]:
        """A bot account enters a tournament with its bot token: the entrant, its name and
        its entrant token (the league hands it its turns through ``next_decision``)."""
        if self.tournaments is None:
            raise Refusal("bot-token-required", "this referee's tournaments take no bots")
        key, doc = await self.bot_of(token)
        assert token is not None
        organizer = doc.owner if is_organizer(doc.owner) else ""
        entrant, entrant_token = await self.tournaments.register(
            tournament_id, doc.name, invite_code, bot=(key, token), organizer=organizer
        )
        await self.store.enter(key, tournament_id)
        self._changed([key])
        if doc.webhook:  # the referee plays its seats with it, calling the webhook
            await self.store.keep_entrant_token(key, tournament_id, entrant_token)
        return entrant, doc.name, entrant_token

    async def settle_all(self) -> int:
        """Settle every finished league game (the matchmaker's sweep)."""
        settled = 0
        for game_id in await self.store.league_games():
            with contextlib.suppress(Refusal):
                settled += await self.settle(game_id)
        return settled

    async def rebuild(self) -> int:
        """Every rating computed again from the settled games, in the order they were rated,
        each game's places read from its finished record while the referee keeps it (else
        the log's copy): the same numbers as the live updates. The number of rated games."""
        ratings: dict[str, dict[str, Rating]] = {}
        histories: dict[tuple[str, str], list[bytes]] = {}
        count = 0
        for blob in await self.store.log():
            entry = decode(blob, LogEntry)
            if not entry.rated:
                continue
            places = entry.places
            with contextlib.suppress(Refusal):
                game = await self.games.current(entry.game_id)
                if game.doc.status == "finished":
                    places = list(game.ruleset.ranking(game.state))
            table = ratings.setdefault(entry.ruleset, {})
            before = [table.get(key, Rating()) for key in entry.bots]
            for key, new in zip(entry.bots, rate_game(before, places), strict=True):
                table[key] = new
                point = encode([entry.at, new.mu, new.sigma])
                histories.setdefault((entry.ruleset, key), []).append(point)
            count += 1
        await self.store.rewrite_ratings(
            {r: {k: encode(v) for k, v in t.items()} for r, t in ratings.items()},
            {r: {k: v.ordinal for k, v in t.items()} for r, t in ratings.items()},
            histories,
        )
        return count
