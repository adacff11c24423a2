"""Games sealed while their dice group plays on: a tournament round deals the same dice at
several tables, so until every one of them is over, no one but a game's own seats may look
at its play, record or seed."""

from __future__ import annotations

import asyncio

from ..core.documents import decode_doc
from ..core.game import LoadedGame
from ..core.refusals import Refusal
from .hearing import HeardGames

__all__ = ["SealedGames"]


class SealedGames(HeardGames):
    """``GameService``'s games as their dice groups seal them."""

    async def sealed(self, game: LoadedGame) -> bool:
        """Whether any game dealt the same dice (``GameDoc.group``), this one included, still
        runs: until none does, no one but the game's own seats may look at it."""
        doc = game.doc
        if not doc.group or doc.id in self.memory.released:
            return False
        if doc.status != "finished":
            return True
        for other in await asyncio.gather(*(self.store.load(g) for g in doc.group)):
            if other.blob is not None and decode_doc(other.blob).status != "finished":
                return True
        self.memory.released[doc.id] = True  # finished games never run again
        return False

    async def check_unsealed(self, game: LoadedGame) -> None:
        if await self.sealed(game):
            raise Refusal(
                "game-sealed",
                "this game's dice are dealt at other tables of its tournament round that are "
                "still playing: its play, record and seed are shown once they are all over",
            )
