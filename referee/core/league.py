"""The league, with no I/O: bot accounts, their lifetime ratings per ruleset (openskill's
Plackett-Luce, as tournaments rate), the arena's pairing, and challenges. The service reads
and writes these documents; everything decided about them is decided here.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import Any, TypeVar

import icu
import msgspec
from openskill.models import PlackettLuce

from .documents import HOUSE_BOT_SEAT, WEBHOOK_SEAT
from .refusals import Refusal

__all__ = [
    "DECLINE_REASONS",
    "OPEN_CHALLENGES_PER_ORGANIZER",
    "PROVISIONAL_GAMES",
    "REVOKED",
    "BotDoc",
    "ChallengeDoc",
    "LeagueGame",
    "LogEntry",
    "Rating",
    "Seek",
    "bot_entrant_token",
    "bot_key",
    "bot_token_hash",
    "check_reason",
    "decode",
    "encode",
    "is_bot_token",
    "is_organizer",
    "legacy_entrant_token",
    "looks_alike",
    "name_looks",
    "names_a_house_seat",
    "new_bot_token",
    "outcome",
    "pair",
    "rate_game",
    "rating_view",
    "seat_order",
]

#: a rating is provisional until its bot has played this many rated games of the ruleset
PROVISIONAL_GAMES = 10
#: open challenges one organizer's bots may hold to one bot: a bot's inbox shows its first 50
#: by expiry, which an organizer's throwaway bots, one challenge each, would fill
OPEN_CHALLENGES_PER_ORGANIZER = 5
#: why a challenged bot declines, as Lichess's bots say it (machine-readable)
DECLINE_REASONS = (
    "generic",
    "later",
    "too-strong",
    "too-weak",
    "rated-only",
    "casual-only",
    "ruleset",
    "deadline",
    "not-bots",
)
_TOKEN_PREFIX = "bot-"
_MODEL = PlackettLuce()

encode = msgspec.msgpack.Encoder().encode
_T = TypeVar("_T")


def decode(blob: bytes, kind: type[_T]) -> _T:
    return msgspec.msgpack.decode(blob, type=kind)


class BotDoc(msgspec.Struct):
    """A bot account: its name as registered, who created it (an organizer, or an address in
    open mode), its token's SHA-256 (empty once revoked), and whether it may play."""

    name: str
    description: str
    owner: str
    token_hash: bytes
    created: float
    status: str = "active"  # active | paused | banned
    contact: str | None = None
    webhook: str | None = None
    # the Standard Webhooks secret its webhook's calls are signed with (shown once)
    webhook_secret: str | None = None
    # (its league games in a row a deadline decided in, its last opponents and whether it
    # sat first are kept beside the document, written when each game is settled)
    # what its webhook said of itself at its last info call (name, author, version, ...)
    webhook_info: dict[str, str] | None = None


class Rating(msgspec.Struct, array_like=True):
    """A bot's lifetime rating in one ruleset, and its rated games' outcomes."""

    mu: float = 25.0
    sigma: float = 25.0 / 3
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def ordinal(self) -> float:
        """The conservative estimate, mu - 3 sigma: what the leaderboard orders by."""
        return self.mu - 3 * self.sigma


class Seek(msgspec.Struct, array_like=True):
    """A bot waiting in the arena: for a table of ``seats`` of ``ruleset``, since when, and
    when it last asked (a bot that stops asking leaves the pool)."""

    ruleset: str
    seats: int
    deadline_s: float
    since: float
    seen: float
    concurrent: int = 1


class LeagueGame(msgspec.Struct, array_like=True):
    """A game the league made (arena or challenge): its bots by seat (their keys), whether it
    is rated, and each seat's token (handed to its bot through ``/v1/me/next``)."""

    ruleset: str
    bots: list[str]
    rated: bool
    seat_tokens: list[str]
    created: float
    kind: str = "arena"  # arena | challenge | tournament | game (a seat of POST /v1/games)
    tournament: str = ""  # a rated tournament's table: its seats answer to entrant tokens
    # the seats the referee delivers to the bots' webhooks (not handed out by /v1/me/next)
    webhooks: list[int] = []
    # each bot's seat, where not every seat is a bot (empty: bots[i] sits in seat i)
    seats: list[int] = []
    # by bot, the hash of the bot token its seat's token was last made for, at a rotation
    # (``REVOKED`` at a revoke; empty: made with the game, for whoever holds the bot's token):
    # only that token is handed the seat's token
    keyed_for: list[bytes] = []
    # by bot, the version of its account that ``keyed_for`` follows: a rekey from an older
    # version (a rotation that lost a race, or its retry) changes nothing
    keyed_at: list[int] = []

    def seat_of(self, key: str) -> int:
        """The seat of bot ``key`` in this game."""
        index = self.bots.index(key)
        return self.seats[index] if self.seats else index

    def hands_out(self, key: str, digest: bytes) -> bool:
        """Whether the bot's seat token is for the bot token whose hash is ``digest``."""
        made_for = self.keyed_for[self.bots.index(key)] if self.keyed_for else b""
        return not made_for or made_for == digest


class LogEntry(msgspec.Struct, array_like=True):
    """One settled game, in the order ratings took it: what a rebuild replays."""

    game_id: str
    ruleset: str
    bots: list[str]
    places: list[int]
    rated: bool
    at: float


class ChallengeDoc(msgspec.Struct):
    """A challenge from one bot to another, open until it is answered or expires."""

    id: str
    challenger: str
    opponent: str
    ruleset: str
    options: dict[str, Any]
    rated: bool
    deadline_s: float
    created: float
    expires: float
    status: str = "open"  # open | accepted | declined | canceled (expired: shown as such)
    reason: str | None = None
    game_id: str | None = None

    def shown_status(self, now: float) -> str:
        return "expired" if self.status == "open" and now >= self.expires else self.status


def is_organizer(owner: str) -> bool:
    """Whether a bot's owner is an organizer (by its key: ``web.access.Organizers``), whose
    bots may not be rated against each other: they would move each other's ratings with no
    contest. An address (open mode, where anyone makes accounts, and a developer's bots run
    side by side on one host) is none."""
    return owner.startswith("k")


#: ICU's spoof checker (UTS #39), read only: its skeletons are what a name looks like
_SPOOF = icu.SpoofChecker()


def name_looks(name: str) -> list[str]:
    """What a name looks like: its UTS #39 skeletons as written and casefolded (ICU's). Two
    names that share one look alike ('Аda' with a Cyrillic А, 'Adɑ', 'ADA', 'Ada'), so at
    most one of them is a bot's, and no seat or entrant passes for that bot under another.
    Casefolded as well as not: 'Il' and 'll' look alike as written, 'ADA' and 'Аda' once
    casefolded."""
    return sorted({_SPOOF.getSkeleton(0, name), _SPOOF.getSkeleton(0, name.casefold())})


def looks_alike(first: str, second: str) -> bool:
    """Whether two names share a look (``name_looks``): one could pass for the other."""
    return not set(name_looks(first)).isdisjoint(name_looks(second))


def names_a_house_seat(name: str) -> bool:
    """Whether a name looks like one the referee gives a seat it names itself (a house
    bot's, "random (house bot)"; a webhook seat's): a bot account named so would pass for
    every such seat."""
    suffixes = name_looks(HOUSE_BOT_SEAT.strip())  # "x(house bot)" reads as "x (house bot)"
    looks = name_looks(name)
    return not set(looks).isdisjoint(name_looks(WEBHOOK_SEAT)) or any(
        look.endswith(suffix) for look in looks for suffix in suffixes
    )


def bot_key(name: str) -> str:
    """Where a bot is kept: its name casefolded, so that no two bots differ by case alone."""
    return name.casefold()


def new_bot_token() -> str:
    """A bot's bearer secret, shown once; ``bot-`` tells it from seat and entrant tokens."""
    return _TOKEN_PREFIX + secrets.token_urlsafe(32)


def is_bot_token(token: str | None) -> bool:
    return bool(token) and token.startswith(_TOKEN_PREFIX)  # type: ignore[union-attr]


#: what a league game's seat is keyed for once its bot's token is revoked: no token's hash
REVOKED = b"revoked"


def bot_token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def bot_entrant_token(tournament_id: str, token: str) -> str:
    """A bot's entrant token in a tournament: the tournament's id, then an HMAC of it under
    the bot's token. The league computes it from the token the bot sends; a seat token of
    its tables (``/v1/me/next`` hands it out, a webhook's copy is kept in Redis) does not
    give the bot's token away, as the token itself, joined, did."""
    mac = hmac.digest(token.encode(), b"entrant\0" + tournament_id.encode(), "sha256")
    return f"{tournament_id}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def legacy_entrant_token(tournament_id: str, token: str) -> str:
    """The entrant token of a bot that entered before ``bot_entrant_token``: the tournament's
    id and the bot's token joined (looked for only where the other is not found)."""
    return f"{tournament_id}.{token}"


def outcome(places: Sequence[int], seat: int) -> str:
    """A seat's result: a win is a first place alone, a draw a shared first place."""
    if places[seat] != 1:
        return "loss"
    return "draw" if list(places).count(1) > 1 else "win"


def rate_game(ratings: Sequence[Rating], places: Sequence[int]) -> list[Rating]:
    """The seats' ratings after one game they finished in ``places`` (1 = first)."""
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    rated = _MODEL.rate(teams, ranks=list(places))
    after = []
    for seat, (before, [new]) in enumerate(zip(ratings, rated, strict=True)):
        result = outcome(places, seat)
        after.append(
            Rating(
                new.mu,
                new.sigma,
                before.games + 1,
                before.wins + (result == "win"),
                before.draws + (result == "draw"),
                before.losses + (result == "loss"),
            )
        )
    return after


def rating_view(ruleset: str, rating: Rating) -> dict[str, Any]:
    return {
        "ruleset": ruleset,
        "mu": round(rating.mu, 4),
        "sigma": round(rating.sigma, 4),
        "conservative": round(rating.ordinal, 4),
        "provisional": rating.games < PROVISIONAL_GAMES,
        "games": rating.games,
        "wins": rating.wins,
        "draws": rating.draws,
        "losses": rating.losses,
    }


def pair(
    seekers: dict[str, Seek],
    ratings: dict[tuple[str, str], Rating],
    last_opponents: dict[str, list[str]],
    now: float,
    *,
    owners: dict[str, str] | None = None,
    base_gap: float = 2.0,
    widen_per_s: float = 2.0,
    rematch_penalty: float = 4.0,
) -> list[list[str]]:
    """Tables of waiting bots (by key), each of one ruleset, table size and deadline (a
    seek's deadline is part of what it asks for: a table took the longest, and an opponent
    seeking an hour a decision held a bot that asked for seconds for hours a game), and no
    two bots of one owner (``owners``: an organizer's own bots would move each other's
    ratings).

    The bots with the fewest rated games of the ruleset are seated first (games per bot stay
    even), then the longest waiting. Each takes the nearest in rating (mu) within its window,
    which widens the longer it has waited (as Lichess's pools do); a bot it just played costs
    ``rematch_penalty`` more."""
    groups: dict[tuple[str, int, float], list[str]] = {}
    for key, seek in seekers.items():
        groups.setdefault((seek.ruleset, seek.seats, seek.deadline_s), []).append(key)
    owner_of = (owners or {}).get
    tables = []
    for (ruleset, seats, _), keys in sorted(groups.items()):

        def rating(key: str, ruleset: str = ruleset) -> Rating:
            return ratings.get((ruleset, key)) or Rating()

        keys.sort(key=lambda k: (rating(k).games, seekers[k].since, k))
        free = list(keys)
        while len(free) >= seats:
            first = free.pop(0)
            window = base_gap + widen_per_s * max(0.0, now - seekers[first].since)
            mu = rating(first).mu
            costs = []
            for other in free:
                cost = abs(rating(other).mu - mu)
                if other in last_opponents.get(first, ()) or first in last_opponents.get(other, ()):
                    cost += rematch_penalty
                if cost <= window:
                    costs.append((cost, other))
            # the nearest, each of an owner not at the table yet; ties go to the bot with
            # fewer games, the longer waiting (``free``'s order)
            table, owner = [first], owner_of(first)
            seated = {owner} if owner else set()
            for _, other in sorted(costs, key=lambda found: found[0]):
                owner = owner_of(other)
                if len(table) < seats and not (owner and owner in seated):
                    table.append(other)
                    if owner:
                        seated.add(owner)
            if len(table) < seats:
                continue  # none near enough yet: the window widens while it waits
            for other in table[1:]:
                free.remove(other)
            tables.append(table)
    return tables


def seat_order(table: Sequence[str], last_first: dict[str, bool]) -> list[str]:
    """The table's seats: a bot that had the first seat last time does not have it again."""
    return sorted(table, key=lambda key: (last_first.get(key, False), table.index(key)))


def check_reason(reason: str) -> str:
    if reason not in DECLINE_REASONS:
        raise Refusal(
            "invalid-request",
            f"a decline's reason is one of {', '.join(DECLINE_REASONS)}",
            field="body.reason",
        )
    return reason
