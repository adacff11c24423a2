"""The pages on the wire, over a real socket: answers compressed as the client accepts, the
hot routes left as they are, a finished record immutable (ETag, Cache-Control, 304), the
compact replay exactly the frames of getReplay, one not-found page, an embeddable board and
a ruleset's rules help from its package."""

from __future__ import annotations

import copy
import gzip
import json
import random
import threading
import time

import brotli
import httpx
import pytest
from helpers import auth, create, decide_due, play_out, play_tournament, start_tournament

from referee.games import RULESETS


def _patched(view: dict, patch: list[list]) -> dict:
    """``view`` with a compact replay's patch applied, as the pages apply it (written here
    again from the format's description, not from the page's script)."""
    view = copy.deepcopy(view)
    for op in patch:
        path = op[0]
        if not path:
            view = op[1]
            continue
        node = view
        for key in path[:-1]:
            node = node[key]
        if len(op) == 1:
            del node[path[-1]]
        else:
            node[path[-1]] = op[1]
    return view


@pytest.mark.parametrize(
    ("ruleset", "options"),
    [("choice", {"schedule": [2]}), ("choice-specials", {}), ("chopta", {"target": 20})],
)
def test_the_compact_replay_is_every_frame_of_the_replay(http, ruleset, options):
    game = create(http, ruleset, 3, options)
    play_out(http, game, random.Random(7))
    full = http.get(f"/v1/games/{game['id']}/replay").json()
    compact = http.get(f"/games/{game['id']}/replay.json").json()
    record = http.get(f"/v1/games/{game['id']}/record").json()
    assert compact["verified"] is True and len(compact["steps"]) == len(full["frames"]) - 1
    view = compact["start"]
    assert view == full["frames"][0]["view"]
    for step, frame in zip(compact["steps"], full["frames"][1:], strict=True):
        view = _patched(view, step["patch"])
        assert view == frame["view"]
        assert step["decision"] == frame["decision"]
    assert (compact["totals"], compact["ranking"]) == (record["totals"], record["ranking"])
    assert (compact["seed"], compact["chain"]) == (record["seed"], record["chain"])
    assert compact["tournament_id"] is None
    # smaller than the replay it is made from, even for three seats
    assert len(http.get(f"/games/{game['id']}/replay.json").content) < len(
        http.get(f"/v1/games/{game['id']}/replay").content
    )


def test_answers_are_compressed_as_the_client_accepts_and_the_hot_routes_are_not(http):
    game = create(http, "choice", 2, deadline_s=60)
    listing = "/v1/rulesets"  # some kilobytes: more than the least compressed
    plain = http.get(listing, headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    raw = {"accept-encoding": "br"}
    with httpx.Client(base_url=str(http.base_url)) as client:
        for encoding, undo in (("br", brotli.decompress), ("gzip", gzip.decompress)):
            with client.stream("GET", listing, headers={"accept-encoding": encoding}) as answer:
                body = b"".join(answer.iter_raw())
                assert answer.headers["content-encoding"] == encoding
                assert "accept-encoding" in answer.headers["vary"].lower()
            assert undo(body) == plain.content
        # a seat's turn and its move are answered as they always were, uncompressed
        token = game["seats"][0]["token"]
        turn = client.get(
            f"/v1/games/{game['id']}/turn", headers={**auth(token), **raw, "accept-encoding": "br"}
        )
        assert turn.status_code == 200 and "content-encoding" not in turn.headers
        move = {"seq": turn.json()["seq"], "move": turn.json()["legal_moves"][0]}
        posted = client.post(
            f"/v1/games/{game['id']}/moves", json=move, headers={**auth(token), **raw}
        )
        assert posted.status_code == 200 and "content-encoding" not in posted.headers


def test_a_finished_record_is_immutable_and_a_running_one_is_not(http):
    running = create(http, "chopta", 2, {"target": 20}, deadline_s=60)
    answer = http.get(f"/v1/games/{running['id']}/record")
    assert "etag" not in answer.headers and "cache-control" not in answer.headers
    game = create(http, "chopta", 2, {"target": 20})
    final = play_out(http, game, random.Random(2))
    answer = http.get(f"/v1/games/{game['id']}/record")
    assert answer.headers["etag"] == f'"{final["chain"]}"'
    assert "immutable" in answer.headers["cache-control"]
    again = http.get(
        f"/v1/games/{game['id']}/record", headers={"if-none-match": answer.headers["etag"]}
    )
    assert again.status_code == 304 and again.content == b""
    other = http.get(f"/v1/games/{game['id']}/record", headers={"if-none-match": '"other"'})
    assert other.status_code == 200 and other.json() == answer.json()
    replay = http.get(f"/v1/games/{game['id']}/replay")
    assert replay.headers["etag"] == answer.headers["etag"]
    assert "immutable" in replay.headers["cache-control"]
    held = {"if-none-match": replay.headers["etag"]}
    assert http.get(f"/v1/games/{game['id']}/replay", headers=held).status_code == 304
    replay = http.get(f"/v1/games/{game['id']}/replay")
    assert replay.headers["etag"] == answer.headers["etag"]
    assert "immutable" in replay.headers["cache-control"]
    held = {"if-none-match": replay.headers["etag"]}
    assert http.get(f"/v1/games/{game['id']}/replay", headers=held).status_code == 304
    compact = http.get(f"/games/{game['id']}/replay.json")
    assert compact.headers["etag"] == answer.headers["etag"]
    assert "immutable" in compact.headers["cache-control"]
    held = {"if-none-match": compact.headers["etag"]}
    assert http.get(f"/games/{game['id']}/replay.json", headers=held).status_code == 304


def test_a_running_game_has_no_compact_replay(http):
    game = create(http, "chopta", 2, {"target": 20}, deadline_s=60)
    answer = http.get(f"/games/{game['id']}/replay.json")
    assert answer.status_code == 409 and answer.json()["code"] == "game-not-over"


@pytest.mark.parametrize(
    "path",
    [
        "/games/0123456789abcdef",
        "/games/0123456789abcdef/play",
        "/games/0123456789abcdef/report",
        "/embed/games/0123456789abcdef",
        "/games/not-an-id",
        "/tournaments/0123456789abcdef",
        "/nowhere",
    ],
)
def test_not_found_is_one_page_for_a_browser_and_a_problem_for_anyone_else(http, path):
    page = http.get(path, headers={"accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in page.text
    problem = http.get(path, headers={"accept": "application/json"})
    assert problem.status_code == 404
    assert problem.headers["content-type"] == "application/problem+json"
    assert problem.json()["status"] == 404
    # the API's own paths answer problems even to a browser
    api = http.get("/v1/games/0123456789abcdef", headers={"accept": "text/html"})
    assert api.status_code == 404 and api.headers["content-type"] == "application/problem+json"


def test_an_embedded_board_may_be_framed_anywhere_and_a_page_only_at_home(http):
    game = create(http, "chopta", 2, {"target": 20}, deadline_s=60)
    embed = http.get(f"/embed/games/{game['id']}")
    assert embed.status_code == 200 and 'data-page="embed"' in embed.text
    assert "frame-ancestors *" in embed.headers["content-security-policy"]
    assert "x-frame-options" not in embed.headers
    page = http.get(f"/games/{game['id']}")
    assert "frame-ancestors 'self'" in page.headers["content-security-policy"]


@pytest.mark.parametrize("ruleset_id", sorted(RULESETS))
def test_every_ruleset_has_a_rules_page_from_its_package(http, ruleset_id):
    page = http.get(f"/rulesets/{ruleset_id}/rules")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'class="rules"' in page.text
    helped = getattr(RULESETS[ruleset_id], "rules_help", None)
    if helped is not None:  # its package's own text, rendered (no raw HTML passes)
        first = next(line for line in helped.read_text().splitlines() if line.startswith("#"))
        assert first.lstrip("# ") in page.text
    assert http.get("/rulesets/no-such-ruleset/rules").status_code == 404


def test_a_live_view_is_followed_as_patches_from_the_version_a_page_holds(http):
    game = create(http, "choice", 3, deadline_s=60)
    first = http.get(f"/games/{game['id']}/view.json").json()
    assert first["view"] == http.get(f"/v1/games/{game['id']}").json()
    unchanged = http.get(f"/games/{game['id']}/view.json?since={first['version']}").json()
    assert unchanged == {"version": first["version"], "since": first["version"], "patch": []}
    rnd = random.Random(3)
    due = http.get(f"/v1/games/{game['id']}").json()["to_decide"]
    list(decide_due(http, http, game, due[:2], rnd))
    moved = http.get(f"/games/{game['id']}/view.json?since={first['version']}").json()
    now = http.get(f"/v1/games/{game['id']}").json()
    assert moved["version"] != first["version"] and "view" not in moved
    assert _patched(first["view"], moved["patch"]) == now
    assert len(str(moved["patch"])) < len(str(now)) / 4  # a few seats' marks, not the view
    # a version the referee does not keep: the whole view
    other = http.get(f"/games/{game['id']}/view.json?since=0123456789abcdef01234567").json()
    assert other["view"] == now and other["version"] == moved["version"]


def test_the_process_answers_while_a_large_report_is_computed_and_keeps_it(http):
    """A 64-seat game's turn report replays all its frames (seconds): in a worker thread, so
    that the event loop answers everyone else meanwhile, and once per process."""
    game = create(http, "choice", 64)
    play_out(http, game, random.Random(38))
    report: dict[str, httpx.Response] = {}
    asking = threading.Thread(
        target=lambda: report.update(first=http.get(f"/games/{game['id']}/report", timeout=60))
    )
    asking.start()
    answered_meanwhile = []
    with httpx.Client(base_url=str(http.base_url), timeout=5) as other:
        while asking.is_alive():
            started = time.monotonic()
            assert other.get("/healthz").status_code == 200
            if asking.is_alive():
                answered_meanwhile.append(time.monotonic() - started)
            time.sleep(0.02)
    asking.join()
    assert report["first"].status_code == 200 and "Turn report" in report["first"].text
    # the report took long enough to be asked about meanwhile, and nobody waited for all of it
    assert answered_meanwhile and max(answered_meanwhile) < 1.5, answered_meanwhile
    again = http.get(f"/games/{game['id']}/report")
    assert again.text == report["first"].text
    replay = http.get(f"/v1/games/{game['id']}/replay")
    assert replay.status_code == 200 and len(replay.json()["frames"]) > 64
    assert http.get(f"/v1/games/{game['id']}/replay").content == replay.content


def test_a_tournament_page_stream_starts_with_its_view_uncompressed_and_ends_with_it(http):
    assert http.get("/tournaments/0123456789abcdef/events").status_code == 404
    spec = {"ruleset": "chopta", "format": "round-robin", "entrants": 2, "deadline_s": 0}
    tournament_id, tokens = start_tournament(http, {**spec, "options": {"target": 8}})
    url = f"/tournaments/{tournament_id}/events"
    headers = {"accept-encoding": "gzip, br"}
    with http.stream("GET", url, headers=headers) as answer:
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in answer.headers
        lines = answer.iter_lines()
        assert next(lines) == "event: tournament"
        first = json.loads(next(lines).removeprefix("data: "))["view"]
    assert first == http.get(f"/v1/tournaments/{tournament_id}").json()
    final = play_tournament(http, tournament_id, tokens)
    told = http.get(url, timeout=10).text  # over: its view whole, and the end
    assert told.count("event: ") == 1
    assert json.loads(told.split("data: ", 1)[1].splitlines()[0])["view"] == final


def test_no_answer_is_sniffed_and_the_docs_are_framed_by_no_other_site(http):
    """``nosniff`` on every answer (hot routes', Litestar's, pages', files'): no browser runs
    an answer as another type than it says. The docs (Swagger UI, whose inline script leaves
    no script policy) are framed by no site, as a page that can be clicked on unseen."""
    game = create(http, "choice", 2)
    token = game["seats"][0]["token"]
    answers = [
        http.get(f"/v1/games/{game['id']}/turn", headers=auth(token)),  # a hot route
        http.get(f"/v1/games/{game['id']}"),
        http.get(f"/games/{game['id']}"),
        http.get("/healthz"),
        http.get("/v1/nothing-here"),
    ]
    for answer in answers:
        assert answer.headers["x-content-type-options"] == "nosniff", answer.url
    for path in ("/docs", "/docs/openapi.json", "/docs/assets/swagger-ui-bundle.js"):
        answer = http.get(path)
        assert answer.status_code == 200, path
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["content-security-policy"] == "frame-ancestors 'none'"
