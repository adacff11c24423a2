"""Pieces every ruleset shares: die type, option parsing, ranking, the engine protocol."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, ClassVar, Protocol, TypeVar

import msgspec

from .errors import InvalidOption

__all__ = ["Die", "Ruleset", "Scorer", "check_seats", "parse_options", "places", "plain"]

Die = Annotated[int, msgspec.Meta(ge=1, le=6, description="a die face, 1..6")]

_UNKNOWN = re.compile(r"unknown field `(?P<name>[^`]*)`")
_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")


_Options = TypeVar("_Options")


def parse_options(options_type: type[_Options], raw: Any, *, field: str = "options") -> _Options:
    """Convert raw options (a dict or None) into the ruleset's frozen Options struct.

    Refuses unknown options and out-of-range values with an ``invalid-option`` error that
    names the option.
    """
    if raw is None:
        raw = {}
    if isinstance(raw, options_type):
        return raw
    try:
        return msgspec.convert(raw, options_type)
    except msgspec.ValidationError as exc:
        message = str(exc)
        match = _PATH.search(message)
        path = field + (match.group("path") if match else "")
        unknown = _UNKNOWN.search(message)
        if unknown:
            path += "." + unknown.group("name")
        raise InvalidOption("invalid-option", f"{path}: {message}", field=path) from None


def check_seats(seats: int, low: int, high: int, ruleset: str) -> None:
    """Refuse a seat count the ruleset does not allow."""
    if not isinstance(seats, int) or not low <= seats <= high:
        raise InvalidOption(
            "invalid-seat-count",
            f"{ruleset} is played by {low}..{high} seats, not {seats}",
            field="seats",
        )


def plain(value: Any) -> Any:
    """Moves and figures as JSON-shaped builtins (lists, not tuples), as a record stores them."""
    return msgspec.json.decode(msgspec.json.encode(value))


def places(totals: Sequence[int]) -> list[int]:
    """Competition ranking (1, 1, 3): highest total first, equal totals share the place."""
    return [1 + sum(1 for other in totals if other > mine) for mine in totals]


class Scorer(msgspec.Struct, frozen=True):
    """A ruleset's score calculator, served as ``POST /v1/rulesets/{id}/score`` (operation
    ``score<Ruleset>``): the body it reads (a Struct, decoded strictly), the answer it gives (a
    Struct), the pure function from one to the other, and the operation's summary and
    description in the contract. A ruleset declares one as its ``scorer`` attribute
    (optional: a ruleset without one has no such route)."""

    request: type
    response: type
    score: Callable[[Any], Any]
    summary: str
    description: str


class Ruleset(Protocol):
    """What the service needs of a ruleset; every method is pure (no I/O).

    ``decide`` and ``timeout`` change the state in place, but only after the whole decision
    was found legal: a refused decision changes nothing. ``view(state)`` (the board every seat
    sees) and ``view(state, seat)`` (the board with ``you``: ``seat_view(state, seat)``) return
    the ruleset's Structs, which the referee encodes as they are; for a ruleset with views of
    its own (``views``) the service builds the board once for every seat that reads the same
    form of a game and adds each seat's ``you``. ``disclosed(state, seat)``
    counts the seat's decisions (from its first) that anyone may see now; the others stay
    hidden from everyone but the seat. ``public_seq(state, seat)`` is what others may count
    of the seat's decisions before a reveal (its deadline and its public ``decision`` events
    follow it): nothing another party sees may depend on a hidden decision's content, so a
    ruleset whose decisions are hidden counts only what every choice would have made public
    alike (CHOICE: postal rounds closed). A decision that discloses hidden decisions returns
    at least one event. ``must_decide(state, seat)`` is ``seat in
    to_decide(state)``, asked of every turn shown.
    """

    id: ClassVar[str]
    title: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    Options: ClassVar[type]
    Move: ClassVar[Any]
    State: ClassVar[type]

    def options(self, raw: Any) -> Any: ...
    def create(self, options: Any, seats: int, key: bytes) -> Any: ...
    def to_decide(self, state: Any) -> list[int]: ...
    def must_decide(self, state: Any, seat: int) -> bool: ...
    def seq(self, state: Any, seat: int) -> int: ...
    def public_seq(self, state: Any, seat: int) -> int: ...
    def legal_moves(self, state: Any, seat: int) -> list[Any]: ...
    def normalize(self, move: Any) -> Any: ...
    def decide(self, state: Any, seat: int, moves: Sequence[Any]) -> list[dict[str, Any]]: ...
    def timeout(self, state: Any, seat: int) -> list[dict[str, Any]]: ...
    def finished(self, state: Any) -> bool: ...
    def disclosed(self, state: Any, seat: int) -> int: ...
    def view(self, state: Any, seat: int | None = None) -> Any: ...
    def seat_view(self, state: Any, seat: int) -> Any: ...
    def scores(self, state: Any) -> list[Any]: ...
    def totals(self, state: Any) -> list[int]: ...
    def ranking(self, state: Any) -> list[int]: ...
    def dice_log(self, state: Any) -> list[Any]: ...
    def default_moves(self, state: Any, seat: int) -> list[Any]: ...
