"""The bot loop: long-poll for a turn, ask ``choose``, post the move, repeat until the end."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from ._client import AsyncClient, Client, RefereeError
from ._models import Turn

log = logging.getLogger("referee_client")

#: Refusals that mean "the game moved on": fetch the turn again rather than retry.
STALE = {"seq-already-decided", "seq-mismatch", "not-your-turn", "game-over"}


def game_of(token: str) -> str:
    """A seat token starts with its game's id."""
    return token.split(".", 1)[0]


def _refused(error: RefereeError, turn: Turn, move: Any) -> Any:
    """Log a refusal clearly; answer the move to try instead (None: fetch the turn again)."""
    if error.code in STALE:
        log.info("seat %s seq %s: %s; fetching the turn again", turn.seat, turn.seq, error.code)
        return None
    log.error(
        "the referee refused seat %s's move %r at seq %s: %s (%s%s)",
        turn.seat,
        move,
        turn.seq,
        error.problem.detail,
        error.code,
        f", field {error.problem.field}" if error.problem.field else "",
    )
    if turn.legal_moves and move != turn.legal_moves[0]:
        return turn.legal_moves[0]  # play the default rather than lose the turn
    return None


def run_entrant(
    url: str,
    entrant_token: str,
    choose: Callable[[Turn], Any],
    *,
    wait: float = 30,
    client: Client | None = None,
) -> None:
    """Play every decision of a tournament entrant, across all its games, until it is over."""
    own = client is None
    client = client or Client(url)
    try:
        while True:
            step = client.next_decision(entrant_token, wait=wait)
            if step.status == "finished":
                return
            if step.status != "your_turn" or step.turn is None:
                continue
            move = choose(step.turn)
            try:
                client.move(step.game_id, step.seat_token, step.turn.seq, move)
            except RefereeError as error:
                _refused(error, step.turn, move)  # the next step asks again
            except httpx.TransportError as error:
                log.warning("posting seq %s failed (%s); asking again", step.turn.seq, error)
    finally:
        if own:
            client.close()


def run_bot(
    url: str,
    token: str,
    choose: Callable[[Turn], Any],
    *,
    wait: float = 30,
    retries: int = 5,
    client: Client | None = None,
) -> Turn:
    """Play a seat until its game is over; returns the final turn (with the final view)."""
    own = client is None
    client = client or Client(url)
    game_id = game_of(token)
    try:
        while True:
            turn = client.turn(game_id, token, wait=wait)
            if turn.status == "finished":
                return turn
            if turn.status != "your_turn":
                continue
            move = choose(turn)
            if turn.deadline is not None and time.time() > turn.deadline:
                log.warning("seat %s took longer than its deadline at seq %s", turn.seat, turn.seq)
            for attempt in range(retries):
                try:
                    client.move(game_id, token, turn.seq, move)
                    break
                except RefereeError as error:
                    move = _refused(error, turn, move)
                    if move is None:
                        break
                except httpx.TransportError as error:  # same seq again: the referee dedupes
                    log.warning("posting seq %s failed (%s); retrying", turn.seq, error)
                    time.sleep(min(2.0, 0.1 * 2**attempt))
    finally:
        if own:
            client.close()


async def run_bot_async(
    url: str,
    token: str,
    choose: Callable[[Turn], Any] | Callable[[Turn], Awaitable[Any]],
    *,
    wait: float = 30,
    retries: int = 5,
    client: AsyncClient | None = None,
) -> Turn:
    """``run_bot`` for asyncio; ``choose`` may be a coroutine function."""
    own = client is None
    client = client or AsyncClient(url)
    game_id = game_of(token)
    try:
        while True:
            turn = await client.turn(game_id, token, wait=wait)
            if turn.status == "finished":
                return turn
            if turn.status != "your_turn":
                continue
            move = choose(turn)
            if asyncio.iscoroutine(move):
                move = await move
            for attempt in range(retries):
                try:
                    await client.move(game_id, token, turn.seq, move)
                    break
                except RefereeError as error:
                    move = _refused(error, turn, move)
                    if move is None:
                        break
                except httpx.TransportError as error:
                    log.warning("posting seq %s failed (%s); retrying", turn.seq, error)
                    await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
    finally:
        if own:
            await client.aclose()
