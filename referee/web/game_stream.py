"""A game's public events as Server-Sent Events (``streamEvents``): resumable with
``Last-Event-ID``, a keep-alive comment when nothing was told for a while, hidden steps never
told, and an end once the game is over (or the process stops: the client reconnects)."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from litestar import Request
from litestar.datastructures import State
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from ..core.game import HIDDEN_STEP
from ..core.refusals import Refusal
from ..service import AVAILABILITY, STORE_UNAVAILABLE, event_order
from .access import client_address
from .params import services_of, trusted_of
from .problems import check_id

__all__ = ["KEEP_ALIVE_S", "RETRY_MS", "game_events"]

_EVENT = msgspec.json.Decoder()

#: seconds without an event before a stream sends a keep-alive comment
KEEP_ALIVE_S = 15.0
#: an event id: a Redis stream id, milliseconds and a sequence, each a 64-bit number
_STREAM_ID = re.compile(r"([0-9]{1,20})(?:-([0-9]{1,20}))?")
#: what a stream ended by a stopping process tells an EventSource: reconnect in 1 s
RETRY_MS = 1000
_HIDDEN = HIDDEN_STEP["type"]


def _event_id(value: str) -> str:
    """A ``Last-Event-ID``, checked: an id the referee sent (400 for anything else, rather
    than the store refusing it mid-stream)."""
    matched = _STREAM_ID.fullmatch(value)
    if matched is None or any(int(part) >= 2**64 for part in matched.groups() if part):
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise Refusal(
            "invalid-request",
            f"Last-Event-ID is not an event id of this stream ('ms-seq'): {shown!r}",
            field="Last-Event-ID",
        )
    return value


async def game_events(
    request: Request[Any, Any, Any], state: State, game_id: str
) -> ServerSentEvent:
    """The stream of ``game_id``'s events after the request's ``Last-Event-ID``."""
    check_id(game_id)
    last_id = _event_id(request.headers.get("last-event-id") or "0")
    games = services_of(state).games
    game = await games.current(game_id)  # 404 for an unknown game (and read just now)
    await games.check_unsealed(game)  # 409 while its dice are dealt elsewhere
    if event_order(last_id)[0] > event_order(game.last_event_id)[0]:
        # after the newest event's millisecond: no id the stream sent, and the stream would
        # tell nothing until its events caught up with it. Within it, taken: a hidden step's
        # event follows the newest in its millisecond (``store.games``), so an answer that
        # looked further would tell anyone who asked how many steps a seat took unseen; the
        # next told event begins a later millisecond, after any id of this one
        raise Refusal(
            "invalid-request",
            f"Last-Event-ID {last_id!r} is after this game's newest event's millisecond: not "
            "an id its stream sent",
            field="Last-Event-ID",
        )
    finished = game.doc.status == "finished"
    # a grouped game's stored game_over withheld its seed: told now, the group being over
    game_over = msgspec.json.encode(game.game_over_event(sealed=False)).decode() if finished else ""
    limits = services_of(state).limits
    address = client_address(request.scope, trusted_of(request))
    await limits.start_waiting(address)  # 429 past the address's cap

    async def stream() -> AsyncIterator[ServerSentEventMessage]:
        try:
            async for message in told():
                yield message
        except STORE_UNAVAILABLE as exc:
            # the answer has begun: no problem can be sent now, only an end, after which
            # an EventSource reconnects with Last-Event-ID (no traceback; the log says
            # so once per outage, as for the requests refused)
            AVAILABILITY.refused(exc)
        finally:
            limits.stop_waiting(address)

    async def told() -> AsyncIterator[ServerSentEventMessage]:
        cursor = last_id
        # the keep-alive is due KEEP_ALIVE_S after the last message sent, whatever was
        # read meanwhile: a hidden step, never told, must not move it either
        quiet_until = time.monotonic() + KEEP_ALIVE_S
        while True:
            # a finished game has nothing more to wait for: read what is left, if its
            # stream has not expired yet (REFEREE_EVENTS_RETENTION_S), then end
            wait_s = None if finished else max(0.0, quiet_until - time.monotonic())
            entries = await games.events_after(game_id, cursor, wait_s)
            if not entries and finished:
                yield ServerSentEventMessage(data=game_over, event="game_over", id=cursor)
                return
            if not entries and games.memory.stopping:  # SIGTERM: reconnect elsewhere
                yield ServerSentEventMessage(comment="restarting", data=None, retry=RETRY_MS)
                return
            if not entries:  # a comment alone: EventSource delivers no message for it
                yield ServerSentEventMessage(comment="keep-alive", data=None)
                quiet_until = time.monotonic() + KEEP_ALIVE_S
                continue
            for cursor, data in entries:
                kind = _EVENT.decode(data).get("type", "event")
                if kind == _HIDDEN:  # never told: not even that it happened
                    continue
                if kind == "game_over":
                    told = game_over if game.doc.group else data
                    yield ServerSentEventMessage(data=told, event=kind, id=cursor)
                    return
                yield ServerSentEventMessage(data=data, event=kind, id=cursor)
                quiet_until = time.monotonic() + KEEP_ALIVE_S

    return ServerSentEvent(stream())
