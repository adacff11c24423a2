"""The league's request and response bodies (bots, the arena, leaderboards, challenges)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from ..core.documents import NAME_MAX, NAME_PATTERN
from ..core.league import DECLINE_REASONS

__all__ = [
    "LEAGUE_MODELS",
    "ArenaSeek",
    "BotCreated",
    "BotProfile",
    "BotRating",
    "BotStatus",
    "BotToken",
    "BotWebhook",
    "Challenge",
    "ChangeBotStatus",
    "CreateBot",
    "CreateChallenge",
    "DeclineChallenge",
    "GameLink",
    "JoinArena",
    "Leaderboard",
    "LeaderboardRow",
    "SetWebhook",
    "WebhookCall",
    "WebhookStats",
]

_Name = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=NAME_MAX,
        description="RFC 8266's Nickname profile, as a seat's name (else 422 invalid-name)",
        # the contract states what a pattern can of check_name; the server refuses with its code
        extra_json_schema={"pattern": NAME_PATTERN},
    ),
]
_Deadline = Annotated[
    float, msgspec.Meta(gt=0, le=3600, description="seconds each decision may take")
]


_WebhookUrl = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=2048,
        description="where the referee POSTs the bot's turns, signed (docs/CONNECTING.md): http "
        "or https; an address that is not globally routable is refused (422 "
        "webhook-url-refused) unless the operator allows it (REFEREE_WEBHOOK_ALLOW)",
    ),
]
_Secret = Annotated[
    str,
    msgspec.Meta(description="the webhook's signing secret (Standard Webhooks), shown once"),
]


class CreateBot(msgspec.Struct, forbid_unknown_fields=True):
    """A bot account: its name (RFC 8266 Nickname, unique whatever its case), what it is,
    where its author is reached, and its webhook if the referee is to call it."""

    name: Annotated[
        _Name,
        msgspec.Meta(
            description="RFC 8266's Nickname profile, as a seat's name, without '/' and not "
            "'.' or '..': it is a segment of the bot's routes' paths (else 422 invalid-name)"
        ),
    ]
    description: Annotated[str, msgspec.Meta(max_length=500)] = ""
    contact: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    webhook_url: _WebhookUrl | None = None


class BotCreated(msgspec.Struct):
    name: str
    token: Annotated[str, msgspec.Meta(description="shown once: only its hash is kept")]
    webhook_secret: _Secret | None = None


class SetWebhook(msgspec.Struct, forbid_unknown_fields=True):
    """The bot's webhook (null: none, its games reach it through /v1/me/next)."""

    webhook_url: _WebhookUrl | None


class BotWebhook(msgspec.Struct):
    name: str
    webhook_url: str | None
    webhook_secret: _Secret | None = None


class WebhookCall(msgspec.Struct):
    """One turn call to the bot's webhook: when, the milliseconds until its answer (or its
    failure), what failed (null: the move was played), and whether it answered 410."""

    at: float
    ms: float
    error: str | None = None
    gone: bool = False


class WebhookStats(msgspec.Struct):
    """The bot's webhook (url null: removed, after a 410 or by its owner) and its calls."""

    url: str | None
    calls: int
    failures: int
    failures_in_a_row: Annotated[
        int, msgspec.Meta(description="the bot is paused at REFEREE_BOT_WEBHOOK_FAILURES_TO_PAUSE")
    ]
    latest_calls: list[WebhookCall]
    info: Annotated[
        dict[str, str] | None,
        msgspec.Meta(
            description="what the webhook said of itself at its last info call (askBotWebhook): "
            "name, author, version, description, color; null: never asked, or never answered"
        ),
    ] = None


class BotWebhookInfo(msgspec.Struct):
    """An info call's outcome: what the bot's webhook said of itself, or why the call failed
    (then ``info`` is null and the profile keeps what it said last)."""

    name: str
    info: dict[str, str] | None
    error: str | None = None


class BotToken(msgspec.Struct):
    name: str
    token: str


class ChangeBotStatus(msgspec.Struct, forbid_unknown_fields=True):
    status: Literal["active", "paused", "banned"]


class BotStatus(msgspec.Struct):
    name: str
    status: Literal["active", "paused", "banned"]


class BotRating(msgspec.Struct):
    """A bot's lifetime rating in one ruleset (openskill Plackett-Luce, from mu 25)."""

    ruleset: str
    mu: float
    sigma: float
    conservative: Annotated[float, msgspec.Meta(description="mu - 3 sigma: what ranks")]
    provisional: Annotated[bool, msgspec.Meta(description="fewer than 10 rated games")]
    games: int
    wins: int
    draws: int
    losses: int


class GameLink(msgspec.Struct):
    game_id: str
    href: str


class BotProfile(msgspec.Struct):
    name: str
    description: str
    status: Literal["active", "paused", "banned"]
    created: float
    in_arena: bool
    ratings: list[BotRating]
    recent_games: list[GameLink]
    playing: list[str]
    webhook: Annotated[
        WebhookStats | None,
        msgspec.Meta(
            description="the bot's webhook and its calls, for the bot itself (its token) or its "
            "organizer only: null for anyone else, or where it has none. A call is made per "
            "decision, a postal round's hidden steps included, and a refused move's reason "
            "quotes what its seat holds"
        ),
    ] = None


class LeaderboardRow(BotRating):
    rank: int = 0
    name: str = ""


class Leaderboard(msgspec.Struct):
    ruleset: str
    total: int
    bots: list[LeaderboardRow]
    next_offset: int | None


class JoinArena(msgspec.Struct, forbid_unknown_fields=True):
    """Seek arena games of one ruleset and table size until the bot leaves."""

    ruleset: str
    seats: Annotated[int, msgspec.Meta(ge=2, le=64, description="the table's size")] = 2
    deadline_s: _Deadline = 10.0
    concurrent_games: Annotated[int, msgspec.Meta(ge=1, le=64)] = 1


class ArenaSeek(msgspec.Struct):
    ruleset: str
    seats: int
    deadline_s: float
    concurrent_games: int
    since: float


class CreateChallenge(msgspec.Struct, forbid_unknown_fields=True):
    """A game offered to another bot: rated or casual, answered before ``expires_s``."""

    opponent: _Name
    ruleset: str
    options: dict[str, Any] = {}
    rated: bool = True
    deadline_s: _Deadline = 10.0
    expires_s: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 60.0


class DeclineChallenge(msgspec.Struct, forbid_unknown_fields=True):
    reason: Literal[DECLINE_REASONS] = "generic"  # type: ignore[valid-type]


class Challenge(msgspec.Struct):
    id: str
    challenger: str
    opponent: str
    ruleset: str
    options: dict[str, Any]
    rated: bool
    deadline_s: float
    expires: float
    status: Literal["open", "accepted", "declined", "canceled", "expired"]
    reason: str | None
    game_id: str | None


LEAGUE_MODELS = (
    CreateBot,
    BotCreated,
    BotToken,
    ChangeBotStatus,
    BotStatus,
    SetWebhook,
    BotWebhook,
    WebhookCall,
    WebhookStats,
    BotRating,
    GameLink,
    BotProfile,
    LeaderboardRow,
    Leaderboard,
    JoinArena,
    ArenaSeek,
    CreateChallenge,
    DeclineChallenge,
    Challenge,
)
