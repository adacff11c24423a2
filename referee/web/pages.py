"""The spectator pages: the referee serves them itself, from files in the package, so that
``referee serve`` is all a watcher needs and nothing is loaded from anywhere else.

``/``, ``/games/{id}`` and ``/tournaments/{id}`` are small HTML shells; the page's script
(``static/spectator.js``) reads only the public endpoints (getGame, streamEvents, getReplay,
listGames, getTournament, ...), so a spectator sees exactly what the public view shows. The
turn report (``/games/{id}/report`` and ``report.txt``) is rendered here, from the rounds
that are over (``core.replay.postal_report``). ``/games/{id}/play`` adds a seat played by a
person (``static/play.js``): with the seat's token it reads that seat's turn and posts its
moves, as any bot does. Every page forbids, by its Content-Security-Policy, any request that
leaves the referee's origin.

``/games/{id}/replay.json`` is a finished game's replay in the pages' compact form
(``replay_deltas``: the first view, then what each step changed), immutable, with an ``ETag``
and a year's ``Cache-Control``; ``/games/{id}/view.json?since=V`` a live game's public view as
what changed since the version V a page holds. ``/embed/games/{id}`` is a game's board
alone, which any site may frame; ``/rulesets/{id}/rules`` a ruleset's rules help, from its package
(``rules_help``, a Markdown file). Anything not found is one page: a 404 in HTML for a
browser, problem+json for anyone else (``not_found_page``).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.datastructures import State
from litestar.params import Parameter
from litestar.static_files import create_static_files_router
from markdown_it import MarkdownIt

from ..core.pairing import total_rounds
from ..core.refusals import Refusal
from ..core.replay import check_over, walk
from ..games import RULESETS
from .caching import IMMUTABLE, held, not_modified
from .featured import featured
from .params import GameId, TournamentId, services_of
from .problems import check_id
from .replay_deltas import LiveViews, compact_steps, replay_deltas
from .tournament_stream import tournament_events

__all__ = [
    "PAGES",
    "STATIC",
    "PageController",
    "not_found_page",
    "report_text",
    "rules_html",
    "static_files",
    "warm_replays",
]

#: where the pages' script, styles and icon are served from
STATIC = "/static"
_FILES = Path(__file__).parent / "static"
_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
)
_HEADERS = {"content-security-policy": _POLICY, "referrer-policy": "no-referrer"}
#: an embedded board may be framed by any site (a blog, a course page); it still loads
#: nothing from elsewhere
_EMBED_HEADERS = {
    "content-security-policy": _POLICY.replace("frame-ancestors 'self'", "frame-ancestors *"),
    "referrer-policy": "no-referrer",
}
_ENCODER = msgspec.json.Encoder()
_LIVE = LiveViews()
_FACES = "⚀⚁⚂⚃⚄⚅"


def static_files() -> Any:
    return create_static_files_router(
        path=STATIC, directories=[_FILES], include_in_schema=False, name="static"
    )


def _page(
    title: str,
    kind: str,
    ident: str = "",
    body: str = "",
    *,
    status: int = 200,
    headers: dict[str, str] = _HEADERS,
    rounds: str = "",
    preload: str = "",
) -> Response[str]:
    """A page: its title, and what the script draws into it (``data-page``, ``data-id``).
    Only what changes on its own (a live board's status, a step's words) is ``aria-live``,
    set by the script where it is."""
    header = (
        ""
        if kind == "embed"
        else f"""<header class="top"><a href="/" class="home">referee</a>
<span class="where">{html.escape(title)}</span><a href="/docs" class="docs">API</a></header>"""
    )
    document = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{html.escape(title)} · referee</title>
<link rel="stylesheet" href="{STATIC}/spectator.css">
<link rel="icon" href="{STATIC}/icon.svg" type="image/svg+xml">
<link rel="modulepreload" href="{STATIC}/common.js">
<link rel="modulepreload" href="{STATIC}/play.js">
{preload}<script type="module" src="{STATIC}/spectator.js"></script>
</head>
<body class="page-{kind}">
{header}
<main id="app" data-page="{kind}" data-id="{html.escape(ident)}" data-rounds="{rounds}">
{body or '<p class="loading">Loading…</p>'}
</main>
<noscript><p>These pages draw games as they happen with a small script; the same figures are
in the API (<a href="/docs">/docs</a>).</p></noscript>
</body>
</html>
"""
    return Response(document, status_code=status, media_type="text/html", headers=headers)


def _wants_html(request: Request[Any, Any, Any]) -> bool:
    """Whether the client asks for a page rather than JSON (a browser's navigation)."""
    if request.url.path.startswith("/v1/"):
        return False
    best = request.accept.best_match(["application/problem+json", "application/json", "text/html"])
    return best == "text/html"


def not_found_page(
    handler: Callable[[Request[Any, Any, Any], Exception], Response[Any]],
) -> Callable[[Request[Any, Any, Any], Exception], Response[Any]]:
    """``handler`` (an exception handler answering problem+json), but a 404 asked for by a
    browser is the one not-found page, in HTML, still with status 404."""

    def handle(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
        response = handler(request, exc)
        if response.status_code != 404 or not _wants_html(request):
            return response
        body = (
            '<h1>Not found</h1><p class="problem">There is nothing at '
            f"<code>{html.escape(request.url.path)}</code>: the game or tournament may have "
            'expired, or the address is mistyped.</p><p><a href="/">Games and tournaments</a>'
            ' · <a href="/docs">the API</a></p>'
        )
        return _page("Not found", "not-found", body=body, status=404)

    return handle


def _compact_replay(game: Any, decisions: list[bytes]) -> tuple[tuple[str, bytes], int]:
    """A finished game's compact replay, encoded, and its ETag (its chain), from its record."""
    check_over(game)
    record = _plain(game.record(decisions))
    start, steps, report = compact_steps(walk, game, decisions)
    doc = game.doc
    compact = {
        **{"id": doc.id, "ruleset": doc.ruleset, "verified": report.ok},
        **{"problems": report.problems, "start": start, "steps": steps},
    }
    answer = _ENCODER.encode(replay_deltas(compact, record, doc.tournament or None))
    return (f'"{record["chain"]}"', answer), len(answer)


async def compact_replay(games: Any, game_id: str) -> tuple[str, bytes]:
    """A finished game's compact replay (its ETag and JSON) as getReplay reads it (refused
    while sealed, or before the end), computed once per process in a worker thread (a second
    or two for a 64-seat game: the event loop goes on answering meanwhile)."""
    answers = games.answers
    kept = answers.kept(("compact", game_id))
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    game = await games.current(game_id, reading=True)
    await games.check_unsealed(game)
    decisions = await games.store.decisions(game_id)
    found: tuple[str, bytes] = await answers.get(
        ("compact", game_id), lambda: _compact_replay(game, decisions)
    )
    return found


#: a finished game of at least this many seats has its compact replay computed as its end is
#: committed (smaller ones take a few milliseconds on their first visit)
WARM_SEATS = 8


def warm_replays(games: Any) -> None:
    """Have ``games`` compute a large game's compact replay as soon as this process commits
    its end, in the background, so that its page's very first visitor waits for nothing. A
    tournament's table still sealed by the others of its round is refused then, and left to
    its first visit."""
    tasks: set[asyncio.Task[Any]] = set()

    async def warm(game_id: str) -> None:
        with contextlib.suppress(Exception):  # (its first visit computes it, or says why not)
            await compact_replay(games, game_id)

    def finished(game: Any) -> None:
        if len(game.doc.seats) >= WARM_SEATS:
            task = asyncio.get_running_loop().create_task(warm(game.doc.id))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    games.on_finished.append(finished)


def _plain(value: Any) -> Any:
    """``value`` as plain JSON values (a dict of them already is: not copied again)."""
    return value if isinstance(value, dict) else msgspec.json.decode(msgspec.json.encode(value))


async def _preloads(state: State, game_id: str) -> str:
    """What a game's page will fetch, asked for at once: its ruleset's module and, once the
    game is over, its compact replay (fetched alongside the scripts, not after them)."""
    games = services_of(state).games
    game = await games.current(game_id, reading=True)
    doc = game.doc
    links = [f'<link rel="modulepreload" href="/rulesets/{html.escape(doc.ruleset)}/page.js">\n']
    if doc.status == "finished" and not await games.sealed(game):
        links.append(
            f'<link rel="preload" href="/games/{game_id}/replay.json" as="fetch" '
            'crossorigin="anonymous">\n'
        )
    return "".join(links)


class PageController(Controller):
    """The pages a person watches: the listing, a game, its report, a tournament."""

    include_in_schema = False

    @get("/", name="page-index")
    async def index(self) -> Response[str]:
        return _page("Games and tournaments", "index")

    @get("/featured.json", name="page-featured")
    async def featured_json(self, state: State) -> Response[Any]:
        """The home page's featured live game, and why it is (``featured``)."""
        answer = await featured(services_of(state))
        return Response(answer, headers={**_HEADERS, "cache-control": "no-store"})

    @get("/games/{game_id:str}", name="page-game")
    async def game(self, state: State, game_id: GameId) -> Response[str]:
        check_id(game_id)
        preload = await _preloads(state, game_id)  # the game is read: else, not found
        return _page(f"Game {game_id}", "game", game_id, preload=preload)

    @get("/embed/games/{game_id:str}", name="page-embed")
    async def embed(self, state: State, game_id: GameId) -> Response[str]:
        """A game's board alone, live or replayed, for an iframe on any site."""
        check_id(game_id)
        preload = await _preloads(state, game_id)
        return _page(f"Game {game_id}", "embed", game_id, headers=_EMBED_HEADERS, preload=preload)

    @get("/games/{game_id:str}/view.json", name="page-live-view")
    async def live_view(
        self,
        state: State,
        game_id: GameId,
        since: Annotated[str | None, Parameter(max_length=64)] = None,
    ) -> Response[Any]:
        """The public view (getGame's, sealed while it is) as a live page follows it: whole,
        or what changed since the version the page holds (``LiveViews``)."""
        check_id(game_id)
        view = await services_of(state).games.view(game_id)
        answer = _LIVE.answer(game_id, view, since)
        return Response(answer, headers={**_HEADERS, "cache-control": "no-store"})

    @get("/games/{game_id:str}/replay.json", name="page-replay-deltas")
    async def replay_json(
        self, state: State, request: Request[Any, Any, Any], game_id: GameId
    ) -> Response[Any]:
        """A finished game's replay as patches (``replay_deltas``), cached and immutable."""
        check_id(game_id)
        tag, body = await compact_replay(services_of(state).games, game_id)
        if held(request, tag):
            return not_modified(tag)
        headers = {"etag": tag, "cache-control": IMMUTABLE}
        return Response(body, media_type="application/json", headers=headers)

    @get("/games/{game_id:str}/play", name="page-play")
    async def play(self, state: State, game_id: GameId) -> Response[str]:
        """A seat played by a person: the token stays in the browser (sessionStorage, or the
        address's fragment, which is never sent), so this shell is the same for everyone."""
        check_id(game_id)
        preload = await _preloads(state, game_id)  # the game is read: else, not found
        return _page(f"Play game {game_id}", "play", game_id, preload=preload)

    @get("/games/{game_id:str}/report", name="page-report")
    async def report(self, state: State, game_id: GameId) -> Response[str]:
        check_id(game_id)
        report = await services_of(state).games.report(game_id)
        return _page(f"Report of game {game_id}", "report", game_id, report_html(report))

    @get("/games/{game_id:str}/report.txt", name="page-report-text")
    async def report_txt(self, state: State, game_id: GameId) -> Response[str]:
        check_id(game_id)
        report = await services_of(state).games.report(game_id)
        return Response(report_text(report), media_type="text/plain", headers=_HEADERS)

    @get("/rulesets/{ruleset_id:str}/page.js", name="page-ruleset-script")
    async def ruleset_script(
        self, ruleset_id: Annotated[str, Parameter(max_length=64)]
    ) -> Response[bytes]:
        """A ruleset's part of the pages (its package's ``page.js``: the board a spectator
        sees, what a seat clicks), which ``spectator.js`` and ``play.js`` import by name."""
        return Response(_script(ruleset_id), media_type="text/javascript", headers=_HEADERS)

    @get("/rulesets/{ruleset_id:str}/rules", name="page-ruleset-rules")
    async def ruleset_rules(
        self, ruleset_id: Annotated[str, Parameter(max_length=64)]
    ) -> Response[str]:
        """A ruleset's rules help, from its package (``rules_help``)."""
        ruleset = RULESETS.get(ruleset_id)
        if ruleset is None:
            raise Refusal(
                "ruleset-not-found", f"there is no ruleset {ruleset_id!r}", field="ruleset_id"
            )
        title = getattr(ruleset, "title", ruleset_id)
        return _page(f"Rules of {title}", "rules", ruleset_id, rules_html(ruleset_id))

    @get("/tournaments/{tournament_id:str}", name="page-tournament")
    async def tournament(self, state: State, tournament_id: TournamentId) -> Response[str]:
        check_id(tournament_id, "tournament")
        _, doc = await services_of(state).tournaments.load(tournament_id)  # else: not found
        # its round count, which the view does not state: the page says "round 2 of 5"
        rounds = str(total_rounds(doc.spec))
        return _page(f"Tournament {tournament_id}", "tournament", tournament_id, rounds=rounds)


PAGES = [PageController, tournament_events]


@cache
def _script(ruleset_id: str) -> bytes:
    """A ruleset's page module as served, read once: a ruleset names it as ``page_script``;
    one that has none is drawn plainly (``static/plain.js``)."""
    if ruleset_id not in RULESETS:
        raise Refusal(
            "ruleset-not-found", f"there is no ruleset {ruleset_id!r}", field="ruleset_id"
        )
    script = getattr(RULESETS[ruleset_id], "page_script", None)
    return Path(script or _FILES / "plain.js").read_bytes()


@cache
def rules_html(ruleset_id: str) -> str:
    """A ruleset's rules help as HTML: its package's ``rules_help`` (Markdown, rendered
    without raw HTML), or a line saying it has none."""
    ruleset = RULESETS[ruleset_id]
    title = html.escape(getattr(ruleset, "title", ruleset_id))
    source = getattr(ruleset, "rules_help", None)
    if source is None:
        text = f"<p>The package of <code>{html.escape(ruleset_id)}</code> has no rules help.</p>"
    else:
        text = _MARKDOWN.render(Path(source).read_text(encoding="utf-8"))
    return f'<article class="rules"><p class="meta">{title}</p>{text}</article>'


_MARKDOWN = MarkdownIt("commonmark", {"html": False})


# -- the turn report ---------------------------------------------------------------------------


def _name(report: dict[str, Any], seat: int) -> str:
    return report["seats"][seat] or f"seat {seat}"


class _PlainReport:
    """A round of the report of a ruleset that has no renderer of its own (``report``): its
    number, and each seat's figures as the view shows them."""

    def title(self, entry: dict[str, Any]) -> str:
        number = next((v for k, v in entry.items() if isinstance(v, int)), None)
        return "Round" if number is None else f"Round {number + 1}"

    def rolls(self, entry: dict[str, Any]) -> list[tuple[int, list[int]]]:
        return []

    def seat_lines(self, seat: dict[str, Any]) -> list[str]:
        return [f"    {key:<9} {value}" for key, value in seat.items() if key != "seat"]

    def seat_cells(self, seat: dict[str, Any], dice_html: Any) -> str:
        return f"<td>{'<br>'.join(html.escape(x.strip()) for x in self.seat_lines(seat))}</td>"


def _renderer(report: dict[str, Any]) -> Any:
    ruleset = RULESETS.get(report["ruleset"])
    return getattr(ruleset, "report", None) or _PlainReport()


def report_text(report: dict[str, Any]) -> str:
    """The turn report as plain text, one block per round that is over."""
    ruleset, renderer = report["ruleset"], _renderer(report)
    lines = [f"Game {report['id']} ({ruleset}), {report['status']}", ""]
    if not report["rounds"]:
        lines.append("No round is over yet.")
    for entry in report["rounds"]:
        lines.append(renderer.title(entry))
        for number, roll in renderer.rolls(entry):
            lines.append(f"  roll {number}: {' '.join(str(d) for d in roll)}")
        for seat in entry["seats"]:
            lines.append(f"  {_name(report, seat['seat'])}")
            lines += renderer.seat_lines(seat)
        lines.append("")
    return "\n".join(lines)


def _dice_html(dice: list[int]) -> str:
    return "".join(
        f'<span class="die" role="img" aria-label="{d}">{_FACES[d - 1]}</span>' for d in dice
    )


def report_html(report: dict[str, Any]) -> str:
    """The turn report as a page: per round that is over, what was dealt and every seat."""
    ruleset = report["ruleset"]
    gid = html.escape(report["id"])
    parts = [
        f'<h1>Turn report</h1><p>Game <a href="/games/{gid}">{gid}</a> ({html.escape(ruleset)}),'
        f' {html.escape(report["status"])}. <a href="/games/{gid}/report.txt">Plain text</a></p>'
    ]
    if not report["rounds"]:
        parts.append("<p>No round is over yet.</p>")
    renderer = _renderer(report)
    for entry in report["rounds"]:
        parts.append(f'<section class="report"><h2>{html.escape(renderer.title(entry))}</h2>')
        for number, roll in renderer.rolls(entry):
            parts.append(f'<p class="roll">Roll {number}: {_dice_html(roll)}</p>')
        parts.append('<table class="report-seats"><tbody>')
        for seat in entry["seats"]:
            name = html.escape(_name(report, seat["seat"]))
            parts.append(
                f'<tr><th scope="row">{name}</th>{renderer.seat_cells(seat, _dice_html)}</tr>'
            )
        parts.append("</tbody></table></section>")
    return "\n".join(parts)
