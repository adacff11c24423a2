"""The league, as use cases over the store: bot accounts and their tokens, lifetime ratings
settled exactly once per finished game, the arena's matchmaker, challenges, and a bot's next
decision across all of its games.

Every replica runs the same background loop (``run_forever``): the one that holds the
matchmaker's lock in Redis pairs the pool and settles finished games; any request that finds
a finished league game settles it too. Settling is exactly once whoever races: the store's
script refuses a game settled before, and a rating update read from ratings that have moved
since (then it is read and computed again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import time
from typing import Any

import msgspec

from ..core.documents import check_name, new_token, token_hash
from ..core.game import LoadedGame
from ..core.league import (
    BotDoc,
    ChallengeDoc,
    LeagueGame,
    LogEntry,
    Rating,
    Seek,
    bot_key,
    bot_token_hash,
    check_reason,
    decode,
    encode,
    is_bot_token,
    new_bot_token,
    pair,
    rate_game,
    rating_view,
    seat_order,
)
from ..core.refusals import Refusal, busy, from_rules
from ..games import RULESETS, GameError, check_seats, get_ruleset, new_seed
from ..outbound import Failed, Refused
from ..store import STORE_UNAVAILABLE
from ..store.league import LeagueStore
from .games import MAX_RETRIES, GameService
from .seats import Seats
from .tournaments import TournamentService
from .webhooks import Call, Gone, Registration, WebhookSeats, new_secret

__all__ = ["LeagueService", "LeagueSettings"]

log = logging.getLogger("referee")
_json = msgspec.json.Decoder()

#: how long a bot's token and account are taken as read for its games' requests (and how
#: often it is marked seen): a token rotated or revoked through another replica stops
#: working within this long (through this one: at once)
RECHECK_S = 1.0
#: bots remembered in the process at most (see ``known_bot``)
BOTS_KEPT = 10_000
#: league games' records remembered in the process at most (see ``_league_game``)
LEAGUE_GAMES_KEPT = 10_000


class LeagueSettings(msgspec.Struct, frozen=True):
    """The league's quotas and the matchmaker's pace."""

    games_per_day: int = 2000
    concurrent_games: int = 4
    timeouts_to_pause: int = 3
    #: a bot whose webhook fails this many turn calls in a row is paused (0: never)
    webhook_failures_to_pause: int = 5
    #: a bot that has not asked for this long leaves the arena's pool
    stale_s: float = 60.0
    interval_s: float = 0.1


def _day(now: float) -> str:
    return time.strftime("%Y%m%d", time.gmtime(now))


def _until_tomorrow(now: float) -> int:
    return int(86400 - now % 86400) + 1


def _not_found(name: str) -> Refusal:
    return Refusal("bot-not-found", f"there is no bot {name!r}")


class LeagueService:
    """The league of one Redis; its games are the ``GameService``'s."""

    def __init__(
        self,
        games: GameService,
        store: LeagueStore,
        settings: LeagueSettings | None = None,
        tournaments: TournamentService | None = None,
    ) -> None:
        self.games = games
        self.store = store
        self.tournaments = tournaments
        if tournaments is not None:
            tournaments.on_rated_round = self.rate_tournament_games
        self.settings = settings or LeagueSettings()
        self.holder = secrets.token_hex(8)  # this process's mark on the matchmaker's lock
        self.waiting = 0  # bots the matchmaker last found in the arena's pool
        self.webhooks: WebhookSeats | None = None
        self._league_games: dict[str, LeagueGame] = {}  # see _league_game
        # see known_bot: token digest -> (key, account, when read); key -> token digest
        self._bots: dict[bytes, tuple[str, BotDoc, float]] = {}
        self._token_of: dict[str, bytes] = {}
        self._seen_at: dict[str, float] = {}  # see _seen
        self._playing: dict[str, list[str]] = {}  # each bot's games as last read
        # see _lookout: key -> (when read, its games in play), for a bot then found with games
        # in play and no tournament or challenge
        self._looked: dict[str, tuple[float, list[str]]] = {}
        self.seats: Seats | None = None  # see decide_next
        self._news: dict[str, asyncio.Event] = {}  # see _changed: a bot waiting to be paired
        self.matching = False  # whether this replica held the matchmaker's lock last time

    def attach(self, webhooks: WebhookSeats) -> None:
        """Deliver the games of bots with a webhook through ``webhooks``, told of each call."""
        self.webhooks = webhooks
        webhooks.observer = self._webhook_call

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
        if webhook is not None:
            self._check_webhook(webhook)
        token = new_bot_token()
        doc = BotDoc(name, description, owner, bot_token_hash(token), time.time(), "active")
        doc.contact, doc.webhook = contact, webhook
        doc.webhook_secret = new_secret() if webhook is not None else None
        if not await self.store.save_bot(bot_key(name), "", encode(doc), new_token=doc.token_hash):
            raise Refusal("bot-name-taken", f"a bot is named {name!r} already", field="name")
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

    async def bot_of(self, token: str | None, *, playing: bool = True) -> tuple[str, BotDoc]:
        """The bot a token belongs to; ``playing``: it must be allowed to play."""
        if not is_bot_token(token):
            raise Refusal("unauthorized", "send a bot token as 'Authorization: Bearer'")
        assert token is not None
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
        digest = bot_token_hash(token) if is_bot_token(token) and token is not None else b""
        known = self._bots.get(digest) if digest else None
        if known is not None and time.monotonic() - known[2] < RECHECK_S:
            return known[0], known[1]
        key, doc = await self.bot_of(token, playing=False)
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
        for bots unseen for ``stale_s``."""
        moment = time.monotonic()
        if moment - self._seen_at.get(key, -math.inf) >= RECHECK_S:
            if len(self._seen_at) >= BOTS_KEPT:
                self._seen_at.clear()
            self._seen_at[key] = moment
            await self.store.seen(key, now)

    async def _update_bot(self, key: str, change: Any, **tokens: bytes) -> BotDoc:
        digest: bytes | None = None
        for _ in range(MAX_RETRIES):
            found = await self.store.load_bot(key)
            if found is None:
                raise _not_found(key)
            doc = decode(found[1], BotDoc)
            change(doc)
            digest = self._forget_bot(key) or digest
            if await self.store.save_bot(key, found[0], encode(doc), **tokens):
                self._forget_bot(key)  # a request meanwhile may have read it as it was
                if digest is not None and doc.token_hash == digest and not tokens:
                    # known as just written: its games' next requests need not read it
                    self._bots[digest] = (key, doc, time.monotonic())
                    self._token_of[key] = digest
                return doc
        raise busy("the bot")

    def _may_manage(self, doc: BotDoc, token: str | None, organizer: str | None) -> None:
        """The bot itself (its current token) or the organizer who created it."""
        if token and is_bot_token(token) and bot_token_hash(token) == doc.token_hash:
            return
        if organizer is not None and organizer == doc.owner:
            return
        raise Refusal("not-bot-owner", "only the bot itself or its organizer may do this")

    async def rotate(self, name: str, token: str | None, organizer: str | None) -> str:
        """A new token for the bot; its old one stops working at once."""
        key, _, doc = await self.load_bot(name)
        self._may_manage(doc, token, organizer)
        if doc.status == "banned" and organizer != doc.owner:
            raise Refusal("bot-not-active", "the bot is banned")
        new = new_bot_token()
        digest, old = bot_token_hash(new), doc.token_hash

        def change(doc: BotDoc) -> None:
            doc.token_hash = digest

        await self._update_bot(key, change, old_token=old, new_token=digest)
        await self.store.drop_entrant_tokens(key)  # as the bot, its webhook leaves them
        return new

    async def revoke(self, name: str, token: str | None, organizer: str | None) -> None:
        """The bot has no token until its organizer gives it one (``rotate``)."""
        key, _, doc = await self.load_bot(name)
        self._may_manage(doc, token, organizer)

        def change(doc: BotDoc) -> None:
            doc.token_hash = b""

        await self._update_bot(key, change, old_token=doc.token_hash)
        await self.store.leave(key)
        await self.store.drop_entrant_tokens(key)

    async def set_status(self, name: str, status: str, organizer: str) -> BotDoc:
        """Pause, ban or reinstate a bot: its organizer's alone. A bot that may not play
        leaves the arena."""
        key, _, doc = await self.load_bot(name)
        if organizer != doc.owner:
            raise Refusal("not-bot-owner", "only the organizer who created the bot may do this")

        def change(doc: BotDoc) -> None:
            doc.status = status
            doc.timeout_streak = 0

        doc = await self._update_bot(key, change)
        if status != "active":
            await self.store.leave(key)
        else:  # reinstated: its webhook's failures in a row start again from none
            await self.store.reset_streak(key)
        return doc

    async def profile(self, name: str) -> dict[str, Any]:
        """What anyone may see of a bot: its profile, a rating per ruleset it has played, its
        recent games and whether it is in the arena."""
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
            "webhook": await self._webhook_view(key, doc),
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
        """Rate a finished league game and free its bots: True for the one call that did."""
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
        places = list(game.ruleset.ranking(game.state))
        bots, ruleset, rated = league_game.bots, league_game.ruleset, league_game.rated
        for _ in range(MAX_RETRIES):
            now = time.time()
            read = await self.store.ratings(ruleset, bots) if rated else [None] * len(bots)
            before = [decode(b, Rating) if b else Rating() for b in read]
            after = rate_game(before, places) if rated else before
            entry = encode(LogEntry(game_id, ruleset, bots, places, rated, round(now, 3)))
            seats = [
                (
                    key,
                    old or b"",
                    encode(new) if rated else b"",
                    new.ordinal,
                    encode([round(now, 3), new.mu, new.sigma]),
                )
                for key, old, new in zip(bots, read, after, strict=True)
            ]
            settled = await self.store.settle(game_id, ruleset, entry, now, seats)
            if settled == 0:
                await self.store.drop_game(game_id)  # listed again after it was settled
                return False
            if settled == 1:
                await self._after(game_id, league_game)
                return True
        raise busy("the ratings")

    async def _after(self, game_id: str, league_game: LeagueGame) -> None:
        """What the settling call alone does: count timeouts (a bot that lets deadlines
        decide game after game is paused), and remember the last opponents."""
        timed_out = set()
        for decision in await self.games.store.decisions(game_id):
            found = _json.decode(decision)
            if found.get("timeout"):
                timed_out.add(found["seat"])
        limit = self.settings.timeouts_to_pause
        for key in league_game.bots:
            seat = league_game.seat_of(key)
            others = [b for b in league_game.bots if b != key]

            def change(doc: BotDoc, seat: int = seat, others: list[str] = others) -> None:
                doc.timeout_streak = doc.timeout_streak + 1 if seat in timed_out else 0
                doc.last_opponents = others
                if limit and doc.timeout_streak >= limit and doc.status == "active":
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
        entrant, entrant_token = await self.tournaments.register(
            tournament_id, doc.name, invite_code, bot=(key, token)
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
        await self._check_quota(key, concurrent)
        now = time.time()
        seek = Seek(ruleset, seats, deadline_s, now, now, concurrent)
        await self.store.seek(key, encode(seek), now)
        return {
            "ruleset": ruleset,
            "seats": seats,
            "deadline_s": deadline_s,
            "concurrent": concurrent,
            "since": round(now, 3),
        }

    async def _check_quota(self, key: str, concurrent: int) -> None:
        settings = self.settings
        if concurrent > settings.concurrent_games:
            raise Refusal(
                "bot-quota-exceeded",
                f"a bot plays at most {settings.concurrent_games} arena games at once",
                field="concurrent_games",
                retry_after=60,
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
        day = _day(now)
        found = await self.store.seekers(list(blobs), day)
        for (key, blob), (account, playing, today) in zip(blobs.items(), found, strict=True):
            seek = decode(blob, Seek)
            doc = decode(account, BotDoc) if account else None
            if (
                doc is None
                or doc.status != "active"
                # a bot with a webhook is called, it does not ask
                or (not doc.webhook and seen.get(key, 0) < now - self.settings.stale_s)
            ):
                await self.store.leave(key)  # gone, barred, or no longer asking
                continue
            if playing >= seek.concurrent:
                continue
            if today >= self.settings.games_per_day:
                await self.store.leave(key)
                continue
            seek.since = max(seek.since, free.get(key, seek.since))
            seekers[key], docs[key] = seek, doc
        ratings: dict[tuple[str, str], Rating] = {}
        for ruleset in {s.ruleset for s in seekers.values()}:
            keys = [k for k, s in seekers.items() if s.ruleset == ruleset]
            for key, rated in zip(keys, await self.store.ratings(ruleset, keys), strict=True):
                if rated is not None:
                    ratings[(ruleset, key)] = decode(rated, Rating)
        tables = pair(seekers, ratings, {k: d.last_opponents for k, d in docs.items()}, now)
        made = 0
        for table in tables:
            order = seat_order(table, {k: docs[k].last_first for k in table})
            seeks = [seekers[k] for k in order]
            ruleset = seeks[0].ruleset
            # a ruleset whose seats draw their own dice pairs two bots in two games with the
            # same dice and the seats swapped (``arena_duplicates``): luck cancels
            duplicate = len(order) == 2 and getattr(get_ruleset(ruleset), "arena_duplicates", False)
            ids = [secrets.token_hex(8) for _ in range(2 if duplicate else 1)]
            seed, started_here = new_seed(), 0
            for n, game_id in enumerate(ids):
                seated = order if n == 0 else order[::-1]
                started = await self._start(
                    ruleset,
                    {},
                    seated,
                    [docs[k].name for k in seated],
                    max(s.deadline_s for s in seeks),
                    rated=True,
                    kind="arena",
                    # the second of two duplicates may join the first in play
                    concurrent=[seekers[k].concurrent + n for k in seated],
                    seed=seed,
                    game_id=game_id,
                    group=[other for other in ids if other != game_id],
                )
                if started is None:
                    break
                started_here += 1
            made += started_here
            if not started_here:
                continue
            for seat, key in enumerate(order):

                def change(doc: BotDoc, first: bool = seat == 0) -> None:
                    doc.last_first = first

                with contextlib.suppress(Refusal):
                    await self._update_bot(key, change)
        return made

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
        seed: bytes | None = None,
        game_id: str | None = None,
        group: list[str] | None = None,
    ) -> str | None:
        """A league game between bots, with a fresh seed (or ``seed``, which duplicates
        share, each told of the others: ``group``); None if an arena table could not be
        seated (a bot left, or is busy)."""
        game_id = game_id or secrets.token_hex(8)
        tokens = [new_token(game_id) for _ in keys]
        hooks = await self._hooks(keys, tokens)
        blob = encode(
            LeagueGame(ruleset, keys, rated, tokens, time.time(), kind, webhooks=sorted(hooks))
        )
        if concurrent is not None:
            seats = list(zip(keys, concurrent, strict=True))
            if not await self.store.take(game_id, blob, _day(time.time()), seats):
                return None
        else:
            await self.store.add_game(game_id, blob, keys)
        self._changed(keys)
        try:
            await self._register_hooks(game_id, hooks)
            await self.games.create(
                ruleset,
                options,
                [{"name": name} for name in names],
                deadline_s,
                seed or new_seed(),
                game_id=game_id,
                token_hashes=[token_hash(t) for t in tokens],
                group=group or None,
            )
        except Refusal:
            await self.store.drop_game(game_id, keys)
            raise
        if hooks and self.webhooks is not None:
            self.webhooks.follow(game_id)
        return game_id

    async def _hooks(self, keys: list[str], tokens: list[str]) -> dict[int, Registration]:
        """The webhook registrations of the bots (by seat) that have one."""
        hooks: dict[int, Registration] = {}
        if self.webhooks is None:
            return hooks
        for seat, (key, token) in enumerate(zip(keys, tokens, strict=True)):
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
            at.append(index)
        if not keys:
            return keys
        found = await self._hooks(keys, tokens)
        hooks = {at[i]: registration for i, registration in found.items()}
        await self._register_hooks(game_id, hooks)
        league_game = LeagueGame(
            ruleset, keys, False, tokens, time.time(), "game", "", sorted(hooks), at
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
        ``interval_s`` while bots wait in the arena, every half second while none does (a
        wave: pairing each bot the moment it came free would pair a game's bots again and
        again); the other replicas look for the lock every second (it lapses 2 s after its
        holder's last renewal)."""
        interval = self.settings.interval_s
        sweep_at = 0.0
        while True:
            pause = 1.0
            # a matchmaker must not die; the next round tries again
            with contextlib.suppress(Exception):
                self.matching = await self.store.lock(self.holder, 2000)
                if self.matching:
                    if time.monotonic() >= sweep_at:
                        await self.settle_all()
                        sweep_at = time.monotonic() + 0.5
                    await self.matchmake()
                    pause = interval if self.waiting else 0.5
            await asyncio.sleep(pause)

    # -- a bot's next decision -----------------------------------------------------------------

    async def decide_next(
        self, token: str | None, game_id: str, seq: int, moves: list[Any], wait_s: float
    ) -> dict[str, Any]:
        """A decision in one of a bot's (or an entrant's) games, then its next decision in
        any of them, long-polled up to ``wait_s``: its whole loop in one request."""
        assert self.seats is not None, "the league decides through the seats' service"
        if is_bot_token(token):
            await self.seats.move(game_id, await self.seat_token(token, game_id), seq, moves)
            return await self.next_decision(token, wait_s)
        # an entrant's own token is its seats' token
        assert self.tournaments is not None
        await self.seats.move(game_id, token, seq, moves)
        return await self.tournaments.next_decision(token, wait_s)

    async def next_decision(self, token: str | None, wait_s: float) -> dict[str, Any]:
        """The bot's next turn in any of its league games, or its open challenges (long-polled
        while it has neither). The bot is looked at through ``known_bot``: a long poll sees a
        token rotated or revoked meanwhile within ``RECHECK_S``."""
        stop = time.monotonic() + wait_s
        while True:
            key, doc = await self.known_bot(token)
            now = time.time()
            await self._seen(key, now)
            step = await self._remembered_turn(key, doc)
            if step is not None:
                return step
            playing, entered, inbox = await self._lookout(key, now)
            in_play: dict[str, str] = {}
            for game_id in playing:
                league_game = await self._league_game(game_id)
                if league_game is None:
                    continue
                try:
                    game = await self._game_now(game_id)
                except Refusal:
                    continue
                if game.doc.status == "finished":
                    self._looked.pop(key, None)  # its games in play change: read them again
                    await self.settle(game_id)
                    continue
                seat = league_game.seat_of(key)
                if doc.webhook and seat in league_game.webhooks:
                    continue  # the referee calls its webhook with this game's turns
                if game.turn_status(seat) == "your_turn":
                    return {
                        "status": "your_turn",
                        "game_id": game_id,
                        "seat_token": league_game.seat_tokens[league_game.bots.index(key)],
                        "turn": game.turn(seat),
                    }
                in_play[game_id] = game.last_event_id
            for tournament_id in entered if self.tournaments else []:
                assert self.tournaments is not None
                try:
                    step = await self.tournaments.next_decision(f"{tournament_id}.{token}", 0)
                except Refusal as refusal:
                    if refusal.code not in ("forbidden", "tournament-not-found"):
                        raise
                    step = {"status": "finished"}  # gone, or entered with an older token
                if step["status"] == "your_turn":
                    return step
                if step["status"] == "finished":
                    await self.store.done_with(key, tournament_id)
            challenges = await self.open_challenges(key, now, inbox) if inbox else []
            if challenges:
                return {"status": "challenged", "challenges": challenges}
            remaining = stop - time.monotonic()
            if remaining <= 0 or self.games.memory.stopping:
                return {"status": "waiting"}
            if in_play:
                with contextlib.suppress(Exception):
                    await self.games.wait_for_commits(in_play, min(remaining, 1.0))
            else:
                # waiting to be paired: told at once of a game the matchmaker makes here
                await self._news_for(key, min(RECHECK_S if self.matching else 0.1, remaining))

    async def _lookout(self, key: str, now: float) -> tuple[list[str], list[str], list[str]]:
        """The bot's games in play, tournaments entered and open challenges
        (``LeagueStore.lookout``). A bot found with games in play and neither tournaments
        nor challenges is taken as found for ``RECHECK_S`` (the games themselves are looked
        at each time, from memory while their commits are heard): a decision then costs its
        commit alone. A game, challenge or tournament new to it meanwhile is found within
        ``RECHECK_S`` (through this replica, a game found finished or made for it: at
        once)."""
        looked = self._looked.get(key)
        if looked is not None and time.monotonic() - looked[0] < RECHECK_S:
            return looked[1], [], []
        playing, entered, inbox = await self.store.lookout(key, now)
        if len(self._playing) >= BOTS_KEPT:
            self._playing.clear()
            self._looked.clear()
        self._playing[key] = playing
        if playing and not entered and not inbox:
            self._looked[key] = (time.monotonic(), playing)
        else:
            self._looked.pop(key, None)
        return playing, entered, inbox

    def _changed(self, keys: list[str]) -> None:
        """The bots' games, tournaments or challenges changed through this replica: their
        next decision looks at them again, at once if it waits to be paired."""
        for key in keys:
            self._looked.pop(key, None)
            news = self._news.pop(key, None)
            if news is not None:
                news.set()

    async def _news_for(self, key: str, seconds: float) -> None:
        """Until a game, challenge or tournament is made for the bot through this replica,
        at most ``seconds`` (through another, the bot looks again after them)."""
        news = self._news.get(key)
        if news is None:
            news = self._news[key] = asyncio.Event()
        try:
            await asyncio.wait_for(news.wait(), seconds)
        except TimeoutError:
            pass
        finally:
            if self._news.get(key) is news:
                del self._news[key]

    async def _remembered_turn(self, key: str, doc: BotDoc) -> dict[str, Any] | None:
        """The bot's turn in one of the games it was last found playing, where the process
        remembers the game and the commits heard prove it current: no read at all (a turn
        right after the bot's own decision, or after an opponent's heard commit). None: look
        at everything (its games, tournaments and challenges) in Redis."""
        for game_id in self._playing.get(key, ()):
            league_game = self._league_games.get(game_id)
            known = await self.games.proven_form(game_id) if league_game else None
            if league_game is None or known is None:
                continue
            try:
                game = await self.games.current(game_id, known, reading=True)
            except Refusal:
                continue
            seat = league_game.seat_of(key)
            if game.doc.status == "finished" or (doc.webhook and seat in league_game.webhooks):
                continue
            if game.turn_status(seat) == "your_turn":
                return {
                    "status": "your_turn",
                    "game_id": game_id,
                    "seat_token": league_game.seat_tokens[league_game.bots.index(key)],
                    "turn": game.turn(seat),
                }
        return None

    async def _league_game(self, game_id: str) -> LeagueGame | None:
        """A league game's record: written once when the game is made and never changed, so
        remembered in the process once read, and after the game is settled (a bot's last
        decision sent again is answered alike)."""
        league_game = self._league_games.get(game_id)
        if league_game is None:
            blob = await self.store.league_game(game_id)
            if blob is None:
                return None
            if len(self._league_games) >= LEAGUE_GAMES_KEPT:
                self._league_games.clear()
            league_game = self._league_games[game_id] = decode(blob, LeagueGame)
        return league_game

    async def _game_now(self, game_id: str) -> LoadedGame:
        """The game as it is now: its remembered form where the commits heard prove it
        current (as ``SeatService.wait_turn`` answers), else as read, its commits heard from
        then on (so that the bot's next turns come from memory)."""
        games = self.games
        if not games.follows(game_id):
            with contextlib.suppress(*STORE_UNAVAILABLE):
                await games.follow(game_id)
        known = await self.games.proven_form(game_id)
        if known is not None:
            with contextlib.suppress(Refusal):
                return await self.games.current(game_id, known, reading=True)
        return await self.games.current(game_id, reading=True)

    async def seat_token(self, token: str | None, game_id: str) -> str:
        """The token of the bot's seat in one of its league games."""
        key, _ = await self.known_bot(token)
        league_game = await self._league_game(game_id)
        if league_game is not None and key in league_game.bots and league_game.seat_tokens:
            return league_game.seat_tokens[league_game.bots.index(key)]
        # a tournament's table: its seats answer to the bot's entrant token
        game = await self.games.current(game_id)
        if game.doc.tournament and game.doc.tournament in await self.store.entered(key):
            return f"{game.doc.tournament}.{token}"
        raise Refusal("forbidden", "the bot holds no seat of a game of that id in play")

    # -- challenges ----------------------------------------------------------------------------

    async def challenge(
        self,
        token: str | None,
        opponent: str,
        ruleset: str,
        options: dict[str, Any],
        rated: bool,
        deadline_s: float,
        expires_s: float,
    ) -> dict[str, Any]:
        key, doc = await self.bot_of(token)
        other, _, other_doc = await self.load_bot(opponent)
        if other == key:
            raise Refusal("invalid-challenge", "a bot does not challenge itself", field="opponent")
        try:
            engine = get_ruleset(ruleset)
            engine.options(options)
            check_seats(2, engine.min_seats, engine.max_seats, engine.id)
        except GameError as exc:
            raise from_rules(exc) from None
        now = time.time()
        challenge = ChallengeDoc(
            secrets.token_hex(8),
            key,
            other,
            ruleset,
            options,
            rated,
            deadline_s,
            now,
            now + expires_s,
        )
        ttl = int(expires_s) + 86400
        await self.store.save_challenge(
            challenge.id, "", encode(challenge), ttl, other, challenge.expires
        )
        self._changed([other])
        return self._challenge_view(challenge, doc.name, other_doc.name, now)

    async def get_challenge(self, challenge_id: str) -> dict[str, Any]:
        _, challenge = await self._load_challenge(challenge_id)
        return await self._shown(challenge)

    async def answer(
        self, challenge_id: str, token: str | None, accept: bool, reason: str = "generic"
    ) -> dict[str, Any]:
        """Accept (the game is created, rated or casual as challenged) or decline with a
        reason. Only the challenged bot answers, only before the challenge expires."""
        key, _ = await self.bot_of(token, playing=accept)
        if not accept:
            check_reason(reason)
        for _ in range(MAX_RETRIES):
            version, challenge = await self._load_challenge(challenge_id)
            if challenge.opponent != key:
                raise Refusal("not-challenged", "only the challenged bot answers a challenge")
            now = time.time()
            status = challenge.shown_status(now)
            if status != "open":
                raise Refusal("challenge-closed", f"the challenge is {status}")
            if accept:
                _, challenger = await self.bot_of_key(challenge.challenger)
                _, opponent = await self.bot_of_key(key)
                if challenger.status != "active":
                    raise Refusal("bot-not-active", "the challenger may not play now")
                game_id = await self._start(
                    challenge.ruleset,
                    challenge.options,
                    [challenge.challenger, key],
                    [challenger.name, opponent.name],
                    challenge.deadline_s,
                    rated=challenge.rated,
                    kind="challenge",
                )
                challenge.status, challenge.game_id = "accepted", game_id
            else:
                challenge.status, challenge.reason = "declined", reason
            ttl = 86400
            if await self.store.save_challenge(
                challenge.id, version, encode(challenge), ttl, key, 0
            ):
                await self.store.out_of_inbox(key, challenge.id)
                return await self._shown(challenge)
            if accept and challenge.game_id:
                await self.store.drop_game(challenge.game_id, [challenge.challenger, key])
        raise busy("the challenge")

    async def bot_of_key(self, key: str) -> tuple[str, BotDoc]:
        found = await self.store.load_bot(key)
        if found is None:
            raise _not_found(key)
        return key, decode(found[1], BotDoc)

    async def open_challenges(
        self, key: str, now: float, inbox: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """The bot's open challenges (``inbox``: their ids, read just now)."""
        shown = []
        for challenge_id in await self.store.inbox(key, now) if inbox is None else inbox:
            found = await self.store.load_challenge(challenge_id)
            if found is None:
                continue
            challenge = decode(found[1], ChallengeDoc)
            if challenge.shown_status(now) == "open":
                shown.append(await self._shown(challenge))
        return shown

    async def _load_challenge(self, challenge_id: str) -> tuple[str, ChallengeDoc]:
        found = await self.store.load_challenge(challenge_id)
        if found is None:
            raise Refusal("challenge-not-found", f"there is no challenge {challenge_id!r}")
        return found[0], decode(found[1], ChallengeDoc)

    async def _shown(self, challenge: ChallengeDoc) -> dict[str, Any]:
        names = []
        for key in (challenge.challenger, challenge.opponent):
            found = await self.store.load_bot(key)
            names.append(decode(found[1], BotDoc).name if found else key)
        return self._challenge_view(challenge, names[0], names[1], time.time())

    @staticmethod
    def _challenge_view(
        challenge: ChallengeDoc, challenger: str, opponent: str, now: float
    ) -> dict[str, Any]:
        return {
            "id": challenge.id,
            "challenger": challenger,
            "opponent": opponent,
            "ruleset": challenge.ruleset,
            "options": challenge.options,
            "rated": challenge.rated,
            "deadline_s": challenge.deadline_s,
            "expires": round(challenge.expires, 3),
            "status": challenge.shown_status(now),
            "reason": challenge.reason,
            "game_id": challenge.game_id,
        }
