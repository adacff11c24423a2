"""A seat of a game in play made to answer to another token: its bot's token was rotated or
revoked (``TournamentService.rekey_entrant``, the league's ``Rekeys``)."""

from __future__ import annotations

from ..core.refusals import busy
from .games import MAX_RETRIES, GameService

__all__ = ["rekey_seat"]


async def rekey_seat(games: GameService, game_id: str, seat: int, digest: bytes) -> None:
    """The seat answers to the token whose hash is ``digest`` from now on, its old token to
    nothing; a finished game is left as it is."""
    for _ in range(MAX_RETRIES):
        game = await games.load(game_id)
        if game.doc.status == "finished" or game.doc.seats[seat].token_hash == digest:
            return
        game.rekey_seat(seat, digest)
        if await games.write(game):
            return
    raise busy()
