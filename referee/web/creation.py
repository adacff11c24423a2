"""A game's creation as ``POST /v1/games`` makes it, once checked: shared by its handler and
the hot route (``hot``), which answers the same request without Litestar's machinery."""

from __future__ import annotations

from typing import Any

import msgspec

from ..core.refusals import Refusal
from ..service import Services
from ..service.delivery import new_game_id
from .models import GameCreated, SeatToken

__all__ = ["game_created"]


async def game_created(services: Services, data: Any, owner: str) -> GameCreated:
    """The game a checked ``CreateGame`` body (its ruleset's own Struct) asks for, created
    for ``owner``: its webhook seats registered first, under the id it is then created
    with, and its bot accounts' seats taken from their league (their tokens the league's:
    none shown here)."""
    seats = [msgspec.to_builtins(s) for s in data.seats]
    games = services.games
    # no seat named as a bot (a bot account's own seat may show its name as it looks)
    named = [(f"seats[{i}].name", s.name) for i, s in enumerate(data.seats) if s.name]
    own = {f"seats[{i}].name": s.account for i, s in enumerate(data.seats) if s.account}
    await services.league.refuse_bot_names(named, own)
    game_id, secrets = await services.webhooks.prepare(
        seats, data.deadline_s, games.idle_ttl_s + games.retention_s
    )
    accounts: list[str] = []
    if any(s.account is not None for s in data.seats):  # each dict has the key
        game_id = game_id or new_game_id()
        accounts = await services.league.seat_accounts(
            game_id, data.ruleset, seats, owner, data.deadline_s
        )
    hidden = {i for i, s in enumerate(data.seats) if s.account is not None}
    try:
        game, tokens = await games.create(
            data.ruleset,
            data.options,
            seats,
            data.deadline_s,
            owner=owner,
            invite_code=data.invite_code,
            game_id=game_id,
        )
    except Refusal:
        if accounts and game_id is not None:
            await services.league.seated(game_id, accounts, created=False)
        raise
    doc = game.doc
    if game_id is not None:
        services.webhooks.follow(game_id)
    return GameCreated(
        doc.id,
        # the document keeps a str of each: one of RulesetId, of GameStatus
        doc.ruleset,
        doc.status,  # type: ignore[arg-type]
        doc.commitment,
        [
            SeatToken(i, s.name, None, secrets[i])
            if i in secrets
            else SeatToken(i, s.name, None if i in hidden else tokens[i])
            for i, s in enumerate(doc.seats)
        ],
    )
