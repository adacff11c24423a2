"""The bot loop: long-poll for a turn, ask ``choose``, post the move, repeat until the end."""

from __future__ import annotations

import asyncio
import logging
import threading
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


def run_arena(
    url: str,
    bot_token: str,
    ruleset: str,
    choose: Callable[[Turn], Any],
    *,
    seats: int = 2,
    deadline_s: float = 10.0,
    wait: float = 5,
    stop: threading.Event | None = None,
    client: Client | None = None,
) -> int:
    """Play a bot account's arena games until ``stop`` is set (or Ctrl-C): seek games, play
    every turn with one request per decision, decline challenges (``later``), and leave the
    pool when stopped. Returns the decisions made."""
    own = client is None
    client = client or Client(url)
    stop = stop or threading.Event()
    made = 0
    client.join_arena(bot_token, ruleset, seats, deadline_s)
    try:
        step = client.next_decision(bot_token, wait=wait)
        while not stop.is_set():
            if step.status == "challenged":
                for challenge in step.challenges or []:
                    client.decline_challenge(bot_token, challenge["id"], "later")
            if step.status != "your_turn" or step.turn is None or step.game_id is None:
                step = client.next_decision(bot_token, wait=wait)
                continue
            move = choose(step.turn)
            try:
                step = client.decide_next(bot_token, step.game_id, step.turn.seq, move, wait)
                made += 1
            except RefereeError as error:
                _refused(error, step.turn, move)
                step = client.next_decision(bot_token, wait=wait)
    finally:
        try:
            client.leave_arena(bot_token)
        finally:
            if own:
                client.close()
    return made


def run_bot(
    url: str,
    token: str,
    choose: Callable[[Turn], Any],
    *,
    wait: float = 30,
    retries: int = 5,
    client: Client | None = None,
) -> Turn:
    """Play a seat until its game is over; returns the final turn (with the final view).

    One request per decision: each move is posted with ``wait``, and its answer holds the
    seat's next turn. ``choose`` gets the turn, which reads as fields or as a mapping (the
    reference bots take ``turn["legal_moves"]`` and ``turn["view"]``)."""
    own = client is None
    client = client or Client(url)
    game_id = game_of(token)
    try:
        turn: Turn | None = None
        while True:
            if turn is None or turn.status == "waiting":
                turn = client.turn(game_id, token, wait=wait)
            if turn.status == "finished":
                return turn
            if turn.status != "your_turn":
                continue
            move, decided = choose(turn), turn
            _late(turn)
            turn = None
            for attempt in range(retries):
                try:
                    turn = client.move(game_id, token, decided.seq, move, wait=wait).turn
                    break
                except RefereeError as error:
                    move = _refused(error, decided, move)
                    if move is None:
                        break
                except httpx.TransportError as error:  # same seq again: the referee dedupes
                    log.warning("posting seq %s failed (%s); retrying", decided.seq, error)
                    time.sleep(min(2.0, 0.1 * 2**attempt))
    finally:
        if own:
            client.close()


def _late(turn: Turn) -> None:
    if turn.deadline is not None and time.time() > turn.deadline:
        log.warning("seat %s took longer than its deadline at seq %s", turn.seat, turn.seq)


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
        turn: Turn | None = None
        while True:
            if turn is None or turn.status == "waiting":
                turn = await client.turn(game_id, token, wait=wait)
            if turn.status == "finished":
                return turn
            if turn.status != "your_turn":
                continue
            move, decided = choose(turn), turn
            if asyncio.iscoroutine(move):
                move = await move
            _late(turn)
            turn = None
            for attempt in range(retries):
                try:
                    turn = (await client.move(game_id, token, decided.seq, move, wait=wait)).turn
                    break
                except RefereeError as error:
                    move = _refused(error, decided, move)
                    if move is None:
                        break
                except httpx.TransportError as error:
                    log.warning("posting seq %s failed (%s); retrying", decided.seq, error)
                    await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
    finally:
        if own:
            await client.aclose()


async def run_entrant_async(
    url: str,
    entrant_token: str,
    choose: Callable[[Turn], Any] | Callable[[Turn], Awaitable[Any]],
    *,
    wait: float = 30,
    client: AsyncClient | None = None,
) -> None:
    """``run_entrant`` for asyncio; ``choose`` may be a coroutine function."""
    own = client is None
    client = client or AsyncClient(url)
    try:
        while True:
            step = await client.next_decision(entrant_token, wait=wait)
            if step.status == "finished":
                return
            if step.status != "your_turn" or step.turn is None:
                continue
            move = choose(step.turn)
            if asyncio.iscoroutine(move):
                move = await move
            try:
                await client.move(step.game_id, step.seat_token, step.turn.seq, move)
            except RefereeError as error:
                _refused(error, step.turn, move)  # the next step asks again
            except httpx.TransportError as error:
                log.warning("posting seq %s failed (%s); asking again", step.turn.seq, error)
    finally:
        if own:
            await client.aclose()
