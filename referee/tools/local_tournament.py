"""``referee tournament``: a local tournament between bots, over real HTTP.

Each bot runs in a process of its own and talks to the referee only over HTTP (long-polling
``/v1/me/next``, posting moves with the seat token it is handed). The referee is embedded (a
Valkey and a referee process) unless ``--url`` names one.
"""

from __future__ import annotations

import functools
import importlib
import json
import math
import multiprocessing
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
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


def python_client() -> Any:
    """The Python client (``clients/python``): installed, or beside this checkout's package."""
    try:
        return importlib.import_module("referee_client")
    except ImportError:
        checkout = Path(__file__).resolve().parents[2] / "clients" / "python"
        if not (checkout / "referee_client").is_dir():
            raise SystemExit(
                "this needs the Python client: pip install -e clients/python (in a checkout)"
            ) from None
        sys.path.insert(0, str(checkout))
        return importlib.import_module("referee_client")


def _entrant_process(url: str, token: str, bot_name: str, seed: int, decisions: Any) -> None:
    load_plugins()  # a spawned process starts with the built-in rulesets only: their bots too

    def counted() -> None:
        with decisions.get_lock():
            decisions.value += 1

    play_entrant(url, token, bot_name, seed, counted)


def _program_process(url: str, token: str, command: str, log_path: str, decisions: Any) -> None:
    """A local program as an entrant (``--exec``), its stderr in ``log_path``."""
    client = python_client()
    with client.Program(command, log_path=log_path) as program:

        def choose(turn: Any) -> Any:
            move = program.choose(turn)
            with decisions.get_lock():
                decisions.value += 1
            return move

        client.run_entrant(url, token, choose)
    print(f"{command}: {program.report()}", file=sys.stderr)


def bot_main(args: Any) -> int:
    """``referee bot``: a reference bot or a local program plays a tournament entrant's
    games (``--entrant-token``) or one seat (``--seat-token``)."""
    if args.exec is None and args.entrant_token is not None:
        play_entrant(args.url, args.entrant_token, args.bot, args.seed)
        print("the tournament is over", file=sys.stderr)
        return 0
    client = python_client()
    entrant = args.entrant_token is not None
    token = args.entrant_token if entrant else args.seat_token
    if args.exec is None:  # a reference bot in one seat
        final = client.run_bot(args.url, token, get_bot_for_turns(args.bot, args.seed))
        print(f"the game is over: {json.dumps(final.view)}", file=sys.stderr)
        return 0
    options = {
        "log_path": args.log,
        "first_move_s": args.first_move_s,
        "move_s": args.move_s,
        "max_restarts": args.max_restarts,
    }
    try:
        program = client.run_program(args.url, token, args.exec, entrant=entrant, **options)
    except client.ProgramFailed as failed:
        print(f"gave up: {failed}", file=sys.stderr)
        return 1
    print(f"over: {program.report()} (its stderr: {args.log})", file=sys.stderr)
    return 0


def get_bot_for_turns(bot_name: str, seed: int) -> Callable[[Any], Any]:
    """A reference bot for turns of any ruleset, made for each ruleset as it is met."""
    bots: dict[str, Callable[[dict[str, Any]], Any]] = {}

    def choose(turn: Any) -> Any:
        if turn.ruleset not in bots:
            bots[turn.ruleset] = get_bot(turn.ruleset, bot_name, seed)
        return bots[turn.ruleset]({"legal_moves": turn.legal_moves, "view": turn.view})

    return choose


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
    programs = []
    for each in args.exec:
        name, _, command = each.partition("=")
        if not name or not command:
            print(f"--exec wants NAME=CMD, not {each!r}", file=sys.stderr)
            return 2
        programs.append((name, command))
    log_dir = Path(
        args.log_dir or (tempfile.mkdtemp(prefix="referee-programs-") if programs else ".")
    )
    spec = {
        "ruleset": args.ruleset,
        "format": args.format,
        "entrants": len(bots) + len(programs),
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
            for index, (name, command) in enumerate(programs, len(bots)):
                entrant = http.post(
                    f"/v1/tournaments/{tournament}/entrants", json={"name": f"{index}-{name}"}
                ).json()
                log_path = str(log_dir / f"{name}.log")
                process = context.Process(
                    target=_program_process,
                    args=(url, entrant["token"], command, log_path, decisions),
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
            if programs:
                console.print(f"the programs' stderr: {log_dir}/NAME.log")
            table = Table(
                title=f"{args.ruleset} {args.format}: standings", caption=f"sorted by {SORT_KEY}"
            )
            heads = ("place", "entrant", "games", "wins", "win rate", "points", "rating", "mu")
            for column in (*heads, "sigma"):
                table.add_column(column, justify="right" if column != "entrant" else "left")
            for place, row in enumerate(view["standings"], 1):
                table.add_row(
                    str(place),
                    row["name"],
                    str(row["games"]),
                    str(row["wins"]),
                    f"{row['wins'] / row['games']:.0%}" if row["games"] else "-",
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
