"""What the league store's scripts take and give per bot (``store.league``)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Seeker", "SettledSeat"]


class SettledSeat(NamedTuple):
    """What settling a game writes of one of its bots (``LeagueStore.settle``)."""

    key: str
    read: bytes  # its rating as read (b"" for none)
    new: bytes  # its new rating (b"" for an unrated game)
    score: float  # its place on the leaderboard
    point: bytes  # its rating history's new entry
    opponents: bytes  # the game's other bots (JSON)
    first: bool  # whether it sat first
    timed_out: bool  # whether a deadline decided for it


class Seeker(NamedTuple):
    """What the matchmaker reads of a bot in the pool (``LeagueStore.seekers``)."""

    account: bytes | None  # its ``BotDoc`` (None: gone)
    opponents: bytes  # its last game's other bots (JSON)
    first: bool  # whether it sat first in its last game
    playing: int  # its league games in play
    today: int  # its arena games today
