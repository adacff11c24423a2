"""The ``referee`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["UVICORN_OPTIONS", "build_parser", "main"]

#: How uvicorn serves the referee, wherever it runs it (``serve``, the bench, the tests). No
#: proxy headers: the referee reads a client's address itself, from trusted proxies only
#: (``web.access``), and the middleware that rewrites it cost every request a coroutine and
#: a scan of its headers. No ``server`` header: it told only what the referee runs on, in
#: every answer. Its HTTP protocol has a deadline for headers and a cap on connections per
#: address (``web.serving``).
UVICORN_OPTIONS = {
    "proxy_headers": False,
    "server_header": False,
    "http": "referee.web.serving:PublicHttp",
}


def _verify(args: argparse.Namespace) -> int:
    from .games import verify

    try:
        record = Path(args.record).read_bytes()
    except OSError as exc:
        print(f"cannot read {args.record}: {exc.strerror}", file=sys.stderr)
        return 2
    report = verify(record, args.seed, args.chain)
    for note in report.notes:
        print(f"note: {note}")
    if report.ok:
        what = "the prefix replayed" if report.notes else "every die re-derived from the seed"
        print(f"ok: {what}; every decision replayed and hashed into the chain; figures match")
        return 0
    for problem in report.problems:
        print(f"mismatch: {problem}", file=sys.stderr)
    return 1


class _Stopped(Exception):
    """SIGTERM or SIGINT reached the referee: it stops, and stops its embedded Valkey."""


def _on_stop_signals() -> None:
    """uvicorn stops on SIGTERM and SIGINT after its requests in flight, restores the
    handlers it found, and raises the signal again: left at their defaults, SIGTERM would end
    the process before it stopped its embedded Valkey. These raise once, then are ignored."""
    import signal

    def stopped(signum: int, frame: Any) -> None:
        for each in (signal.SIGTERM, signal.SIGINT):
            signal.signal(each, signal.SIG_IGN)
        raise _Stopped(signum)

    for each in (signal.SIGTERM, signal.SIGINT):
        signal.signal(each, stopped)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .settings import Settings
    from .web.serving import raise_file_limit

    settings = Settings.from_env()
    embedded = None
    _on_stop_signals()
    raise_file_limit()
    try:
        if settings.redis_url is None:
            from .store.embedded import EmbeddedError, start_embedded

            try:
                embedded = start_embedded(
                    settings.data_dir, tcp=args.embedded_tcp, appendfsync=settings.appendfsync
                )
            except EmbeddedError as exc:
                print(exc, file=sys.stderr)
                return 1
            os.environ["REDIS_URL"] = embedded.url
            where = f"{embedded.unix_socket_path} (owner only)"
            if embedded.tcp_url is not None:  # printed once, here: the password is kept nowhere
                where += f" and {embedded.tcp_url}"
            print(f"embedded Valkey at {where}, data in {settings.data_dir}/", flush=True)
        # uvicorn stops on SIGTERM after the requests in flight; each decision is one atomic
        # Redis script, so no game is ever half written.
        uvicorn.run(
            "referee.web:create_app",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            loop="auto",
            log_level=args.log_level,
            timeout_keep_alive=settings.keep_alive_s,
            access_log=args.access_log,
            **UVICORN_OPTIONS,
        )
    except _Stopped:
        pass
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def _tool(name: str) -> Any:
    """A tool's entry point (``referee.tools``); its libraries come with the ``tools`` extra."""
    import importlib

    try:
        module = importlib.import_module(f"referee.tools.{name}")
    except ImportError as exc:
        print(
            f"this command needs {exc.name!r}: pip install 'referee[tools]' (or '.[tools]' in "
            "a checkout)",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    return module.main


def _openapi(args: argparse.Namespace) -> int:
    from .web import openapi_document

    text = openapi_document()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``referee verify|serve|bench|tournament|openapi``."""
    parser = argparse.ArgumentParser(prog="referee", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="replay a finished game's record and check it")
    verify.add_argument("record", help="RECORD.json, as GET /v1/games/{id}/record returns it")
    verify.add_argument("--seed", help="the revealed seed (hex), if the record lacks it")
    verify.add_argument(
        "--chain", help="the chain the referee published (game_over event, public view), hex"
    )
    verify.set_defaults(run=_verify)
    serve = commands.add_parser("serve", help="serve the referee (embedded Valkey by default)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--log-level", default="info")
    serve.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="a log line per request (default: on)",
    )
    serve.add_argument(
        "--embedded-tcp",
        action="store_true",
        help="the embedded Valkey also listens on a loopback port, behind a random password "
        "printed once (default: its owner-only Unix socket alone)",
    )
    serve.set_defaults(run=_serve)
    bench = commands.add_parser("bench", help="measure throughput, latency and memory over HTTP")
    bench.add_argument("--seconds", type=float, default=20.0, help="load time (default 20)")
    bench.add_argument("--workers", type=int, default=1, help="referee processes (default 1)")
    bench.add_argument("--bots", type=int, default=64, help="concurrent bots (default 64)")
    bench.add_argument(
        "--live-games",
        type=int,
        default=100,
        help="idle running games beside the load (default 100)",
    )
    bench.add_argument(
        "--appendfsync",
        default="everysec",
        choices=["everysec", "always", "no"],
        help="the embedded Valkey's fsync policy for the append-only file (default everysec)",
    )
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.set_defaults(run=lambda args: _tool("bench")(args))
    tournament = commands.add_parser(
        "tournament", help="a local tournament between bots, each in its own process, over HTTP"
    )
    tournament.add_argument(
        "--ruleset", default="choice", choices=["choice", "choice-specials", "chopta"]
    )
    tournament.add_argument(
        "--format", default="round-robin", choices=["round-robin", "swiss", "gauntlet"]
    )
    tournament.add_argument(
        "--bots",
        nargs="*",
        choices=["random", "greedy", "strong"],
        help="reference bots, one entrant each (default: all three)",
    )
    tournament.add_argument("--table-size", type=int, default=2)
    tournament.add_argument("--games-per-pairing", type=int, default=2)
    tournament.add_argument("--rounds", type=int, help="swiss rounds")
    tournament.add_argument("--deadline", type=float, default=10.0, help="seconds per decision")
    tournament.add_argument("--options", help="ruleset options as JSON")
    tournament.add_argument("--seed", help="hex: fixes every round's dice")
    tournament.add_argument("--url", help="a running referee (default: an embedded one)")
    tournament.add_argument(
        "--organizer-key",
        default=os.environ.get("REFEREE_ORGANIZER_KEY"),
        help="the key a referee with organizer keys wants for creating (default: "
        "$REFEREE_ORGANIZER_KEY)",
    )
    tournament.add_argument("--json", action="store_true", help="print the standings as JSON")
    tournament.set_defaults(run=lambda args: _tool("local_tournament")(args))
    openapi = commands.add_parser("openapi", help="print the OpenAPI document")
    openapi.add_argument("--output", "-o", default="-", help="file to write (default: stdout)")
    openapi.set_defaults(run=_openapi)
    return parser


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
