"""A game as it is stored: its document, the versions its commits write, and the seats'
tokens. Plain values (msgpack on the wire to Redis); nothing here reads or writes.

A game's document holds everything but its record (the decisions, kept beside it): the
ruleset and options, the seats with their token hashes, the committed seed, the rules'
state, each seat's deadline, and the hash chain over everything decided so far.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import itertools
import secrets
import unicodedata
from typing import Any

import msgspec
import precis_i18n

from ..games import get_ruleset
from .refusals import Refusal

__all__ = [
    "BLANK_CHARACTERS",
    "HOUSE_BOT_SEAT",
    "NAME_MAX",
    "NAME_PATTERN",
    "WEBHOOK_SEAT",
    "Deadline",
    "GameDoc",
    "SeatDoc",
    "check_invite",
    "check_name",
    "decode_doc",
    "decode_state",
    "encode",
    "first_deadline",
    "holder_of",
    "invite_hash",
    "new_token",
    "next_version",
    "token_hash",
    "version_number",
]


#: the names the referee gives the seats it names itself: a house bot's (its id before it)
#: and a webhook seat's; no bot account takes one (``core.league.names_a_house_seat``)
HOUSE_BOT_SEAT = " (house bot)"
WEBHOOK_SEAT = "webhook bot"


class SeatDoc(msgspec.Struct, array_like=True):
    """A seat: its player's name (None while open), the hash of its token, and the seed its
    player chose to mix into the dice, if any; or the reference bot the referee plays it
    with (``house``), which has no token."""

    name: str | None
    token_hash: bytes | None = None
    client_seed: str | None = None
    house: str | None = None


class Deadline(msgspec.Struct, array_like=True):
    """When a seat's decision ``seq`` times out (seconds since the epoch)."""

    seq: int
    at: float


class GameDoc(msgspec.Struct, array_like=True):
    """Everything about a game but its record; ``seed`` and token hashes never leave the store."""

    id: str
    ruleset: str
    options: dict[str, Any]
    deadline_s: float
    seats: list[SeatDoc]
    commitment: str
    seed: bytes
    status: str  # waiting | running | finished
    created: float
    state: bytes | None = None
    deadlines: list[Deadline | None] = []
    finished_at: float | None = None
    # the hash chain over every accepted decision and the events it caused (record.py); a
    # game created before chains were kept has none
    chain: bytes = b""
    # the other games dealt the same dice (a tournament's duplicate tables): until every one of
    # them is over, this game is sealed to everyone but its own seats, and its seed withheld
    group: list[str] = []
    # who created it, as its live games are counted (``service.limits``; "" for none)
    owner: str = ""
    # SHA-256 of the code an open seat's claimant must give ("" for none)
    invite: bytes = b""
    # the chain as it was when every decision so far was disclosed: what a running game's
    # record shows while some are hidden (showing whether the chain moved would tell that a
    # hidden decision was made)
    disclosed_chain: bytes = b""
    # the tournament whose table this game is ("" for none; tables created before it was
    # kept have none, and are told by ``group`` where they have one)
    tournament: str = ""
    # the seats for which a deadline took a decision, each once, in the order it first did:
    # what the league counts against a bot when the game is settled, without reading the
    # game's decisions back (games created before it was kept list none)
    timed_out: list[int] = []


decode_doc = msgspec.msgpack.Decoder(GameDoc).decode
encode = msgspec.msgpack.Encoder().encode


@functools.cache
def _state_decoder(ruleset_id: str) -> msgspec.msgpack.Decoder[Any]:
    return msgspec.msgpack.Decoder(get_ruleset(ruleset_id).State)


def decode_state(ruleset_id: str, blob: bytes) -> Any:
    """The rules' state of a game of ``ruleset_id``, as its document holds it."""
    return _state_decoder(ruleset_id).decode(blob)


def first_deadline(doc: GameDoc) -> float | None:
    """The earliest deadline of any seat, or None."""
    first = None
    for deadline in doc.deadlines:  # a loop: min() over a generator cost five times as much
        if deadline is not None and (first is None or deadline.at < first):
            first = deadline.at
    return first


# -- versions ----------------------------------------------------------------------------------

#: this process's mark in the versions it writes (``next_version``)
_WRITER = secrets.token_hex(4)
_writes = itertools.count()


def version_number(version: str) -> int:
    """How many commits a game has had ("" for none)."""
    return int(version.partition(".")[0] or 0)


def next_version(version: str) -> str:
    """The version a commit on ``version`` writes: its number, one more, and a mark no other
    write has. A decision chained on a commit still on its way expects that commit's
    version; had the commit lost its race, a version of the same number written by another
    would otherwise pass for it."""
    return f"{version_number(version) + 1}.{_WRITER}{next(_writes):x}"


# -- tokens ------------------------------------------------------------------------------------


def new_token(owner_id: str) -> str:
    """A bearer secret; it starts with its game's (or tournament's) id, so a token alone
    finds where it belongs."""
    return f"{owner_id}.{secrets.token_urlsafe(32)}"


@functools.lru_cache(maxsize=16384)
def token_hash(token: str) -> bytes:
    """Remembered for the seats playing now: every request of a bot hashes its token, and
    OpenSSL's SHA-256 cost a decision about 3 % of its time."""
    return hashlib.sha256(token.encode()).digest()


def invite_hash(code: str | None) -> bytes:
    """What is kept of an invite code (SHA-256; b"" for none)."""
    return hashlib.sha256(code.encode()).digest() if code else b""


def check_invite(stored: bytes, given: str | None) -> None:
    """An invite-only seat or registration: the code given must be the organizer's."""
    if stored and not (given and hmac.compare_digest(stored, invite_hash(given))):
        raise Refusal(
            "invite-code-refused",
            "this needs the organizer's invite code" if not given else "wrong invite code",
            field="invite_code",
        )


def holder_of(hashes: list[bytes | None], token: str) -> int:
    """The index whose token hash matches, or -1; every hash is compared in constant time."""
    digest = token_hash(token)
    found = -1
    for index, stored in enumerate(hashes):
        if stored is not None and hmac.compare_digest(stored, digest):
            found = index
    return found


# -- names -------------------------------------------------------------------------------------

#: RFC 8266's Nickname profile as enforced (case kept: the case mapping is for comparison only)
_NICKNAME = precis_i18n.get_profile("NicknameCasePreserved")
#: characters that reorder or hide text around them (bidi embeddings, overrides, isolates, marks)
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: control characters (C0, DEL, C1), line and paragraph separators, lone surrogates
_REFUSED_CATEGORIES = frozenset({"Cc", "Zl", "Zp", "Cs"})
#: characters that draw nothing, yet Unicode does not class them as ignorable, so that PRECIS
#: lets some of them through as symbols (U+2800, U+1D159); the Hangul fillers it refuses as old
#: jamo, and they are named here so that a change of its tables cannot let them in
BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\U0001d159")
_REFUSED_IN_NAMES = (
    r"\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    r"\u00ad\u200b-\u200d\u2060\ufeff\u115f\u1160\u3164\uffa0\u2800"
)
#: what ``check_name`` refuses that a pattern can state simply, for the contract (the same in
#: Python's and ECMA's syntax): none of those characters, and one that is not white space. A
#: name must also pass RFC 8266's Nickname profile, which no pattern states whole.
NAME_PATTERN = rf"^[^{_REFUSED_IN_NAMES}]*[^\s{_REFUSED_IN_NAMES}][^{_REFUSED_IN_NAMES}]*$"
#: the longest name kept, after normalisation (as the contract's limit on what is sent)
NAME_MAX = 64


@functools.lru_cache(maxsize=4096)  # names recur (a tournament's entrants, house bots)
def check_name(name: str, field: str) -> str:
    """A seat's, an entrant's name as it is stored and shown: shown to everyone, in logs,
    tables and pages, so it passes RFC 8266's Nickname profile (no control, format or
    invisible characters, no bidi overrides, white space collapsed, NFKC), draws something,
    and is not blank. The normalised name is returned; a refusal names ``field`` (a refusal
    is never cached: only names that pass are)."""
    for index, char in enumerate(name):
        if char in _BIDI or unicodedata.category(char) in _REFUSED_CATEGORIES:
            raise Refusal(
                "invalid-name",
                f"a name may not hold control, line-break or bidi characters "
                f"(U+{ord(char):04X} at {index})",
                field=field,
            )
        if char in BLANK_CHARACTERS:
            raise Refusal(
                "invalid-name",
                f"a name may not hold invisible characters (U+{ord(char):04X} at {index})",
                field=field,
            )
    try:
        normalized = _NICKNAME.enforce(name)
    except UnicodeEncodeError as exc:
        if exc.reason.endswith("/empty"):
            raise Refusal("invalid-name", "a name may not be blank", field=field) from None
        char = exc.object[exc.start]  # of the name as far as the profile had mapped it
        raise Refusal(
            "invalid-name",
            f"a name may not hold U+{ord(char):04X}: RFC 8266's Nickname profile refuses it "
            f"({exc.reason.removeprefix('DISALLOWED/')})",
            field=field,
        ) from None
    for index, char in enumerate(normalized):  # what normalisation made of the rest
        if char in BLANK_CHARACTERS:
            raise Refusal(
                "invalid-name",
                f"a name may not hold invisible characters (U+{ord(char):04X} once "
                f"normalised, at {index})",
                field=field,
            )
    if len(normalized) > NAME_MAX:
        raise Refusal(
            "invalid-name", f"a name is at most {NAME_MAX} characters once normalised", field=field
        )
    return normalized
