"""The league's pages, drawn on the server (no script): a ruleset's leaderboard and a bot's
page with its rating history as an inline SVG chart (nothing is fetched from elsewhere)."""

from __future__ import annotations

import html
import time
from typing import Annotated, Any
from urllib.parse import quote

from litestar import Controller, Request, Response, get
from litestar.datastructures import State
from litestar.params import Parameter

from ..games import RULESETS
from .league_routes import BY_VIEWER, viewer
from .params import services_of

__all__ = ["LEAGUE_PAGES", "LeaguePages", "rating_chart"]

_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'self'"
)
_HEADERS = {"content-security-policy": _POLICY, "referrer-policy": "no-referrer"}
_e = html.escape


def _shell(title: str, body: str) -> Response[str]:
    document = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)} · referee</title>
<link rel="stylesheet" href="/static/spectator.css">
<link rel="icon" href="/static/icon.svg" type="image/svg+xml">
</head>
<body>
<header class="top"><a href="/" class="home">referee</a>
<span class="where">{_e(title)}</span><a href="/docs" class="docs">API</a></header>
<main id="app" class="league">
{body}
</main>
</body>
</html>
"""
    return Response(document, media_type="text/html", headers=_HEADERS)


def _bot_link(name: str) -> str:
    return f'<a href="/league/bots/{quote(name, safe="")}">{_e(name)}</a>'


def rating_chart(
    points: list[tuple[float, float, float]], width: int = 640, height: int = 200
) -> str:
    """The rating after each game as an SVG chart: mu as a line, mu ± sigma as a band and
    mu - 3 sigma (what ranks) dashed."""
    if not points:
        return "<p>No rated games yet.</p>"
    pad = 30
    lows = [mu - 3 * sigma for _, mu, sigma in points]
    highs = [mu + sigma for _, mu, sigma in points]
    low, high = min(lows), max(highs)
    span = (high - low) or 1.0
    count = max(len(points) - 1, 1)

    def x(i: int) -> float:
        return pad + (width - 2 * pad) * i / count

    def y(value: float) -> float:
        return height - pad - (height - 2 * pad) * (value - low) / span

    mu_line = " ".join(f"{x(i):.1f},{y(mu):.1f}" for i, (_, mu, _) in enumerate(points))
    floor = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(lows))
    upper = [f"{x(i):.1f},{y(mu + s):.1f}" for i, (_, mu, s) in enumerate(points)]
    lower = [f"{x(i):.1f},{y(mu - s):.1f}" for i, (_, mu, s) in enumerate(points)]
    band = " ".join(upper + lower[::-1])
    last = points[-1]
    return f"""<svg xmlns="http://www.w3.org/2000/svg" class="rating-chart" width="{width}"
 height="{height}" viewBox="0 0 {width} {height}" role="img"
 aria-label="rating after each of {len(points)} games: now mu {last[1]:.2f}, sigma {last[2]:.2f}">
<rect x="0" y="0" width="{width}" height="{height}" fill="none" stroke="#ccc"/>
<polygon points="{band}" fill="#9ecae1" fill-opacity="0.4"/>
<polyline points="{floor}" fill="none" stroke="#d62728" stroke-dasharray="4 3"/>
<polyline points="{mu_line}" fill="none" stroke="#1f77b4" stroke-width="2"/>
<text x="{pad}" y="{pad - 10}" font-size="12">{high:.1f}</text>
<text x="{pad}" y="{height - 8}" font-size="12">{low:.1f}</text>
<text x="{width - pad}" y="{height - 8}" font-size="12" text-anchor="end">{len(points)} games</text>
</svg>"""


def _table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="standings"><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>'


def _webhook_section(hook: dict[str, Any]) -> str:
    """The bot's webhook: its URL, its calls and failures, and the latest calls, each with
    the latency measured (what a paused bot's organizer looks at)."""
    url = _e(hook["url"]) if hook["url"] else "none (removed)"
    rows = [
        [
            time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(c["at"])),
            f"{c['ms']:.1f} ms",
            _e(c["error"]) if c["error"] else "ok",
        ]
        for c in hook["latest_calls"]
    ]
    said = hook.get("info") or {}
    info = (
        "<p>It says it is: " + ", ".join(f"{_e(k)} {_e(v)}" for k, v in said.items()) + "</p>"
        if said
        else ""
    )
    return (
        f"<h2>Webhook</h2><p>{url}: {hook['calls']} calls, {hook['failures']} failed, "
        f"{hook['failures_in_a_row']} in a row</p>"
        + info
        + _table(["at (UTC)", "latency", "outcome"], rows)
    )


def _rating_cells(r: dict[str, Any]) -> list[str]:
    return [
        f"{r['conservative']:.2f}" + (" (provisional)" if r["provisional"] else ""),
        f"{r['mu']:.2f}",
        f"{r['sigma']:.2f}",
        str(r["games"]),
        f"{r['wins']}/{r['draws']}/{r['losses']}",
    ]


class LeaguePages(Controller):
    include_in_schema = False

    @get("/league", name="page-league")
    async def league(self) -> Response[str]:
        links = "".join(
            f'<li><a href="/league/{quote(r, safe="")}">{_e(r)}</a></li>' for r in RULESETS
        )
        return _shell("League", f"<h1>Leaderboards</h1><ul>{links}</ul>")

    @get("/league/{ruleset:str}", name="page-leaderboard")
    async def leaderboard(
        self,
        state: State,
        ruleset: Annotated[str, Parameter(max_length=64)],
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
    ) -> Response[str]:
        page = await services_of(state).league.leaderboard(ruleset, offset, 100)
        rows = [[str(b["rank"]), _bot_link(b["name"]), *_rating_cells(b)] for b in page["bots"]]
        table = _table(["#", "bot", "μ − 3σ", "μ", "σ", "games", "W/D/L"], rows)
        more = ""
        if page["next_offset"] is not None:
            more = f'<p><a href="?offset={page["next_offset"]}">next</a></p>'
        body = f"<h1>{_e(ruleset)}: {page['total']} bots</h1>{table}{more}"
        return _shell(f"Leaderboard {ruleset}", body)

    @get("/league/bots/{name:str}", name="page-bot")
    async def bot(
        self,
        request: Request[Any, Any, Any],
        state: State,
        name: Annotated[str, Parameter(max_length=256)],
    ) -> Response[str]:
        league = services_of(state).league
        # the webhook's calls for the bot's organizer alone, as the API's profile
        profile = await league.profile(name, *viewer(request))
        parts = [
            f"<h1>{_e(profile['name'])}</h1>",
            f"<p>{_e(profile['description'])}</p>",
            f"<p>status: {_e(profile['status'])}"
            + (", in the arena" if profile["in_arena"] else "")
            + "</p>",
        ]
        for rating in profile["ratings"]:
            ruleset = rating["ruleset"]
            parts.append(f'<h2><a href="/league/{quote(ruleset, safe="")}">{_e(ruleset)}</a></h2>')
            parts.append(_table(["μ − 3σ", "μ", "σ", "games", "W/D/L"], [_rating_cells(rating)]))
            parts.append(rating_chart(await league.history(name, ruleset)))
        games = "".join(
            f'<li><a href="/games/{g["game_id"]}">{g["game_id"]}</a></li>'
            for g in profile["recent_games"]
        )
        parts.append(f"<h2>Recent games</h2><ul>{games or '<li>none yet</li>'}</ul>")
        if profile["webhook"] is not None:
            parts.append(_webhook_section(profile["webhook"]))
        page = _shell(f"Bot {profile['name']}", "\n".join(parts))
        page.headers.update(BY_VIEWER)
        return page


LEAGUE_PAGES = [LeaguePages]
