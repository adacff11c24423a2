"""A bot's next decision across all of its games, and what a process remembers for it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import msgspec

from ...core.documents import token_hash
from ...core.game import LoadedGame
from ...core.league import (
    BotDoc,
    LeagueGame,
    bot_entrant_token,
    decode,
    encode,
    is_bot_token,
    legacy_entrant_token,
)
from ...core.refusals import Refusal, busy
from ..games import MAX_RETRIES
from ..seat_keys import rekey_seat
from ..seats import Seats
from .base import BOTS_KEPT, LEAGUE_GAMES_KEPT, RECHECK_S
from .challenges import Challenges

__all__ = ["NextDecisions"]


class NextDecisions(Challenges):
    """A bot's next decision: its turn in any of its games, or its challenges."""

    _league_games: dict[str, LeagueGame]
    _playing: dict[str, list[str]]
    _looked: dict[str, tuple[float, list[str]]]
    seats: Seats | None
    _news: dict[str, asyncio.Event]

    # -- a bot's next decision -----------------------------------------------------------------

    async def decide_next(
        self, token: str | None, game_id: str, seq: int, moves: list[Any], wait_s: float
    ) -> dict[str, Any]:
        """A decision in one of a bot's (or an entrant's) games, then its next decision in
        any of them, long-polled up to ``wait_s``: its whole loop in one request."""
        assert self.seats is not None, "the league decides through the seats' service"
        if is_bot_token(token):
            known = await self.known_bot(token)  # once for the decision and the next
            seat_token = await self.seat_token(token, known, game_id)
            try:
                await self.seats.move(game_id, seat_token, seq, moves)
            except Refusal as refusal:
                # the record this process remembers is older than the seat's rekey (through
                # another replica: ``rekey_league_seats``): read again, decided once
                if refusal.code != "forbidden" or self._league_games.pop(game_id, None) is None:
                    raise
                seat_token = await self.seat_token(token, known, game_id)
                await self.seats.move(game_id, seat_token, seq, moves)
            return await self.next_decision(token, wait_s, known)
        # an entrant's own token is its seats' token; a token that is no entrant's (a game's
        # seat token) is refused before its decision is made, not after
        assert self.tournaments is not None
        await self.tournaments.check_entrant(token)
        await self.seats.move(game_id, token, seq, moves)
        return await self.tournaments.next_decision(token, wait_s)

    async def next_of(self, token: str | None, wait_s: float) -> dict[str, Any]:
        """A bot's (or an entrant's) next decision in any of its games, long-polled up to
        ``wait_s`` (``GET /v1/me/next``)."""
        if is_bot_token(token):
            return await self.next_decision(token, wait_s)
        assert self.tournaments is not None
        return await self.tournaments.next_decision(token, wait_s)

    async def next_decision(
        self, token: str | None, wait_s: float, known: tuple[str, BotDoc] | None = None
    ) -> dict[str, Any]:
        """The bot's next turn in any of its league games, or its open challenges (long-polled
        while it has neither). The bot is looked at through ``known_bot`` (``known``: as the
        same request just found it): a long poll sees a token rotated or revoked meanwhile
        within ``RECHECK_S``."""
        stop = time.monotonic() + wait_s
        while True:
            key, doc = known or await self.known_bot(token)
            known = None
            now = time.time()
            await self._seen(key, now)
            step, in_play = await self._remembered_turn(key, doc)
            if step is not None:
                return step
            news = self._listen(key)  # before the look: news meanwhile is not missed
            if in_play is None or self._looked_lately(key) is None:
                # not every game it plays was seen from memory, or something else may be
                # new to it: look at everything (a game seen from memory, none its turn,
                # with nothing else to look at, is waited on at once)
                step, in_play = await self._look(token, key, doc, now)
                if step is not None:
                    return step
            remaining = stop - time.monotonic()
            if remaining <= 0 or self.games.memory.stopping:
                return {"status": "waiting"}
            if in_play:
                with contextlib.suppress(Exception):
                    await self.games.wait_for_commits(in_play, min(remaining, 1.0))
            else:
                # waiting to be paired: told at once of a game the matchmaker makes here
                await self._news_for(news, min(RECHECK_S if self.matching else 0.1, remaining))

    async def _look(
        self, token: str | None, key: str, doc: BotDoc, now: float
    ) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """The bot's next decision as its games, tournaments and challenges are now (None:
        none), and the games it plays to wait on (by their last event)."""
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
                await self.settle(game_id)
                self._playing_also(key, drop=game_id)  # settled: no longer in play
                continue
            seat = league_game.seat_of(key)
            if doc.webhook and seat in league_game.webhooks:
                continue  # the referee calls its webhook with this game's turns
            if game.turn_status(seat) == "your_turn":
                step = await self._your_turn(game_id, league_game, key, game, seat, doc.token_hash)
                return step, in_play
            in_play[game_id] = game.last_event_id
        for tournament_id in entered if self.tournaments and token else []:
            assert self.tournaments is not None and token is not None
            step = {"status": "finished"}  # gone, or entered with an older token
            for entrant in (bot_entrant_token, legacy_entrant_token):
                try:
                    step = await self.tournaments.next_decision(entrant(tournament_id, token), 0)
                    break
                except Refusal as refusal:
                    if refusal.code == "tournament-not-found":
                        break  # gone: an older token finds it no more
                    if refusal.code != "forbidden":
                        raise
            if step["status"] == "your_turn":
                return step, in_play
            if step["status"] == "finished":
                await self.store.done_with(key, tournament_id)
        challenges = await self.open_challenges(key, now, inbox) if inbox else []
        if challenges:
            return {"status": "challenged", "challenges": challenges}, in_play
        return None, in_play

    def _looked_lately(self, key: str) -> list[str] | None:
        """The bot's games in play as ``_lookout`` found them less than ``RECHECK_S`` ago,
        with neither tournaments nor challenges (None: look again)."""
        looked = self._looked.get(key)
        if looked is not None and time.monotonic() - looked[0] < RECHECK_S:
            return looked[1]
        return None

    async def _lookout(self, key: str, now: float) -> tuple[list[str], list[str], list[str]]:
        """The bot's games in play, tournaments entered and open challenges
        (``LeagueStore.lookout``). A bot found with games in play and neither tournaments
        nor challenges is taken as found for ``RECHECK_S`` (the games themselves are looked
        at each time, from memory while their commits are heard): a decision then costs its
        commit alone. A game, challenge or tournament new to it meanwhile is found within
        ``RECHECK_S`` (through this replica, a game found finished or made for it: at
        once)."""
        lately = self._looked_lately(key)
        if lately is not None:
            return lately, [], []
        playing, entered, inbox = await self.store.lookout(key, now)
        if len(self._playing) >= BOTS_KEPT:
            self._playing.clear()
            self._looked.clear()
        self._found(key, playing, time.monotonic(), elsewhere=bool(entered or inbox))
        return playing, entered, inbox

    def _found(self, key: str, playing: list[str], at: float, elsewhere: bool = False) -> None:
        """The games the bot plays, as found at ``at``: taken as found for ``RECHECK_S`` from
        then while it has neither tournaments nor challenges (``elsewhere``) and plays a
        game, or plays none where this replica pairs (a game made for it comes through
        here: ``_made``)."""
        self._playing[key] = playing
        if not elsewhere and (playing or self.matching):
            self._looked[key] = (at, playing)
        else:
            self._looked.pop(key, None)

    def _changed(self, keys: list[str]) -> None:
        """The bots' games, tournaments or challenges changed through this replica: their
        next decision looks at them again, at once if it waits to be paired."""
        for key in keys:
            self._looked.pop(key, None)
            self._tell(key)

    def _tell(self, key: str) -> None:
        """Wake the bot's next decision if it waits to be paired (``_listen``)."""
        news = self._news.pop(key, None)
        if news is not None:
            news.set()

    def _made(self, keys: list[str], game_id: str, league_game: LeagueGame) -> None:
        """A league game made for the bots through this replica: each one's next decision
        finds it at once, without reading the league game back nor looking at everything
        again where its games were found lately (``_looked_lately``) and only changed
        through here since."""
        self._remember_league_game(game_id, league_game)
        for key in keys:
            self._playing_also(key, add=game_id)
            self._tell(key)

    def _playing_also(self, key: str, *, add: str = "", drop: str = "") -> None:
        """The bot's games in play as last found, with a game made (``add``) or settled
        (``drop``) through this replica since: found lately, they stay found by the rule of
        ``_found``; else the bot's next decision looks at everything again."""
        looked = self._looked.get(key)
        if looked is None:
            return
        playing = [game_id for game_id in looked[1] if game_id != drop]
        if add and add not in playing:
            playing.append(add)
        self._found(key, playing, looked[0])

    def _listen(self, key: str) -> asyncio.Event:
        """What ``_changed`` sets, from now on, when a game, challenge or tournament is made
        for the bot through this replica."""
        news = self._news.get(key)
        if news is None:
            if len(self._news) >= BOTS_KEPT:
                self._news.clear()
            news = self._news[key] = asyncio.Event()
        return news

    @staticmethod
    async def _news_for(news: asyncio.Event, seconds: float) -> None:
        """Until ``news`` (``_listen``) is set, at most ``seconds`` (news through another
        replica: the bot looks again after them)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(news.wait(), seconds)

    async def _remembered_turn(
        self, key: str, doc: BotDoc
    ) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        """The bot's turn in one of the games it was last found playing, where the process
        remembers the game and the commits heard prove it current: no read at all (a turn
        right after the bot's own decision, or after an opponent's heard commit). Else None,
        and the games to wait on (by their last event) where every one of them was proven
        current, in play and not its turn (None: look at everything, its games, tournaments
        and challenges, in Redis)."""
        waiting_on: dict[str, str] | None = {}
        for game_id in self._playing.get(key, ()):
            league_game = self._league_games.get(game_id)
            if league_game is None:
                waiting_on = None
                continue
            # shared as it is now (nearly always, right after a decision or a commit heard)
            game = self.games.shared_now(game_id)
            if game is None:
                known = await self.games.proven_form(game_id)
                if known is None:
                    waiting_on = None
                    continue
                try:
                    game = await self.games.current(game_id, known, reading=True)
                except Refusal:
                    waiting_on = None
                    continue
            seat = league_game.seat_of(key)
            if game.doc.status == "finished" or (doc.webhook and seat in league_game.webhooks):
                waiting_on = None
                continue
            if game.turn_status(seat) == "your_turn":
                step = await self._your_turn(game_id, league_game, key, game, seat, doc.token_hash)
                return step, None
            if waiting_on is not None:
                waiting_on[game_id] = game.last_event_id
        return None, waiting_on or None

    async def _your_turn(
        self,
        game_id: str,
        league_game: LeagueGame,
        key: str,
        game: LoadedGame,
        seat: int,
        digest: bytes,
    ) -> dict[str, Any]:
        """The bot's turn in one of its league games, as its next decision says it, with the
        seat's token as the game holds it (a record remembered from before the seat's rekey,
        through another replica, is read again), for the bot token whose hash is ``digest``
        alone (``LeagueGame.hands_out``)."""
        seat_token = league_game.seat_tokens[league_game.bots.index(key)]
        held = game.doc.seats[seat].token_hash
        stale = token_hash(seat_token) != held
        handed = await self._handing_out(game_id, league_game, key, digest, stale)
        if handed is not league_game:  # read again: its token as the store holds it
            seat_token = handed.seat_tokens[handed.bots.index(key)]
            stale = token_hash(seat_token) != held
        if stale:
            # the record was rekeyed before its game was made (a rotation between the two),
            # and the game answers to the token of before: it follows the record now
            await rekey_seat(self.games, game_id, seat, token_hash(seat_token))
        if seat in handed.webhooks:  # handed out: its bot dropped its webhook
            await self._off_webhook(game_id, seat)
        return {
            "status": "your_turn",
            "game_id": game_id,
            "seat_token": seat_token,
            "turn": game.turn(seat),
        }

    async def _handing_out(
        self, game_id: str, league_game: LeagueGame, key: str, digest: bytes, stale: bool
    ) -> LeagueGame:
        """The record that hands the bot's seat token to the bot token whose hash is
        ``digest``: read again where the one remembered is ``stale`` or made for another
        token (a rotation through another replica); refused if that is so as read, the
        token being one the bot had (``known_bot`` takes it a moment more elsewhere), whose
        holder must get none of the seat tokens made since."""
        if stale or not league_game.hands_out(key, digest):
            league_game = await self._league_game(game_id, again=True) or league_game
            if not league_game.hands_out(key, digest):
                raise Refusal("bot-token-refused", "this is not a bot's current token")
        return league_game

    async def _off_webhook(self, game_id: str, seat: int) -> None:
        """A webhook seat whose token is handed to its bot (which dropped its webhook) is the
        bot's to play from now on, as a rekeyed one is: a rotation made after a webhook came
        back left it as the webhook's, and the token handed out played on."""
        for _ in range(MAX_RETRIES):
            blob = await self.store.league_game(game_id)
            if blob is None:
                return
            record = decode(blob, LeagueGame)
            if seat not in record.webhooks:
                break
            hooked = [s for s in record.webhooks if s != seat]
            record = msgspec.structs.replace(record, webhooks=hooked)
            if await self.store.swap_league_game(game_id, blob, encode(record)):
                break
        else:
            raise busy("the league game")
        self._remember_league_game(game_id, record)

    async def _league_game(self, game_id: str, *, again: bool = False) -> LeagueGame | None:
        """A league game's record: written when the game is made and changed only when its
        bots' tokens are (``Rekeys``), so remembered in the process once read, and after the
        game is settled (a bot's last decision sent again is answered alike); ``again``:
        read from the store, not remembered (a seat's token no longer matches, or this
        process rekeys it)."""
        league_game = None if again else self._league_games.get(game_id)
        if league_game is None:
            blob = await self.store.league_game(game_id)
            if blob is None:
                return None
            league_game = decode(blob, LeagueGame)
            self._remember_league_game(game_id, league_game)
        return league_game

    def _remember_league_game(self, game_id: str, league_game: LeagueGame) -> None:
        if len(self._league_games) >= LEAGUE_GAMES_KEPT:
            self._league_games.clear()
        self._league_games[game_id] = league_game

    async def _game_now(self, game_id: str) -> LoadedGame:
        """The game as it is now: its remembered form where the commits heard prove it
        current (as ``SeatService.wait_turn`` answers), else as read, its commits heard from
        then on (so that the bot's next turns come from memory)."""
        await self.games.hear(game_id)
        known = await self.games.proven_form(game_id)
        if known is not None:
            with contextlib.suppress(Refusal):
                return await self.games.current(game_id, known, reading=True)
        return await self.games.current(game_id, reading=True)

    async def seat_token(self, token: str | None, known: tuple[str, BotDoc], game_id: str) -> str:
        """The token of the seat that the bot (``known``, as ``known_bot`` found it from
        ``token``) holds in one of its league games."""
        key = known[0]
        league_game = await self._league_game(game_id)
        if league_game is not None and key in league_game.bots and league_game.seat_tokens:
            digest = known[1].token_hash
            league_game = await self._handing_out(game_id, league_game, key, digest, False)
            return league_game.seat_tokens[league_game.bots.index(key)]
        # a tournament's table: its seats answer to the bot's entrant token
        game = await self.games.current(game_id)
        tournament = game.doc.tournament
        if tournament and token is not None and tournament in await self.store.entered(key):
            seats = {s.token_hash for s in game.doc.seats}
            legacy = legacy_entrant_token(tournament, token)  # entered before the derived one
            return legacy if token_hash(legacy) in seats else bot_entrant_token(tournament, token)
        raise Refusal("forbidden", "the bot holds no seat of a game of that id in play")
