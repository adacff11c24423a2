"""Where a decision's time goes in the referee: CPU per stage of a request, measured in the
serving process.

Run: python benchmarks/decision_stages.py [--games 40] [--valgrind] [--json]

The referee runs as ``referee serve`` with a few of its functions wrapped by timers of the
thread's CPU time (``time.thread_time_ns``: the event loop's thread, so no other process's
load is counted), one client plays whole 2-seat CHOICE games one request at a time (as
``benchmarks/server_instructions.py`` does), and each stage's time is summed and given per
decision (a ``POST /moves`` and the ``GET /turn`` requests around it) and as a share of the
process's CPU per decision:

- parse (of each route): ``PublicHttp.data_received`` of the request's bytes (httptools,
  the edge's checks, the hot route's match, its answer's task made) and, for ``POST /moves``,
  the strict decoding of its body (``hot._submission``);
- limits: ``Limits.admits``, the second's budget of the token and the address;
- token and seq: ``Seats._decide`` less the two stages it calls (validate, and the script's
  client side);
- validate: ``LoadedGame.decide``: the move normalized, the rules applied, the decision
  recorded and chained, deadlines moved, the answer made;
- script: ``GameService.send`` (the stored form encoded, the commit script's command packed
  and queued) and the replies read (``_Replies.data_received``); the round trip itself, from
  sending to the reply's turn in the loop, is given apart as wall time;
- wake: the commit heard on the subscribed connection
  (``hearing._Subscriber.data_received``: its reply parsed, ``Memory.heard_commit`` waking
  the seats that wait);
- turn: ``GameViews.turn``, the seat's view;
- encode: the answers' JSON (``hot._encode``).

What no stage holds (the event loop's scheduling, the socket's reads and writes, tasks, the
remembered games, the answers' heads) is the rest of the process's CPU per request. Each
timer costs a little itself: its cost, measured on an empty function first, is taken off every
call. Needs nothing but the referee; not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

STAGES = ("parse", "validate", "decide", "script", "wake", "encode")


def _instrument(out: Path) -> None:
    """In the serving process: wrap the stages' functions, and write the sums to ``out`` on
    SIGUSR2 (SIGUSR1 zeroes them)."""
    from referee.core.game import LoadedGame
    from referee.core.views import GameViews
    from referee.service.games import GameService
    from referee.service.limits import Limits
    from referee.service.memory import Memory
    from referee.service.seats import Seats
    from referee.store import connection, hearing
    from referee.web import hot, serving

    clock = time.thread_time_ns
    sums: dict[str, int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)

    def _empty() -> None:
        pass

    def timed(stage: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = clock()
            try:
                return function(*args, **kwargs)
            finally:
                sums[stage] += clock() - began
                calls[stage] += 1

        return wrapper

    # a timer's own cost, on an empty function
    probe = timed("probe", _empty)
    began = clock()
    for _ in range(20000):
        probe()
    overhead = (clock() - began) / 20000
    sums.clear()
    calls.clear()

    received = serving.PublicHttp.data_received

    def data_received(self: Any, data: bytes) -> None:
        began = clock()
        try:
            received(self, data)
        finally:
            cycle = self.cycle
            kind = "other"
            if type(cycle) is serving._HotCycle:
                kind = "turn" if cycle.route[1] == hot.TURN else "moves"
            sums[f"parse:{kind}"] += clock() - began
            calls[f"parse:{kind}"] += 1

    serving.PublicHttp.data_received = data_received  # type: ignore[method-assign]

    class _Decoder:
        def __init__(self, decoder: Any) -> None:
            self.decode = timed("parse:body", decoder.decode)

    hot._submission = _Decoder(hot._submission)  # type: ignore[assignment]
    encode = hot._encode
    hot._encode = timed("encode", encode)
    LoadedGame.decide = timed("validate", LoadedGame.decide)  # type: ignore[method-assign]
    GameService.send = timed("script:send", GameService.send)  # type: ignore[method-assign]
    connection._Replies.data_received = timed(  # type: ignore[method-assign]
        "script:replies", connection._Replies.data_received
    )
    # the commits heard on the subscribed connection (its replies parsed, waiters woken)
    hearing._Subscriber.data_received = timed(  # type: ignore[method-assign]
        "wake", hearing._Subscriber.data_received
    )
    Memory.heard_commit = timed("wake:heard", Memory.heard_commit)  # type: ignore[method-assign]
    GameViews.turn = timed("turn view", GameViews.turn)  # type: ignore[method-assign]
    Limits.admits = timed("limits", Limits.admits)  # type: ignore[method-assign]

    decide = Seats._decide

    async def _decide(*args: Any, **kwargs: Any) -> Any:
        # no await on a decision's way (only on a refusal's): the coroutine runs at once
        began = clock()
        try:
            return await decide(*args, **kwargs)
        finally:
            sums["decide"] += clock() - began
            calls["decide"] += 1

    Seats._decide = _decide  # type: ignore[method-assign]

    written = GameService.written

    async def _written(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter_ns()
        try:
            return await written(*args, **kwargs)
        finally:
            sums["script:round_trip_wall"] += time.perf_counter_ns() - began
            calls["script:round_trip_wall"] += 1

    GameService.written = _written  # type: ignore[method-assign]

    def zero(*_: Any) -> None:
        sums.clear()
        calls.clear()
        sums["cpu"] = -clock()

    def dump(*_: Any) -> None:
        sums["cpu"] += clock()
        calls["cpu"] = 1
        figures = {
            stage: {
                "calls": calls[stage],
                "ns": sums[stage]
                - (0 if stage in ("cpu", "script:round_trip_wall") else overhead * calls[stage]),
            }
            for stage in sums
        }
        out.write_text(json.dumps({"timer_ns": overhead, "stages": figures}))

    signal.signal(signal.SIGUSR1, zero)
    signal.signal(signal.SIGUSR2, dump)


def measure(games: int, valgrind: bool = False) -> dict[str, Any]:
    import httpx

    from referee.store.embedded import start_embedded
    from referee.tools.launch import answers, free_port
    from referee.tools.load import play_game

    workdir = Path(tempfile.mkdtemp(prefix="referee-stages-"))
    valkey = start_embedded(workdir / "valkey", persist=False)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    out = workdir / "stages.json"
    # under callgrind, what each stage runs outweighs the caches it finds cold: the times
    # then follow the instructions, whatever else the machine runs (about 50x slower)
    prefix = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] if valgrind else []
    server = subprocess.Popen(
        [*prefix, sys.executable, __file__, "--serve", str(out), "--port", str(port)],
        env={**os.environ, "REDIS_URL": valkey.url},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if not answers(server, url + "/readyz", within=300, patience=10):
            raise RuntimeError("the referee did not start")
        with httpx.Client(base_url=url, timeout=600) as http:
            for _ in range(3):
                play_game(http)  # warm-up: imports, caches, the Lua script
            server.send_signal(signal.SIGUSR1)
            time.sleep(0.3)
            requests = sum(play_game(http)[1] for _ in range(games))
            server.send_signal(signal.SIGUSR2)
            while not out.exists():
                time.sleep(0.5)
            time.sleep(1)
        measured = json.loads(out.read_text())
    finally:
        server.terminate()
        server.wait(timeout=30)
        valkey.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    stages = measured["stages"]
    decisions = stages["validate"]["calls"]

    def per(stage: str) -> float:
        """A stage's CPU in µs per decision (a POST /moves and the GET /turns around it)."""
        figure = stages.get(stage)
        return figure["ns"] / decisions / 1000 if figure else 0.0

    total = stages["cpu"]["ns"] / decisions / 1000
    validate, send = per("validate"), per("script:send")
    parts = {
        "parse: POST /moves (HTTP head, body decoded)": per("parse:moves") + per("parse:body"),
        "parse: GET /turn (HTTP head)": per("parse:turn"),
        "limits (a second's budget)": per("limits"),
        "decide: token and seq": per("decide") - validate - send,
        "validate: rules applied, decision recorded and chained": validate,
        "script: stored form encoded, commit packed and queued": send,
        "script: replies read": per("script:replies"),
        "wake: commit heard, waiting seats woken": per("wake"),
        "turn: the seat's view built": per("turn view"),
        "encode: answers' JSON": per("encode"),
    }
    parts["the rest: event loop, sockets, tasks, answers' heads"] = total - sum(parts.values())
    return {
        "games": games,
        "requests": requests,
        "decisions": decisions,
        "turns_per_decision": round(stages.get("parse:turn", {"calls": 0})["calls"] / decisions, 2),
        "timer_us": round(measured["timer_ns"] / 1000, 3),
        "cpu_us_per_request": round(stages["cpu"]["ns"] / requests / 1000, 1),
        "cpu_us_per_decision": round(total, 1),
        "round_trip_wall_us": round(per("script:round_trip_wall"), 1),
        "stages_us_per_decision": {name: round(us, 1) for name, us in parts.items()},
        "stages_share": {name: round(us / total, 3) for name, us in parts.items()},
    }


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        _instrument(Path(sys.argv[2]))
        from referee.cli import main as referee

        sys.argv = ["referee", "serve", *sys.argv[3:], "--log-level", "warning", "--no-access-log"]
        sys.exit(referee())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument(
        "--valgrind", action="store_true", help="run the referee under callgrind (see measure)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.games, args.valgrind)
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
