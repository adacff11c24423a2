"""Every problem ``code`` the referee answers with, and what it means: the contract's enum on
``Problem.code`` and the README's table come from here, and a test finds every code the
source raises in it. A ruleset from outside declares the codes of its own (its ``codes``):
they join the contract's enum and ``GET /v1/rulesets`` lists them with their status and
meaning (``RULESET_CODES``); one that is the referee's or another ruleset's stops the start."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..games import ORIGINS, RULESETS, RefusalCode, declared_codes
from ..plugins import load_plugins

__all__ = ["PROBLEM_CODES", "RULESET_CODES", "DuplicateCode", "ruleset_codes"]

#: code -> what it means, one line each; the HTTP status is ``problems.STATUS`` (else 422)
PROBLEM_CODES: dict[str, str] = {
    # the request itself
    "invalid-request": "the body, a parameter or a header is malformed or breaks the contract "
    "(field names it)",
    "body-too-large": "the body is larger than the referee accepts",
    "body-timeout": "the body did not arrive within REFEREE_BODY_TIMEOUT_S of the headers",
    "unsupported-media-type": "a body is sent as JSON (Content-Type: application/json), "
    "whatever the route; the connection is closed",
    "headers-too-large": "a header field, the number of fields or the headers in all are "
    "over the referee's limits (detail names it); the connection is closed",
    "uri-too-long": "the request target is longer than a header line may be",
    "not-found": "no such route",
    "method-not-allowed": "the route does not take this method",
    "not-a-proxy": "CONNECT: the referee opens no tunnels; the connection is closed",
    "too-many-pipelined": "more requests sent ahead of their answers on one connection than "
    "the referee queues (32): those before are answered, then the connection is closed",
    "conflict": "the request conflicts with the resource's state",
    "unprocessable": "the request is well formed but cannot be done",
    "move-or-moves": "a decision sends exactly one of 'move' and 'moves'",
    "invalid-name": "a name is blank, or holds what RFC 8266's Nickname profile refuses "
    "(control, format, invisible or bidi characters), or blank characters",
    "invalid-idempotency-key": "an Idempotency-Key is 1 to 255 printable ASCII characters",
    "idempotency-key-reused": "the Idempotency-Key was used with another request body",
    "idempotency-key-in-progress": "the first request with this Idempotency-Key is still "
    "being answered: try again after Retry-After",
    "unknown-ruleset": "no ruleset of that id (GET /v1/rulesets lists them)",
    "invalid-seat-count": "too few or too many seats for the ruleset",
    "invalid-option": "an option of the ruleset is unknown or out of range (field names it)",
    "invalid-tournament": "the tournament's fields do not fit each other (too many games, "
    "tables larger than the entrants)",
    "too-many-seats": "more seats than this referee allows per game",
    "house-bot-limit": "an unknown house bot, more than 3 in a game, or no seat but house bots",
    "too-many-entrants": "more entrants than this referee allows per tournament",
    "rated-tournament-seed": "a rated tournament takes no seed: its dice are the referee's",
    "rated-tournament-deadline": "a rated tournament's games have a deadline (deadline_s above "
    "0, and at least REFEREE_BOT_MIN_DEADLINE_S): a bot that stops would keep its dice group "
    "unrated",
    "webhook-url-refused": "a webhook's URL is malformed (http or https, a host, no user), "
    "or its host is an address that is not globally routable and not allowed here "
    "(REFEREE_WEBHOOK_ALLOW)",
    "webhook-seat-invalid": "a webhook seat is also a house bot, or its game has no deadline",
    "account-seat-invalid": "a bot account's seat is also a house bot or a webhook, the bot "
    "takes another seat of the game, or the bot has a webhook and the game no deadline",
    # who asks
    "unauthorized": "no token: send 'Authorization: Bearer <token>'",
    "forbidden": "the token holds no seat of this game (or no entry of this tournament)",
    "organizer-key-required": "this referee creates games and tournaments for organizers "
    "only: send an organizer key",
    "organizer-key-refused": "the key is not an organizer key of this referee",
    "invite-code-refused": "the invite code does not match",
    # what is asked for
    "game-not-found": "no game of that id (or it has expired)",
    "tournament-not-found": "no tournament of that id (or it has expired)",
    "ruleset-not-found": "no ruleset of that id",
    "game-not-over": "a game is replayed once it is over (its record shows what is disclosed)",
    "game-not-started": "the game waits for its open seats to be claimed",
    "game-sealed": "other games dealt the same dice play on: this one is shown when all are over",
    "no-open-seat": "every seat of the game is taken",
    "registration-closed": "the tournament has started: no more entrants",
    "entrant-name-taken": "an entrant of the tournament has that name, or one that looks like "
    "it, already (whatever its case or script: UTS #39)",
    # the league (docs/LEAGUE.md)
    "bot-not-found": "no bot of that name",
    "bot-name-taken": "a bot has that name, or one that looks like it, already (whatever its "
    "case or script: UTS #39); no seat or entrant that is not the bot takes it",
    "bot-token-refused": "the token is not a bot's current token (revoked or rotated?)",
    "bot-not-active": "the bot is paused or banned: it may not play now",
    "bot-has-no-webhook": "the bot has no webhook to call (set one with setBotWebhook)",
    "not-bot-owner": "only the bot itself (its token) or the organizer who created it may do this",
    "bot-quota-exceeded": "a bot's quota of arena games a day (field: games_per_day) is used "
    "up: wait Retry-After seconds",
    "challenge-not-found": "no challenge of that id (or it has expired)",
    "challenge-closed": "the challenge was answered already, or has expired",
    "challenge-pending": "the challenger has an open challenge to that bot: one at a time",
    "not-challenged": "only the challenged bot answers a challenge",
    "not-challenger": "only the challenging bot cancels a challenge",
    "invalid-challenge": "a bot challenges another bot, not itself",
    "bot-token-required": "a rated tournament takes bot accounts: register with a bot token",
    "bot-already-entered": "the bot has entered this tournament already",
    "organizer-already-entered": "a bot of this bot's organizer has entered this rated "
    "tournament: it takes one bot of each organizer",
    # a decision against the game
    "seq-mismatch": "the seq is not the seat's current one (current_seq says which)",
    "seq-already-decided": "that seq was decided with a different decision",
    "not-your-turn": "the seat has nothing to decide now",
    "game-over": "the game is over",
    "player-finished": "the seat finished its game with an earlier move of this decision",
    "no-moves": "a decision needs at least one move",
    "unknown-move": "the move's type is not a move of this ruleset",
    "illegal-move": "the move is not legal on this roll (legal_moves lists those that are)",
    "no-such-seat": "there is no seat of that number",
    "batch-complete": "every roll of this postal round is decided already",
    "dice-not-in-roll": "the move does not use the roll's dice, each exactly once",
    "fifth-die-must-match": "the fifth die must be one of the sheet's fifth-die values the roll "
    "shows (none shown: a free throw)",
    "free-throw-not-allowed": "a free throw needs three fifth-die values chosen and a roll that "
    "shows none of them",
    "card-already-used": "that special card was played already",
    "one-card-per-round": "the Suppen-Kasper round is its card's round: no other card joins it",
    "card-needs-fifth-die": "the card needs a legal fifth die and the roll shows none",
    "fifth-or-set-aside": "FdH names exactly one of fifth and set_aside",
    "dice-not-on-plate": "the leftovers plate does not hold those dice",
    "plate-too-small": "Suppen-Kasper needs 5 dice on the leftovers plate",
    "no-mark-to-remove": "-2 takes a mark off a marked fifth-die value only",
    "die-not-in-pool": "the die is not in the seat's pool",
    "die-not-in-area": "the die to take is not in that opponent's play area",
    "invalid-opponent": "swap with another seat of the game, not yourself",
    "swap-not-allowed": "a die takes only a lower die (a 1 takes a 6)",
    "one-move-per-decision": "a decision of this ruleset is exactly one move (as CHOPTA's)",
    # the referee's limits and health
    "rate-limited": "too many requests from this address or token: wait Retry-After seconds",
    "too-many-waiting": "this address holds too many open event streams and long-polls",
    "quota-exceeded": "the organizer holds too many live games or tournaments: finish some",
    "busy": "the game changed too often while the request was tried: try again",
    "redis-unavailable": "the referee's store does not answer: try again",
    "redis-unreachable": "the referee's store does not answer (GET /readyz)",
    "store-busy": "every connection of the referee to its store is in use: try again",
    "unavailable": "the referee cannot answer now: try again",
    "internal-error": "a bug of the referee: nothing was changed; please report it",
}


class DuplicateCode(ValueError):
    """A ruleset declares a refusal code the referee or another ruleset has: a client could not
    tell which it means, nor the referee its status."""


def ruleset_codes(rulesets: Iterable[Any]) -> dict[str, tuple[str, RefusalCode]]:
    """Every ruleset's own refusal codes: code -> (its ruleset's id, its meaning and status).
    A code that is the referee's, or that two rulesets declare, is a :class:`DuplicateCode`."""
    found: dict[str, tuple[str, RefusalCode]] = {}
    for ruleset in rulesets:
        origin = " ".join(ORIGINS.get(ruleset.id, ("the referee",)))
        for code, declared in declared_codes(ruleset).items():
            if code in PROBLEM_CODES:
                raise DuplicateCode(
                    f"ruleset {ruleset.id!r} ({origin}) declares the refusal code {code!r}, "
                    "which is the referee's own: raise it undeclared, or name its own otherwise"
                )
            if code in found:
                other = found[code][0]
                raise DuplicateCode(
                    f"rulesets {other!r} ({' '.join(ORIGINS.get(other, ('',)))}) and "
                    f"{ruleset.id!r} ({origin}) both declare the refusal code {code!r}: "
                    "one of them must be renamed (or uninstalled)"
                )
            found[code] = (ruleset.id, declared)
    return found


load_plugins()  # the registry whole before its codes are read
#: every registered ruleset's own refusal codes (none of the built-in rulesets declares any:
#: theirs are in ``PROBLEM_CODES``)
RULESET_CODES = ruleset_codes(RULESETS.values())
