"""Challenges: one bot challenges another to a game, which accepts or declines it."""

from __future__ import annotations

import contextlib
import secrets
import time
from typing import Any

from ...core.documents import check_name
from ...core.league import (
    OPEN_CHALLENGES_PER_ORGANIZER,
    BotDoc,
    ChallengeDoc,
    check_reason,
    decode,
    encode,
    is_organizer,
)
from ...core.refusals import Refusal, busy, from_rules
from ...games import GameError, check_seats, get_ruleset
from ..games import MAX_RETRIES
from .arena import Arena
from .base import _not_found

__all__ = ["Challenges"]


class Challenges(Arena):
    """A bot's challenges to another, and its answers to those it gets."""

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
        check_name(opponent, "opponent")  # a name no bot may have: 422 naming the field
        try:
            other, _, other_doc = await self.load_bot(opponent)
        except Refusal as refusal:
            refusal.field = "opponent"  # bot-not-found, of the body's opponent
            raise
        if other == key:
            raise Refusal("invalid-challenge", "a bot does not challenge itself", field="opponent")
        self.check_deadline(deadline_s)
        if rated and doc.owner == other_doc.owner and is_organizer(doc.owner):
            raise Refusal(
                "invalid-challenge",
                "two bots of one organizer play unrated: their games would move each other's "
                "ratings with no contest",
                field="rated",
            )
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
        open_one = await self.store.challenging(key, other, challenge.id, expires_s)
        if open_one is not None:
            # one open challenge to a bot at a time: a challenger's many would push everyone
            # else's out of the opponent's inbox (its first 50)
            raise Refusal(
                "challenge-pending",
                f"this bot's challenge {open_one} to {other_doc.name} is open: wait for its "
                "answer, or for it to expire",
                field="opponent",
            )
        if not await self.store.hold_challenge(
            other, doc.owner, challenge.id, challenge.expires, now, OPEN_CHALLENGES_PER_ORGANIZER
        ):
            await self.store.answered(key, other, challenge.id)
            raise Refusal(
                "challenge-pending",
                f"the bots of this bot's organizer hold {OPEN_CHALLENGES_PER_ORGANIZER} open "
                f"challenges to {other_doc.name}: wait for an answer, or for one to expire",
                field="opponent",
            )
        ttl = int(expires_s) + 86400
        try:
            await self.store.save_challenge(
                challenge.id, "", encode(challenge), ttl, other, challenge.expires
            )
        except BaseException:  # not made: its places are free again, where the store lets
            with contextlib.suppress(Exception):
                await self.store.release_challenge(other, doc.owner, challenge.id)
            with contextlib.suppress(Exception):
                await self.store.answered(key, other, challenge.id)
            raise
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
            version, challenge = await self._open_challenge(challenge_id, key, challenger=False)
            if accept:
                _, challenger = await self.bot_of_key(challenge.challenger)
                if challenger.status != "active":
                    raise Refusal("bot-not-active", "the challenger may not play now")
                # the answer is written first, naming the game it makes: of answers that
                # race, one alone is written and makes a game (each made its own before,
                # and the answers refused with 409 left theirs running)
                challenge.status, challenge.game_id = "accepted", secrets.token_hex(8)
            else:
                challenge.status, challenge.reason = "declined", reason
            ttl = 86400
            if not await self.store.save_challenge(
                challenge.id, version, encode(challenge), ttl, key, 0
            ):
                continue
            if accept:
                try:
                    await self._start_accepted(challenge, key, challenger)
                except Refusal:
                    await self._reopen(challenge, key)
                    raise
            await self._closed(challenge)
            return await self._shown(challenge)
        raise busy("the challenge")

    async def cancel(self, challenge_id: str, token: str | None) -> dict[str, Any]:
        """Withdraw an open challenge: its challenger's alone, before it is answered. It
        leaves the opponent's inbox, and the challenger may challenge that bot again."""
        key, _ = await self.bot_of(token, playing=False)
        for _ in range(MAX_RETRIES):
            version, challenge = await self._open_challenge(challenge_id, key, challenger=True)
            challenge.status = "canceled"
            if await self.store.save_challenge(
                challenge.id, version, encode(challenge), 86400, challenge.opponent, 0
            ):
                await self._closed(challenge)
                self._changed([challenge.opponent])
                return await self._shown(challenge)
        raise busy("the challenge")

    async def _open_challenge(
        self, challenge_id: str, key: str, *, challenger: bool
    ) -> tuple[str, ChallengeDoc]:
        """The challenge and its version, for its ``challenger`` (to withdraw it) or else its
        opponent (to answer it), the bot ``key``; 409 ``challenge-closed`` once not open."""
        version, challenge = await self._load_challenge(challenge_id)
        if challenger and challenge.challenger != key:
            raise Refusal("not-challenger", "only the challenging bot cancels a challenge")
        if not challenger and challenge.opponent != key:
            raise Refusal("not-challenged", "only the challenged bot answers a challenge")
        status = challenge.shown_status(time.time())
        if status != "open":
            raise Refusal("challenge-closed", f"the challenge is {status}")
        return version, challenge

    async def _closed(self, challenge: ChallengeDoc) -> None:
        """An answered or withdrawn challenge leaves the opponent's inbox, and frees the
        challenger's place for that opponent and its organizer's count."""
        await self.store.out_of_inbox(challenge.opponent, challenge.id)
        await self.store.answered(challenge.challenger, challenge.opponent, challenge.id)
        found = await self.store.load_bot(challenge.challenger)
        if found is not None:
            owner = decode(found[1], BotDoc).owner
            await self.store.release_challenge(challenge.opponent, owner, challenge.id)

    async def _start_accepted(self, challenge: ChallengeDoc, key: str, challenger: BotDoc) -> None:
        """The game an accepted challenge names (``challenger``'s account as just read)."""
        _, opponent = await self.bot_of_key(key)
        await self._start(
            challenge.ruleset,
            challenge.options,
            [challenge.challenger, key],
            [challenger.name, opponent.name],
            challenge.deadline_s,
            rated=challenge.rated,
            kind="challenge",
            game_id=challenge.game_id,
            docs={challenge.challenger: challenger, key: opponent},
        )

    async def _game_made(self, challenge: ChallengeDoc) -> bool:
        """Whether the game an accepted challenge names exists."""
        try:
            await self.games.load(challenge.game_id or "")
        except Refusal:
            return False
        return True

    async def _reopen(self, accepted: ChallengeDoc, key: str) -> None:
        """An accepted challenge whose game the rules refused to make is open again (if it
        is still the answer that named that game, and the game was not made after all), so
        that it may be answered anew. A store that fails meanwhile leaves it accepted with
        no game (docs/LEAGUE.md)."""
        with contextlib.suppress(Exception):
            version, challenge = await self._load_challenge(accepted.id)
            if challenge.status != "accepted" or challenge.game_id != accepted.game_id:
                return
            if await self._game_made(challenge):
                return
            challenge.status, challenge.game_id = "open", None
            await self.store.save_challenge(
                challenge.id, version, encode(challenge), 86400, key, challenge.expires
            )

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
