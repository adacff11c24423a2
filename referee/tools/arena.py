"""A house bot that lives in the arena with a bot account: it seeks games (``POST
/v1/arena``), plays every turn ``GET /v1/me/next`` hands it (one request per decision: each
move's answer is followed by the next ask), declines challenges it is not told to take, and
leaves the pool (``DELETE /v1/arena``) when it is stopped, Ctrl-C included."""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

import httpx

from ..bots import get_bot
from .local_tournament import _patient, python_client

__all__ = ["arena_main", "play_arena"]


def play_arena(
    url: str,
    token: str,
    ruleset: str,
    bot_name: str,
    *,
    seed: int = 0,
    seats: int = 2,
    deadline_s: float = 10.0,
    stop: threading.Event | None = None,
    on_decision: Callable[[], None] | None = None,
) -> int:
    """Play arena games until ``stop`` is set; the number of decisions made."""
    stop = stop or threading.Event()
    headers = {"Authorization": f"Bearer {token}"}
    bots: dict[str, Callable[[dict[str, Any]], Any]] = {}
    decisions = 0
    with httpx.Client(base_url=url, timeout=30, headers=headers) as http:
        seek = {"ruleset": ruleset, "seats": seats, "deadline_s": deadline_s}
        joined = _patient(lambda: http.post("/v1/arena", json=seek))
        if joined.status_code != 200:
            raise SystemExit(f"the referee refused the seek: {joined.text}")
        try:
            while not stop.is_set():
                asked = _patient(lambda: http.get("/v1/me/next", params={"wait": 1}))
                if asked.status_code != 200:
                    raise SystemExit(f"the referee refused the bot token: {asked.text}")
                step = asked.json()
                if step["status"] == "challenged":
                    for challenge in step["challenges"]:
                        http.post(
                            f"/v1/challenges/{challenge['id']}/decline",
                            json={"reason": "later"},
                        )
                    continue
                if step["status"] != "your_turn":
                    continue
                game_id, turn = step["game_id"], step["turn"]
                if game_id not in bots:
                    bots[game_id] = get_bot(ruleset, bot_name, seed + len(bots))
                move = bots[game_id]({"legal_moves": turn["legal_moves"], "view": turn["view"]})
                post = functools.partial(
                    http.post,
                    f"/v1/games/{game_id}/moves",
                    headers={"Authorization": f"Bearer {step['seat_token']}"},
                    json={"seq": turn["seq"], "move": move},
                )
                reply = _patient(post)
                if reply.status_code == 200:
                    decisions += 1
                    if on_decision is not None:
                        on_decision()
        finally:
            # leave the pool: games in play go on, and time out if nobody plays them
            with contextlib.suppress(httpx.HTTPError):
                http.delete("/v1/arena")
    return decisions


def arena_main(args: Any) -> int:
    """``referee bot --bot-token T --arena RULESET`` (``--bot`` or ``--exec CMD``): play
    until Ctrl-C (or SIGTERM), then leave the pool."""
    stop = threading.Event()

    def stopped(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGINT, stopped)
    signal.signal(signal.SIGTERM, stopped)
    if args.exec is None:
        made = play_arena(args.url, args.bot_token, args.arena, args.bot, seed=args.seed, stop=stop)
        print(f"left the arena after {made} decisions", file=sys.stderr)
        return 0
    client = python_client()
    options = {
        "log_path": args.log,
        "first_move_s": args.first_move_s,
        "move_s": args.move_s,
        "max_restarts": args.max_restarts,
    }
    try:
        program = client.run_program(
            args.url, args.bot_token, args.exec, arena=args.arena, stop=stop, **options
        )
    except client.ProgramFailed as failed:
        print(f"gave up, out of the arena: {failed}", file=sys.stderr)
        return 1
    print(f"left the arena: {program.report()} (its stderr: {args.log})", file=sys.stderr)
    return 0
