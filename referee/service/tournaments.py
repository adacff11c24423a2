"""Tournaments, as use cases over the store: entrants register, the referee creates each
round's games when the round before is over, and ``next_decision`` hands an entrant its next
decision across all of its games. No process owns a tournament: whoever touches it advances
it, under a version check, and only the holder of a short lock creates a round's games.
What a tournament is and shows is decided in ``core.tournament``.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..core.documents import check_invite, check_name, invite_hash, new_token, token_hash
from ..core.league import bot_entrant_token, looks_alike
from ..core.pairing import TournamentSpec, next_round, rate, total_rounds
from ..core.refusals import Refusal, busy, not_found
from ..core.tournament import (
    EntrantDoc,
    TableDoc,
    TournamentDoc,
    decode_tournament,
    encode_tournament,
    entrant_of,
    new_tournament,
    round_games,
    summary,
    table_result,
    tournament_view,
)
from ..store import STORE_UNAVAILABLE, TournamentStore
from .games import MAX_RETRIES, GameService
from .seat_keys import rekey_seat

__all__ = ["TournamentService"]


def _tournament_of(token: str | None) -> tuple[str, str]:
    """The tournament an entrant token names (its id comes first), and the token; else
    ``forbidden``."""
    if not token or "." not in token:
        raise Refusal("forbidden", "send an entrant token as 'Authorization: Bearer'")
    return token.split(".", 1)[0], token


class TournamentService:
    """The tournaments of one Redis; their games are the ``GameService``'s."""

    def __init__(self, games: GameService, store: TournamentStore, max_entrants: int = 64) -> None:
        self.games = games
        self.store = store
        self.max_entrants = max_entrants
        #: told each round's games of a rated tournament before they are created (the
        #: league rates them: ``LeagueService.rate_tournament_games``)
        self.on_rated_round: Any = None
        #: whether a name is a bot account's (the league's ``is_bot_name``): an entrant that
        #: is no bot account may not take it, nor keep the bot out of a tournament with it
        self.bot_name: Callable[[str], Awaitable[bool]] | None = None
        #: the least deadline of a rated tournament's games (the league's, for its games)
        self.min_rated_deadline_s = 0.0

    async def load(self, tournament_id: str) -> tuple[str, TournamentDoc]:
        found = await self.store.load(tournament_id)
        if found is None:
            raise not_found("tournament", tournament_id)
        return found[0], decode_tournament(found[1])

    async def _load_for_entrant(self, tournament_id: str) -> tuple[str, TournamentDoc]:
        """``load``, for an entrant token naming ``tournament_id``: a game's seat token names
        its game there instead, and is told where it plays (it was answered "there is no
        tournament", the game's id for a tournament's)."""
        try:
            return await self.load(tournament_id)
        except Refusal as refusal:
            if refusal.code != "tournament-not-found":
                raise
            try:
                await self.games.load(tournament_id, reading=True)
            except Refusal:
                raise refusal from None
            raise Refusal(
                "forbidden",
                "a seat token plays its own game (GET /v1/games/{id}/turn); this route "
                "takes a bot's or a tournament entrant's token",
            ) from None

    async def _save(self, version: str, doc: TournamentDoc) -> bool:
        blob = encode_tournament(doc)
        return await self.store.save(doc.id, version, blob, self.games.ttl_of(doc.status))

    # -- creating and registering --------------------------------------------------------------

    async def create(
        self,
        spec: TournamentSpec,
        owner: str = "",
        invite_code: str | None = None,
        rated: bool = False,
    ) -> TournamentDoc:
        """A tournament open for registration (with ``invite_code``, to those who have it),
        counted among ``owner``'s live tournaments (refused past the owner's quota). A rated
        one deals dice no one knows: its games move bots' lifetime ratings, and whoever gave
        a seed would know every die of them (and every CHOPTA pool)."""
        if rated and spec.seed is not None:
            raise Refusal(
                "rated-tournament-seed",
                "a rated tournament's seed is the referee's: leave out seed, or rated",
                field="seed",
            )
        least = self.min_rated_deadline_s
        if rated and (spec.deadline_s <= 0 or spec.deadline_s < least):
            raise Refusal(
                "rated-tournament-deadline",
                "a rated tournament's games have a deadline (deadline_s above 0, and at "
                f"least {least:g} s, REFEREE_BOT_MIN_DEADLINE_S, as the league's games): a "
                "table whose bot stopped would never end, and its whole dice group stay "
                "unrated; a bot meets none shorter over a network",
                field="deadline_s",
            )
        max_entrants = self.max_entrants
        if max_entrants > 0 and spec.entrants > max_entrants:
            raise Refusal(
                "too-many-entrants",
                f"at most {max_entrants} entrants per tournament here",
                field="entrants",
            )
        doc = new_tournament(spec, time.time())
        doc.owner, doc.invite = owner, invite_hash(invite_code)
        doc.league_rated = rated
        limits = self.games.limits if owner else None
        if limits is not None:
            await limits.admit(owner, "tournaments", doc.id)
        await self._save("", doc)
        await self.store.index(doc.id, doc.created)
        return doc

    async def listed(self, before: float | None, limit: int) -> dict[str, Any]:
        """A page of tournaments, newest first, and the cursor of the next page (None at
        the end): what anyone may see of each, as in its own view's header."""
        found, following = await self.store.listed(before, limit)
        page = [summary(decode_tournament(blob), created) for _, created, _, blob in found]
        return {"tournaments": page, "next": following}

    async def register(
        self,
        tournament_id: str,
        name: str,
        invite_code: str | None = None,
        bot: tuple[str, str] | None = None,
        organizer: str = "",
    ) -> tuple[int, str]:
        """Enter a tournament (with its invite code, if it has one); the entrant's token is
        returned, only its hash kept. The last entrant to register starts it. ``bot``: a bot
        account enters (its key and its token), its entrant token derived from its bot token
        (``bot_entrant_token``), which the league hands back to it; a rated tournament takes
        bot accounts only, one of each ``organizer`` (the bot's, where it has one): its
        games would move the ratings of two bots of one organizer with no contest."""
        name_free = False  # found no bot account's name
        for _ in range(MAX_RETRIES):
            version, doc = await self.load(tournament_id)
            check_invite(doc.invite, invite_code)
            name = check_name(name, "name")
            if doc.status != "registering":
                raise Refusal("registration-closed", "the tournament has started")
            if doc.league_rated and bot is None:
                raise Refusal(
                    "bot-token-required",
                    "a rated tournament takes bot accounts: register with a bot token",
                )
            if bot is not None and any(e.bot == bot[0] for e in doc.entrants):
                raise Refusal("bot-already-entered", "the bot has entered this tournament")
            if (
                doc.league_rated
                and organizer
                and any(e.organizer == organizer for e in doc.entrants)
            ):
                raise Refusal(
                    "organizer-already-entered",
                    "a bot of this bot's organizer has entered this rated tournament: their "
                    "games would move two of one organizer's ratings with no contest",
                )
            if bot is None and self.bot_name is not None and not name_free:
                if await self.bot_name(name):
                    raise Refusal(
                        "bot-name-taken",
                        f"{name!r} is a bot account's name, or looks like one: only that bot "
                        "enters under it",
                        field="name",
                    )
                name_free = True  # read once, not on each retry
            if any(looks_alike(name, e.name) for e in doc.entrants):
                # standings, tables and pages show names: two that look alike would be told
                # apart by none (one could pass for the other)
                raise Refusal(
                    "entrant-name-taken",
                    f"an entrant of this tournament is named {name!r}, or by a name that "
                    "looks like it, already",
                    field="name",
                )
            token = new_token(doc.id) if bot is None else bot_entrant_token(doc.id, bot[1])
            entrant = EntrantDoc(name, token_hash(token), bot[0] if bot else "")
            entrant.organizer = organizer
            doc.entrants.append(entrant)
            if len(doc.entrants) == doc.spec.entrants:
                doc.status = "running"
            if await self._save(version, doc):
                if doc.status == "running":
                    await self.advance(doc.id)
                return len(doc.entrants) - 1, token
        raise busy("the tournament")

    async def rekey_entrant(self, tournament_id: str, bot: str, token: str, keyed: int) -> None:
        """The bot account's entry answers to ``token`` from now on, and so do its seats at
        the tables in play: its bot token was rotated (``token`` derived from the new one)
        or revoked (a token no one holds), so the entrant token derived from the old one,
        which every seat token it was handed is, plays none of its games any more.
        ``keyed``: the version of the bot's account that the token follows; an entry keyed
        from a later one is left as it is (a rotation's rekey that comes after a revoke's
        must not bring the rotated token back). A tournament over, or gone, is left too."""
        digest = token_hash(token)
        for _ in range(MAX_RETRIES):
            try:
                version, doc = await self.load(tournament_id)
            except Refusal:
                return
            entry = next((e for e in doc.entrants if e.bot == bot), None)
            if entry is None or doc.status == "finished":
                return
            if entry.keyed >= keyed:
                break  # keyed by a later change already: its seats are seen to below
            entry.token_hash, entry.keyed = digest, keyed
            if await self._save(version, doc):
                break
        else:
            raise busy("the tournament")
        await self.seat_entrants(tournament_id)

    async def seat_entrants(self, tournament_id: str) -> None:
        """Each seat at the open tables of the current round answers to its entrant's token
        as the tournament holds it now: after a rekey (its own, or one racing it: the last
        to look sets the newest), and after a round is made (made again after a write that
        failed, it finds the games its earlier attempt made, seated with the tokens of then)."""
        _, doc = await self.load(tournament_id)
        for table in doc.rounds[-1] if doc.rounds and doc.status == "running" else []:
            if table.result is not None or table.seat_tokens:
                continue
            for seat, entrant in enumerate(table.entrants):
                try:
                    await rekey_seat(
                        self.games, table.game_id, seat, doc.entrants[entrant].token_hash
                    )
                except Refusal as refusal:
                    if refusal.code != "game-not-found":  # not made yet, or expired
                        raise

    # -- advancing -----------------------------------------------------------------------------

    async def advance(self, tournament_id: str) -> TournamentDoc:
        """Record finished games; once a round is over, rate it and create the next one
        (exactly once: under a lock, and a round created again finds the same games).

        While another request holds the lock, this one returns the tournament as it is: the
        next round comes from the holder, and a waiting entrant looks again."""
        holder = secrets.token_hex(8)  # this call's own mark on the round lock
        for _ in range(MAX_RETRIES):
            version, doc = await self.load(tournament_id)
            if doc.status != "running":
                return doc
            changed = made = False
            current = doc.rounds[-1] if doc.rounds else []
            open_tables = [table for table in current if table.result is None]
            games = await asyncio.gather(*(self.games.current(t.game_id) for t in open_tables))
            for table, game in zip(open_tables, games, strict=True):
                table.result = table_result(len(doc.rounds) - 1, table, game)
                changed = changed or table.result is not None
            if all(table.result is not None for table in current):
                round_ = len(doc.rounds)
                results = [t.result for r in doc.rounds for t in r if t.result is not None]
                tables = next_round(doc.spec, results, round_)
                over = not tables or round_ >= total_rounds(doc.spec)
                if over or await self.store.lock_round(doc.id, round_, holder):
                    # the round is over: rated in the write that moves on, so exactly once
                    done = [t.result for t in current if t.result is not None]
                    doc.rated = rate(len(doc.entrants), done, doc.rated)
                    if current:  # not the start, before the first round
                        doc.ratings.append([round(s.rating, 3) for s in doc.rated])
                    if over:
                        doc.status = "finished"
                    else:
                        doc.rounds.append(await self.create_round(doc, round_, tables))
                        made = True
                    changed = True
                elif not changed or await self._save(version, doc):
                    return doc  # another request is creating the round
                else:
                    continue
            if not changed or await self._save(version, doc):
                if changed and doc.status == "finished" and doc.owner and self.games.limits:
                    await self.games.limits.release(doc.owner, "tournaments", doc.id)
                if made:  # its seats as the entrants' tokens are now (``seat_entrants``)
                    await self.seat_entrants(doc.id)
                return doc
        raise busy("the tournament")

    async def create_round(
        self, doc: TournamentDoc, round_: int, tables: list[list[int]]
    ) -> list[TableDoc]:
        """The round's games (``core.tournament.round_games``), created; the same games
        again if an earlier attempt created them."""
        needed = round_games(doc, round_, tables)
        if doc.league_rated and self.on_rated_round is not None:
            await self.on_rated_round(
                doc.spec.ruleset,
                doc.id,
                [
                    (game.game_id, [doc.entrants[e].bot for e in t])
                    for game, t in zip(needed, tables, strict=True)
                ],
            )
        await asyncio.gather(
            *(
                self.games.create(
                    doc.spec.ruleset,
                    doc.spec.options,
                    [{"name": name} for name in game.names],
                    doc.spec.deadline_s,
                    game.seed,
                    game_id=game.game_id,
                    token_hashes=game.token_hashes,
                    group=game.group,
                    tournament=doc.id,
                )
                for game in needed
            )
        )
        return [
            TableDoc(game.game_id, entrants, [], group=game.dice_group)
            for game, entrants in zip(needed, tables, strict=True)
        ]

    # -- what entrants and anyone see ----------------------------------------------------------

    async def get(self, tournament_id: str) -> dict[str, Any]:
        return tournament_view(await self.advance(tournament_id))

    async def check_entrant(self, token: str | None) -> None:
        """Refused unless ``token`` is an entrant's of its tournament (``next_decision``'s
        refusal, before a decision is made on its word)."""
        tournament_id, token = _tournament_of(token)
        _, doc = await self._load_for_entrant(tournament_id)
        entrant_of(doc, token)

    async def next_decision(self, token: str | None, wait_s: float) -> dict[str, Any]:
        """The entrant's next decision across all of its games (long-polled)."""
        tournament_id, token = _tournament_of(token)
        stop = time.monotonic() + wait_s
        pause = 0.05
        load = self._load_for_entrant
        while True:
            # only the entrant's own tables are read while it plays; the whole round is
            # looked at (advance) when none of them is in play
            _, doc = await load(tournament_id)
            load = self.load
            entrant = entrant_of(doc, token)
            found = await self._own_tables(doc, entrant, token)
            if isinstance(found, dict):
                return found
            if not found:
                rounds = len(doc.rounds)
                try:
                    doc = await self.advance(tournament_id)
                except Refusal as refusal:
                    if refusal.code != "busy":
                        raise  # busy: others are moving it on; look again
                if doc.status == "finished":
                    return {"status": "finished", "tournament_id": doc.id}
                if len(doc.rounds) > rounds:
                    continue  # a new round: its tables are the entrant's next games
            remaining = stop - time.monotonic()
            if remaining <= 0 or self.games.memory.stopping:  # stopping: no wait lasts
                return {"status": "waiting", "tournament_id": doc.id}
            if found:
                # the entrant waits on opponents: the next event of one of its games (a
                # decision, or a deadline the sweepers resolve) wakes it, not a timer
                with contextlib.suppress(*STORE_UNAVAILABLE):
                    await self.games.wait_for_commits(dict(found), min(remaining, 5.0))
                pause = 0.05
            else:
                # the entrant's tables are over: the round moves on when other tables
                # finish, so look again, less often the longer it takes
                await asyncio.sleep(min(pause, remaining))
                pause = min(pause * 2, 0.5)

    async def _own_tables(
        self, doc: TournamentDoc, entrant: int, token: str
    ) -> dict[str, Any] | list[tuple[str, str]]:
        """The entrant's turn if one of its games awaits it, else (game id, newest event id)
        of each of its games still in play in the current round."""
        in_play: list[tuple[str, str]] = []
        for table in doc.rounds[-1] if doc.rounds and doc.status == "running" else []:
            if table.result is not None or entrant not in table.entrants:
                continue
            seat = table.entrants.index(entrant)
            game = await self.games.current(table.game_id)
            turn = game.turn(seat)
            if turn["status"] == "your_turn":
                return {
                    "status": "your_turn",
                    "tournament_id": doc.id,
                    "game_id": table.game_id,
                    # the entrant's own token is its seats' token (older tables kept theirs)
                    "seat_token": table.seat_tokens[seat] if table.seat_tokens else token,
                    "turn": turn,
                }
            if game.doc.status != "finished":
                in_play.append((table.game_id, game.last_event_id))
        return in_play
