"""``referee tournament``: a local tournament between bots, over real HTTP.

Each bot runs in a process of its own and talks to the referee only over HTTP (long-polling
``/v1/me/next``, posting moves with the seat token it is handed). The referee is embedded (a
Valkey and a referee process) unless ``--url`` names one.
"""

from __future__ import annotations

import functools
import json
import math
import multiprocessing
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import httpx
import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..bots import bot_names, get_bot
from ..core.pairing import TournamentSpec, total_games
from ..plugins import load_plugins
from ..store.embedded import start_embedded
from .launch import LOAD_LIMITS, start_referee

__all__ = ["bot_main", "main", "play_entrant"]


def _patient(send: Callable[[], httpx.Response], patience: float = 120.0) -> httpx.Response:
    """Send again while the referee cannot be reached (restarting), or answers 429 or 503
    (limited, or its Redis restarting), with a backoff, for up to ``patience`` seconds. Only
    for requests safe to repeat: reads, and decisions (a seq decided before is answered the
    same)."""
    stop = time.monotonic() + patience
    attempt = 0
    while True:
        reply = None
        try:
            reply = send()
            if reply.status_code not in (429, 503):
                return reply
        except httpx.TransportError:
            if time.monotonic() > stop:
                raise
        if reply is not None and time.monotonic() > stop:
            return reply
        retry_after = reply.headers.get("retry-after", "") if reply is not None else ""
        time.sleep(float(retry_after) if retry_after.isdigit() else min(5.0, 0.1 * 2**attempt))
        attempt += 1


def play_entrant(
    url: str,
    token: str,
    bot_name: str,
    seed: int,
    on_decision: Callable[[], None] | None = None,
) -> None:
    """A reference bot as a tournament entrant: ask for the next decision across its games
    (``GET /v1/me/next``), answer it, until the tournament is over; it keeps its token and
    waits out a referee that restarts. Each game's ruleset is read from its turn's view."""
    bots: dict[str, Callable[[dict[str, Any]], Any]] = {}
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, timeout=90) as http:
        while True:
            asked = _patient(lambda: http.get("/v1/me/next", params={"wait": 30}, headers=headers))
            if asked.status_code != 200:
                raise SystemExit(f"the referee refused the entrant token: {asked.text}")
            step = asked.json()
            if step.get("status") == "finished":
                return
            if step.get("status") != "your_turn":
                continue
            turn = step["turn"]
            ruleset = turn["view"]["ruleset"]
            if ruleset not in bots:
                bots[ruleset] = get_bot(ruleset, bot_name, seed)
            move = bots[ruleset]({"legal_moves": turn["legal_moves"], "view": turn["view"]})
            post = functools.partial(
                http.post,
                f"/v1/games/{step['game_id']}/moves",
                headers={"Authorization": f"Bearer {step['seat_token']}"},
                json={"seq": turn["seq"], "move": move},
            )
            reply = _patient(post)
            if reply.status_code == 200 and on_decision is not None:
                on_decision()


def _entrant_process(url: str, token: str, bot_name: str, seed: int, decisions: Any) -> None:
    load_plugins()  # a spawned process starts with the built-in rulesets only: their bots too

    def counted() -> None:
        with decisions.get_lock():
            decisions.value += 1

    play_entrant(url, token, bot_name, seed, counted)


def bot_main(args: Any) -> int:
    """``referee bot``: a reference bot enters an existing tournament with its entrant token."""
    play_entrant(args.url, args.entrant_token, args.bot, args.seed)
    print("the tournament is over", file=sys.stderr)
    return 0


#: how the referee orders standings (``core.pairing.ranked``), as the command shows it
SORT_KEY = "rating (mu - 3 sigma), highest first; then points; then entrant number"


def _fewer_games(spec: dict[str, Any], played: int, rounds: int) -> str:
    """Why a swiss run plays fewer games than a round-robin of the same entrants would: its
    rounds, and its byes (``games_per_pairing`` is the round-robin's and the gauntlet's)."""
    entrants = spec["entrants"]
    full = math.comb(entrants, 2) * spec["games_per_pairing"]
    if spec["format"] != "swiss" or played >= full:
        return ""
    bye = "; with an odd number of entrants one sits out each round (a bye)" if entrants % 2 else ""
    return (
        f"swiss: {played} games in {rounds} rounds of {entrants // 2} "
        f"(--rounds, by default entrants - 1 = {entrants - 1}){bye}; a round-robin of the same "
        f"entrants, {spec['games_per_pairing']} games per pairing, would play {full}"
    )


def _expected_games(spec: dict[str, Any]) -> int:
    return total_games(msgspec.convert(spec, TournamentSpec))


def main(args: Any) -> int:
    bots = args.bots or bot_names(args.ruleset)
    spec = {
        "ruleset": args.ruleset,
        "format": args.format,
        "entrants": len(bots),
        "table_size": args.table_size,
        "games_per_pairing": args.games_per_pairing,
        "deadline_s": args.deadline,
        "options": json.loads(args.options or "{}"),
    }
    if args.rounds:
        spec["rounds"] = args.rounds
    if args.seed:
        spec["seed"] = args.seed
    console = Console(stderr=True)
    valkey = referee = data_dir = None
    url = args.url
    if url is None:
        data_dir = tempfile.mkdtemp(prefix="referee-tournament-")
        valkey = start_embedded(data_dir, persist=False)
        referee, url = start_referee(valkey.url, env=LOAD_LIMITS)
    context = multiprocessing.get_context("spawn")
    decisions = context.Value("i", 0)
    processes = []
    try:
        organizer = {"Authorization": f"Bearer {args.organizer_key}"} if args.organizer_key else {}
        with httpx.Client(base_url=url, timeout=30) as http:
            created = http.post("/v1/tournaments", json=spec, headers=organizer)
            if created.status_code != 201:
                console.print(f"[red]the referee refused the tournament:[/red] {created.text}")
                return 2
            tournament = created.json()["id"]
            for index, name in enumerate(bots):
                entrant = http.post(
                    f"/v1/tournaments/{tournament}/entrants", json={"name": f"{index}-{name}"}
                ).json()
                process = context.Process(
                    target=_entrant_process,
                    args=(url, entrant["token"], name, index, decisions),
                    daemon=True,
                )
                process.start()
                processes.append(process)
            total = _expected_games(spec)
            started = time.monotonic()
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]:.0f} decisions/s"),
                TimeElapsedColumn(),
            )
            with Progress(*columns, console=console, disable=args.json) as progress:
                # no total until the first round is dealt: no 0/N while entrants register
                task = progress.add_task("registering", total=None, rate=0.0)
                while True:
                    view = _patient(lambda: http.get(f"/v1/tournaments/{tournament}")).json()
                    done = sum(1 for r in view["rounds"] for t in r if t["result"])
                    rate = decisions.value / max(1e-9, time.monotonic() - started)
                    if view["rounds"]:
                        progress.update(task, description="games", total=total)
                    progress.update(task, completed=done, rate=rate)
                    if view["status"] == "finished":
                        break
                    time.sleep(0.1 if not view["rounds"] else 0.5)
            played = sum(len(r) for r in view["rounds"])
            note = _fewer_games(spec, played, len(view["rounds"]))
        if args.json:
            print(
                json.dumps(
                    {
                        "tournament": tournament,
                        "games": played,
                        "scheduled": total,
                        "sorted_by": SORT_KEY,
                        "standings": view["standings"],
                    }
                )
            )
        else:
            if note:
                console.print(note)
            table = Table(
                title=f"{args.ruleset} {args.format}: standings", caption=f"sorted by {SORT_KEY}"
            )
            for column in ("place", "entrant", "games", "wins", "points", "rating", "mu", "sigma"):
                table.add_column(column, justify="right" if column != "entrant" else "left")
            for place, row in enumerate(view["standings"], 1):
                table.add_row(
                    str(place),
                    row["name"],
                    str(row["games"]),
                    str(row["wins"]),
                    str(row["points"]),
                    f"{row['rating']:.2f}",
                    f"{row['mu']:.2f}",
                    f"{row['sigma']:.2f}",
                )
            Console().print(table)
        return 0
    finally:
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
        if referee is not None:
            referee.terminate()
            referee.wait(timeout=15)
        if valkey is not None:
            valkey.stop()
        if data_dir is not None:
            shutil.rmtree(data_dir, ignore_errors=True)
