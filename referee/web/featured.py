"""The home page's featured live game ("the TV"): of the newest running games, the one whose
bots the league rates highest, when any has all its bots rated; else the closest, the one
with the smallest gap between its leader and its runner-up in the public view's totals; on
a tie, the newest. The page asks again only when the game it shows ends, so that the TV does
not jump from game to game as the gaps change."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import msgspec

from ..core.league import LeagueGame, Rating, decode
from ..core.refusals import Refusal

if TYPE_CHECKING:
    from ..service import Services
    from ..service.league import LeagueService

__all__ = ["CANDIDATES", "Candidate", "featured", "leader_gap", "pick"]

#: how many of the newest running games are looked at
CANDIDATES = 24


class Candidate(msgspec.Struct, frozen=True):
    """A running game as the pick weighs it (``gap``/``rating``: None when it has none)."""

    id: str
    ruleset: str
    seats: list[str | None]
    gap: int | None
    rating: float | None


def _total(seat: dict[str, Any]) -> int | None:
    """A seat's running total as its public view shows it: its ``total``, or its score's
    (a ruleset that shows neither has no gap to compare)."""
    total = seat.get("total")
    if total is None and isinstance(seat.get("score"), dict):
        total = seat["score"].get("total")
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def leader_gap(view: dict[str, Any]) -> int | None:
    """The leader's lead over the runner-up in the public view's totals; None when the view
    shows no totals (sealed, or a ruleset without them)."""
    totals = [_total(seat) for seat in view.get("seats", ()) if isinstance(seat, dict)]
    if len(totals) < 2 or None in totals:
        return None
    first, second = sorted((t for t in totals if t is not None), reverse=True)[:2]
    return first - second


def pick(candidates: list[Candidate]) -> tuple[Candidate, str] | None:
    """The featured game and why (``"rated"`` or ``"closest"``), ``candidates`` newest first;
    None when there is none. A game with no gap to compare comes last (``"newest"``)."""
    if not candidates:
        return None
    rated = [c for c in candidates if c.rating is not None]
    if rated:  # max keeps the first (newest) of equals
        return max(rated, key=lambda c: c.rating or 0.0), "rated"
    closest = [c for c in candidates if c.gap is not None]
    if closest:
        return min(closest, key=lambda c: c.gap or 0), "closest"
    return candidates[0], "newest"


async def _rating(league: LeagueService, game_id: str) -> float | None:
    """The mean conservative rating of the game's bots, if the league made it and rates every
    one of them in its ruleset; else None."""
    blob = await league.store.league_game(game_id)
    if blob is None:
        return None
    game = decode(blob, LeagueGame)
    blobs = await league.store.ratings(game.ruleset, game.bots)
    if not blobs or None in blobs:
        return None
    ratings = [decode(b, Rating) for b in blobs if b is not None]
    return sum(r.ordinal for r in ratings) / len(ratings)


async def featured(services: Services) -> dict[str, Any]:
    """``{"id", "ruleset", "seats", "why", "gap", "rating"}`` of the featured game, or
    ``{"id": None}`` when no game runs."""
    listed = await services.games.listed(None, 100)
    running = [g for g in listed["games"] if g["status"] == "running"][:CANDIDATES]

    async def weighed(summary: dict[str, Any]) -> Candidate | None:
        try:
            view = msgspec.json.decode(
                msgspec.json.encode(await services.games.view(summary["id"]))
            )
            rating = await _rating(services.league, summary["id"])
        except Refusal:  # (gone meanwhile: it is not featured)
            return None
        gap = leader_gap(view) if view.get("status") == "running" else None
        seats = summary["seats"]
        return Candidate(summary["id"], summary["ruleset"], seats, gap, rating)

    found = await asyncio.gather(*(weighed(g) for g in running))
    chosen = pick([c for c in found if c is not None])
    if chosen is None:
        return {"id": None}
    game, why = chosen
    return {**msgspec.to_builtins(game), "why": why}
