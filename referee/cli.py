"""The ``referee`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

__all__ = ["UVICORN_OPTIONS", "build_parser", "main"]


class UvicornOptions(TypedDict):
    """``UVICORN_OPTIONS``: keyword arguments of ``uvicorn.run`` and ``uvicorn.Config``."""

    proxy_headers: bool
    server_header: bool
    headers: list[tuple[str, str]]
    http: str
    ws: str
    timeout_graceful_shutdown: int


#: How uvicorn serves the referee, wherever it runs it (``serve``, the bench, the tests). No
#: proxy headers: the referee reads a client's address itself, from trusted proxies only
#: (``web.access``), and the middleware that rewrites it cost every request a coroutine and
#: a scan of its headers. No ``server`` header: it told only what the referee runs on, in
#: every answer. ``nosniff`` on every answer: no browser takes an answer of the referee's for
#: another type than it says (JSON, text or a file run as a script where a page's policy
#: allows the referee's own scripts). Its HTTP protocol has a deadline for headers and a cap
#: on connections per address (``web.serving``). A stop (SIGTERM) ends every wait at once
#: (``web.serving``); what is still running after ``timeout_graceful_shutdown`` seconds is
#: cancelled, so a stop takes no longer than that whatever a client does.
UVICORN_OPTIONS: UvicornOptions = {
    "proxy_headers": False,
    "server_header": False,
    "headers": [("x-content-type-options", "nosniff")],
    "http": "referee.web.serving:PublicHttp",
    "ws": "none",  # no WebSocket route: an offer of one is served as HTTP/1.1 (web.bounded)
    "timeout_graceful_shutdown": 5,
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


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging, with the referee's own lines (logger ``referee``) in its format:
    ``INFO:     message``."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["referee"] = {
        "handlers": ["default"],
        "level": level.upper(),
        "propagate": False,
    }
    return config


def _serve(args: argparse.Namespace) -> int:
    import logging
    import logging.config

    import uvicorn

    from .settings import Settings
    from .web.serving import raise_file_limit

    settings = Settings.from_env()
    embedded = None
    log_config = _log_config(args.log_level)
    logging.config.dictConfig(log_config)
    log = logging.getLogger("referee")
    _on_stop_signals()
    raise_file_limit()
    if settings.redis_cluster and settings.redis_url is None:
        log.error("REFEREE_REDIS_CLUSTER=1 needs REDIS_URL: a node of the cluster")
        return 1
    try:
        if settings.redis_url is None:
            from .store.embedded import EmbeddedError, start_embedded

            try:
                embedded = start_embedded(
                    settings.data_dir, tcp=args.embedded_tcp, appendfsync=settings.appendfsync
                )
            except EmbeddedError as exc:
                log.error("%s", exc)
                return 1
            os.environ["REDIS_URL"] = embedded.url
            where = f"{embedded.unix_socket_path} (owner only)"
            if embedded.tcp_url is not None:
                where += f" and {embedded.tcp_url}"
            # the password is shown here once and kept nowhere: logged whatever the level
            said = log.warning if embedded.tcp_url is not None else log.info
            said("embedded Valkey at %s, data in %s/", where, settings.data_dir)
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
            log_config=log_config,
            # uvicorn says int, but only hands it to loop.call_later: a float is kept whole
            timeout_keep_alive=settings.keep_alive_s,  # type: ignore[arg-type]
            access_log=args.access_log,
            **UVICORN_OPTIONS,
        )
    except _Stopped:
        pass
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def _tool(name: str, entry: str = "main") -> Callable[[argparse.Namespace], int]:
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
    run: Callable[[argparse.Namespace], int] = getattr(module, entry)
    return run


def _openapi(args: argparse.Namespace) -> int:
    from .web import openapi_document

    text = openapi_document()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
    return 0


def _bot(args: argparse.Namespace) -> int:
    if args.bot_token:
        if not args.arena:
            raise SystemExit("--bot-token plays the arena: name its ruleset with --arena")
        return _tool("arena", "arena_main")(args)
    return _tool("local_tournament", "bot_main")(args)


def main(argv: list[str] | None = None) -> int:
    from .plugins import load_plugins

    load_plugins()  # every command knows the installed rulesets (verify, tournament, bench)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # `referee` alone: what it can do
        parser.print_help()
        return 0
    code: int = args.run(args)
    return code


class _WithDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """Every flag's help with its default, where it has one worth saying."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default in (None, False) or action.required:
            return action.help or ""
        return super()._get_help_string(action) or ""


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``referee serve|verify|bot|tournament|bench|openapi``."""
    parser = argparse.ArgumentParser(
        prog="referee",
        description="A REST/JSON referee for dice-game bot tournaments (CHOICE, CHOICE with "
        "special cards, CHOPTA). `referee serve` starts it; `referee COMMAND --help` tells "
        "more of each command.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=text, description=text, formatter_class=_WithDefaults)

    verify = command("verify", "replay a finished game's record and check it")
    verify.add_argument("record", help="RECORD.json, as GET /v1/games/{id}/record returns it")
    verify.add_argument("--seed", help="the revealed seed (hex), if the record lacks it")
    verify.add_argument(
        "--chain", help="the chain the referee published (game_over event, public view), hex"
    )
    verify.set_defaults(run=_verify)
    serve = command(
        "serve",
        "serve the referee: an embedded Valkey keeps its data in $REFEREE_DATA_DIR (./data), or "
        "the server at $REDIS_URL",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument("--workers", type=int, default=1, help="referee processes")
    serve.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="the least level logged",
    )
    serve.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="a log line per request",
    )
    serve.add_argument(
        "--embedded-tcp",
        action="store_true",
        help="the embedded Valkey also listens on a loopback port, behind a random password "
        "printed once (without it: its owner-only Unix socket alone)",
    )
    serve.set_defaults(run=_serve)
    bench = command("bench", "measure throughput, latency and memory over HTTP")
    bench.add_argument("--seconds", type=float, default=20.0, help="load time")
    bench.add_argument("--workers", type=int, default=1, help="referee processes")
    bench.add_argument("--bots", type=int, default=64, help="concurrent bots")
    bench.add_argument(
        "--live-games", type=int, default=100, help="idle running games beside the load"
    )
    bench.add_argument(
        "--appendfsync",
        default="everysec",
        choices=["everysec", "always", "no"],
        help="the embedded Valkey's fsync policy for the append-only file",
    )
    bench.add_argument(
        "--redis-url",
        help="measure on this server (its figures only: nothing is flushed), not an embedded one",
    )
    bench.add_argument(
        "--cluster",
        action="store_true",
        help="--redis-url names a node of a Redis/Valkey Cluster: the referee runs in cluster "
        "mode and the Redis figures are summed over every primary",
    )
    bench.add_argument(
        "--local-cluster",
        type=int,
        default=0,
        metavar="N",
        help="start a cluster of N Valkey primaries on loopback for the run, and measure on it",
    )
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.set_defaults(run=lambda args: _tool("bench")(args))
    tournament = command(
        "tournament", "a local tournament between reference bots, each in its own process"
    )
    from .bots import bot_names
    from .games import DEFAULT, RULESETS

    tournament.add_argument(
        "--ruleset",
        default=DEFAULT,
        choices=list(RULESETS),
        help="the ruleset played (every registered one: built in or installed)",
    )
    tournament.add_argument(
        "--format",
        default="round-robin",
        choices=["round-robin", "swiss", "gauntlet"],
        help="how games are scheduled",
    )
    tournament.add_argument(
        "--bots",
        nargs="*",
        choices=sorted({name for ruleset in RULESETS for name in bot_names(ruleset)}),
        help="reference bots, one entrant each (none given: each of the ruleset's house bots)",
    )
    tournament.add_argument(
        "--exec",
        action="append",
        default=[],
        metavar="NAME=CMD",
        help="a local program as one more entrant, beside the reference bots (repeatable; its "
        "protocol: `referee bot --help`); needs the Python client (clients/python)",
    )
    tournament.add_argument(
        "--log-dir", help="where each program's stderr goes, NAME.log (none: a new temporary one)"
    )
    tournament.add_argument("--table-size", type=int, default=2, help="seats per game")
    games = tournament.add_mutually_exclusive_group()
    games.add_argument(
        "--games-per-pairing",
        type=int,
        help="games each table of a round-robin or gauntlet plays (none given: 2)",
    )
    games.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="N games in all, at least (round-robin, gauntlet): each table plays N / tables, "
        "rounded up",
    )
    tournament.add_argument("--rounds", type=int, help="swiss rounds (none given: entrants - 1)")
    tournament.add_argument("--deadline", type=float, default=10.0, help="seconds per decision")
    tournament.add_argument(
        "--options",
        help="ruleset options as JSON, e.g. '{\"schedule\": [3]}' (CHOICE: 3 rolls per postal "
        "round); each ruleset's options are listed by GET /v1/rulesets",
    )
    tournament.add_argument(
        "--seed", help="hex, 32 to 64 bytes: fixes every round's dice (none: a random one)"
    )
    tournament.add_argument(
        "--url", help="a running referee (none given: an embedded one, stopped at the end)"
    )
    tournament.add_argument(
        "--organizer-key",
        default=os.environ.get("REFEREE_ORGANIZER_KEY"),
        help="the key a referee with organizer keys wants for creating ($REFEREE_ORGANIZER_KEY)",
    )
    tournament.add_argument("--json", action="store_true", help="print the standings as JSON")
    tournament.set_defaults(run=lambda args: _tool("local_tournament")(args))
    bot = command(
        "bot",
        "play with a reference bot or a local program (--exec): as a tournament entrant "
        "(--entrant-token; POST /v1/tournaments/{id}/entrants gives one) until the tournament "
        "is over, in one seat (--seat-token) until its game is over, or in the arena with a "
        "bot account's token until Ctrl-C (--bot-token, --arena)",
    )
    bot.add_argument("--url", required=True, help="the referee, e.g. http://127.0.0.1:8000")
    given = bot.add_mutually_exclusive_group(required=True)
    given.add_argument("--entrant-token", help="the entrant's token, shown once at registration")
    given.add_argument("--seat-token", help="a seat's token: play that one game")
    given.add_argument("--bot-token", help="a bot account's token (POST /v1/bots)")
    bot.add_argument(
        "--arena", choices=list(RULESETS), help="with --bot-token: the ruleset to seek games of"
    )
    bot.add_argument(
        "--bot", default="strong", choices=["random", "greedy", "strong"], help="which bot plays"
    )
    bot.add_argument("--seed", type=int, default=0, help="the random bot's seed")
    bot.add_argument(
        "--exec",
        metavar="CMD",
        help="a program plays instead: one Turn JSON line per turn on its stdin, one move per "
        "line on its stdout (docs/CONNECTING.md); needs the Python client (clients/python)",
    )
    bot.add_argument("--log", default="bot.log", help="where the program's stderr goes")
    bot.add_argument(
        "--first-move-s", type=float, default=10.0, help="the program's first turn, at most"
    )
    bot.add_argument("--move-s", type=float, default=2.0, help="each later turn, at most")
    bot.add_argument("--max-restarts", type=int, default=3, help="restarts of a failing program")
    bot.set_defaults(run=_bot)
    ratings = command("ratings", "the league's lifetime ratings (on REDIS_URL, else embedded)")
    ratings.add_argument(
        "--rebuild",
        action="store_true",
        required=True,
        help="compute every rating again from the settled games, in their order",
    )
    ratings.set_defaults(run=lambda args: _tool("ratings")(args))
    new_bot = command(
        "new-bot",
        "write a starter bot and its own test (a game of every ruleset on a local referee) "
        "into a new folder",
    )
    new_bot.add_argument(
        "--lang",
        default="python",
        choices=["python", "node", "typescript", "go", "shell"],
        help="its language",
    )
    new_bot.add_argument(
        "--style",
        default="stdin",
        choices=["stdin", "poll", "webhook"],
        help="a program on stdin and stdout, a client that polls, or a server the referee "
        "calls (typescript, go, shell: stdin only)",
    )
    new_bot.add_argument("dir", help="the new folder")
    new_bot.set_defaults(run=lambda args: _tool("new_bot")(args))
    openapi = command("openapi", "print the OpenAPI document (the contract)")
    openapi.add_argument("--output", "-o", default="-", help="file to write; - is stdout")
    openapi.set_defaults(run=_openapi)
    return parser


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
