"""The spectator pages in a real browser: Debian's chromium driven by Playwright (its own
browser download is not reachable, so ``executable_path``). Skipped, with the reason, where
chromium is not installed (CI installs it). Each page is photographed into
``test-output/screenshots/`` (or ``$REFEREE_SCREENSHOTS``) for a reviewer to look at, and
every request a page makes must stay on the referee's origin. One browser serves every test
of this module.

Every page is also checked at 360 and 1280 px wide: nothing wider than the window, each
board's sheet inside its card, tap targets of 44 px, and axe-core (openapi/node_modules,
injected into the page) finding nothing serious or critical, in the light theme and the
dark one."""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from pathlib import Path

import httpx
import pytest
from helpers import auth, create, decide_due, play_out, play_tournament, start_tournament

from referee.games import RULESETS
from referee.web.featured import leader_gap

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

CHROMIUM = os.environ.get("REFEREE_CHROMIUM") or next(
    filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium here: apt-get install -y chromium (CI installs it)"
)
SHOTS = Path(os.environ.get("REFEREE_SCREENSHOTS", "test-output/screenshots"))
AXE = Path(__file__).parents[2] / "openapi" / "node_modules" / "axe-core" / "axe.min.js"
FLAGS = [
    "--no-sandbox",  # CI runs the suite as root, where chromium's sandbox will not start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, server):
    """A fresh page; after the test, no request it made left the referee's origin and no
    script error happened."""
    yield from _watched_page(browser, server.url)


@pytest.fixture
def liars_page(browser, liars_referee):
    """The same, on the referee that has Liar's dice installed (``liars_referee``)."""
    yield from _watched_page(browser, liars_referee.url)


def _watched_page(browser, origin: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    requests: list[str] = []
    errors: list[str] = []
    opened.on("request", lambda request: requests.append(request.url))
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("console", lambda m: m.type == "error" and errors.append(m.text))
    yield opened
    context.close()
    elsewhere = [u for u in requests if not u.startswith(origin + "/")]
    assert requests and not elsewhere, elsewhere
    assert not errors, errors


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


def totals_shown(page) -> list[int]:
    # (text, not the rendered text: a board off screen is laid out when it shows)
    return [int(t) for t in page.locator(".seat-total").all_text_contents()]


def totals_of(view: dict) -> list[int]:
    if view["ruleset"] == "chopta":
        return [s["total"] for s in view["seats"]]
    return [s["score"]["total"] for s in view["seats"]]


def drawn_of(view: dict) -> int:
    """What the page draws of the view: a CHOICE sheet's marked boxes (ten a sum, the end's
    count a fifth die), a CHOPTA play area's dice."""
    if view["ruleset"] == "chopta":
        return sum(len(s["area"]) for s in view["seats"])
    return sum(
        sum(min(n, 10) for n in s["marks"].values())
        + sum(min(f["marks"], view["end_marks"]) for f in s["fifth_dice"])
        for s in view["seats"]
    )


@pytest.mark.parametrize(
    ("ruleset", "options", "drawn"),
    [
        ("choice", {}, ".box.marked"),
        # postal: a batch's decisions are shown once every seat has made them all
        ("choice-specials", {"schedule": [2]}, ".box.marked"),
        ("chopta", {"target": 40}, ".arranged .die"),
    ],
)
def test_a_live_game_page_follows_the_moves_without_a_reload(
    page, server, http, ruleset, options, drawn
):
    game = create(http, ruleset, 2, options, deadline_s=60)
    page.goto(f"{server.url}/games/{game['id']}")
    page.wait_for_selector("[data-seat]")
    page.evaluate("window.stillTheSamePage = true")
    assert page.locator(drawn).count() == 0
    rnd = random.Random(1)
    counts = []
    for _ in range(6):
        due = http.get(f"/v1/games/{game['id']}").json()["to_decide"]
        list(decide_due(http, http, game, due, rnd))  # every seat due decides once
        view = http.get(f"/v1/games/{game['id']}").json()
        counts.append(drawn_of(view))
        page.wait_for_function(
            "([selector, count, totals]) => document.querySelectorAll(selector).length === count"
            " && [...document.querySelectorAll('.seat-total')]"
            ".map((t) => Number(t.textContent)).join() === totals.join()",
            arg=[drawn, counts[-1], totals_of(view)],
        )
    assert counts[-1] > 0 and len(set(counts)) >= 3, counts  # the page moved, more than once
    assert page.evaluate("window.stillTheSamePage") is True
    assert page.locator(".feed li").count() > 0
    # the deciding seats' deadlines count down
    assert page.locator(".deadline").first.inner_text().endswith(" s left")
    shot(page, f"game-live-{ruleset}")


@pytest.mark.parametrize(
    ("ruleset", "options"),
    [("choice", {}), ("choice-specials", {}), ("chopta", {"target": 20})],
)
def test_a_replay_steps_from_the_start_to_the_final_totals(page, server, http, ruleset, options):
    game = create(http, ruleset, 2, options)
    final = play_out(http, game, random.Random(4))
    page.goto(f"{server.url}/games/{game['id']}")
    page.wait_for_selector("[data-verified=true]")
    page.wait_for_function(
        "() => document.querySelector('[data-check=page]').textContent.includes('commitment')"
    )
    assert "✓" in page.locator("[data-check=page]").inner_text()
    assert totals_shown(page) == totals_of(final)
    page.get_by_role("button", name="First step").click()
    assert set(totals_shown(page)) == {0}
    assert "step 0 of" in page.locator(".step").inner_text()
    shot(page, f"replay-start-{ruleset}")
    page.keyboard.press("ArrowRight")
    assert "step 1 of" in page.locator(".step").inner_text()
    page.get_by_role("button", name="Last step").click()
    assert totals_shown(page) == totals_of(final)
    shot(page, f"replay-end-{ruleset}")


def test_a_tournament_page_shows_the_standings_of_the_api_as_they_change(page, server, http):
    spec = {"ruleset": "chopta", "format": "round-robin", "entrants": 4, "deadline_s": 0}
    tournament_id, tokens = start_tournament(http, {**spec, "options": {"target": 8}})
    asked: list[str] = []  # what the page asks of the tournament once it is drawn
    page.goto(f"{server.url}/tournaments/{tournament_id}")
    page.wait_for_selector(".standings tbody tr")
    page.wait_for_selector(".rounds details summary")
    assert page.locator("#app").get_attribute("data-follow") == "events"  # not polling
    page.on("request", lambda r: asked.append(r.url) if tournament_id in r.url else None)
    assert "round 1 of 3" in page.locator(".meta").inner_text()  # 4 entrants: 3 rounds
    assert "revealed when the tournament is over" in page.locator(".verify").inner_text()
    page.evaluate("window.stillTheSamePage = true")
    # what the reader holds is kept through the updates: the first row, the focused link
    page.evaluate("window.firstRow = document.querySelector('.standings tbody tr')")
    page.locator(".rounds li a").first.focus()
    focused = page.evaluate("document.activeElement.textContent")
    # the first round is played out: the page shows the second without being asked
    rnd = random.Random(38)
    for _ in range(2000):
        if len(http.get(f"/v1/tournaments/{tournament_id}").json()["rounds"]) > 1:
            break
        for token in tokens:
            step = http.get("/v1/me/next", headers=auth(token)).json()
            if step["status"] == "your_turn":
                turn = step["turn"]
                move = {"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])}
                game_url = f"/v1/games/{step['game_id']}/moves"
                assert http.post(game_url, headers=auth(step["seat_token"]), json=move).is_success
    page.wait_for_function(
        "() => document.querySelector('.meta').textContent.includes('round 2 of 3')"
    )
    assert page.evaluate("document.activeElement.textContent") == focused
    assert page.locator(".rounds details").count() == 2
    # the first round, where the reader is, stays open; the reader opens the second one again
    # after closing it: as the third begins, it is not closed for them
    assert page.locator(".rounds details").first.get_attribute("open") is not None
    second = page.locator(".rounds details").nth(1)
    second.locator("summary").click()
    second.locator("summary").click()
    assert second.get_attribute("open") is not None
    page.locator(".rounds li a").first.focus()
    final = play_tournament(http, tournament_id, tokens)
    page.wait_for_selector("h1 .status.finished", timeout=15_000)
    assert page.evaluate("window.stillTheSamePage") is True
    assert page.evaluate("document.contains(window.firstRow)") is True
    assert page.evaluate("document.activeElement.textContent") == focused
    assert page.locator(".rounds details").first.get_attribute("open") is not None
    assert second.get_attribute("open") is not None
    assert page.locator(".rounds details").nth(2).get_attribute("open") is not None
    # followed through its stream alone: the page never asked for the tournament again
    assert asked == [], asked
    assert "3 rounds played" in page.locator(".meta").inner_text()
    assert final["commitment"] in page.locator(".verify .commitment").inner_text()
    assert final["seed"] in page.locator(".verify .seed").inner_text()
    page.wait_for_function(
        "() => document.querySelector('[data-check=tournament]').textContent.includes('✓')"
    )
    rows = page.locator(".standings tbody tr")
    shown = [
        (r.locator("th").inner_text(), float(r.locator(".rating").inner_text())) for r in rows.all()
    ]
    assert shown == [(s["name"], s["rating"]) for s in final["standings"]]
    assert page.locator(".chart polyline").count() == 4
    assert page.locator(".rounds li a").count() == sum(len(r) for r in final["rounds"])
    assert page.locator(".standings .change").count() == 4  # each rating's last change
    shot(page, "tournament")
    # a game of the tournament links back to it
    page.locator(".rounds li a").first.click()
    page.wait_for_selector("[data-verified=true]")
    assert page.get_by_role("link", name="its tournament").get_attribute("href") == (
        f"/tournaments/{tournament_id}"
    )


def test_the_listing_and_the_turn_report_pages(page, server, http):
    game = create(http, "choice", 2, {"schedule": [2]})
    play_out(http, game, random.Random(6))
    page.goto(f"{server.url}/")
    page.wait_for_selector(f"a[href='/games/{game['id']}']")
    shot(page, "index")
    page.click(f"a[href='/games/{game['id']}']")
    page.wait_for_selector("[data-verified=true]")
    page.click("text=turn report")
    page.wait_for_selector("section.report")
    assert page.locator("section.report").count() >= 1
    assert page.locator(".die[aria-label]").count() > 0  # every die says its value
    shot(page, "report")


def test_a_game_page_reads_on_a_phone(browser, server, http):
    game = create(http, "choice-specials", 3, {"schedule": [2]})
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    phone = context.new_page()
    phone.goto(f"{server.url}/games/{game['id']}")
    phone.wait_for_selector("[data-seat]")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone: {width}px"
    shot(phone, "game-phone")
    context.close()


# -- a person at a seat (/games/{id}/play) -----------------------------------------------------


def clicks_for(move: dict, source: str = "roll") -> list[str]:
    """What a person clicks to choose ``move``, worked out here from the move alone (not from
    the page's script): the fifth die (or the card and its dice) first, then each pair."""
    dice = lambda values, at=source: [f"{at}:{d}" for d in values]  # noqa: E731
    kind = move["type"]
    if kind in ("mark", "free_throw"):
        first = move["fifth"] if kind == "mark" else move["set_aside"]
        return dice([first]) + dice(move["pairs"][0]) + dice(move["pairs"][1])
    if kind == "fdh":
        last = move["fifth"] or move["set_aside"]
        return [
            "card:fdh",
            *dice(move["remove"]),
            *dice(move["pair"]),
            *dice([last] if last else []),
        ]
    if kind == "null":
        return [
            "card:null",
            *dice([move["plate"]]),
            *dice(move["pairs"][1]),
            *dice(move["pairs"][0]),
        ]
    if kind == "kur":
        return ["card:kur", *dice([move["fifth"]])]
    if kind in ("minus1", "minus2"):
        return [f"card:{kind}"]
    if kind == "suppen_kasper":
        return [
            "card:suppen_kasper",
            *dice(move["eat"], "plate"),
            *clicks_for(move["round"], "eaten"),
        ]
    if kind == "bid":  # Liar's dice: a face and a quantity; a call is offered as it is
        return [f"face:{move['face']}", f"quantity:{move['quantity']}"]
    if kind == "liar":
        return []
    if kind == "place":
        return [f"pool:{move['die']}"]
    return [f"pool:{move['die']}", f"area{move['opponent']}:{move['take']}"]


def _token_of(page, game_id: str) -> str:
    return page.evaluate(f"sessionStorage.getItem('referee.seat.{game_id}')")


def _play_by_clicks(page, http, game_id: str, rnd: random.Random) -> list[dict]:
    """Play this tab's seat to the end, as a person: each turn, a random legal move (read with
    the tab's own token) is clicked die by die; the page must then offer it as a whole move, and
    the button that plays it is clicked. Returns the moves played."""
    token = _token_of(page, game_id)
    played: list[dict] = []
    for _ in range(300):
        page.wait_for_function(
            "() => /^(Your turn|The game is over)/"
            ".test(document.querySelector('.prompt')?.textContent)"
        )
        if page.locator(".prompt").inner_text().startswith("The game is over"):
            return played
        turn = http.get(f"/v1/games/{game_id}/turn", headers=auth(token)).json()
        assert turn["status"] == "your_turn", turn
        move = rnd.choice(turn["legal_moves"])
        for token_clicked in clicks_for(move):
            page.locator(f"button.pick[data-token='{token_clicked}']:not([disabled])").first.click()
        whole = [
            (json.loads(b.get_attribute("data-move")), b)
            for b in page.locator("button.move.whole").all()
        ]
        offered = [m for m, _ in whole]
        assert move in offered, (move, offered)
        assert len(offered) == 1 or move["type"] == "minus2", offered  # the clicks name one move
        next(b for m, b in whole if m == move).click()
        played.append(move)
        if len(played) == 3:
            shot(page, f"play-{turn['view']['ruleset']}")
        page.wait_for_function("() => !document.querySelector('button.move[disabled]')")
    raise AssertionError("the game did not end")


@pytest.mark.parametrize(
    ("ruleset", "seed"), [("choice", 11), ("choice-specials", 12), ("chopta", 13)]
)
def test_a_person_plays_a_whole_game_against_a_house_bot_by_clicking_dice(
    page, server, http, ruleset, seed
):
    page.goto(f"{server.url}/")
    page.fill("#practice-name", "Ada")
    page.select_option("#practice-ruleset", ruleset)
    page.select_option("#practice-level", "strong")
    page.fill("#practice-deadline", "0")
    page.get_by_role("button", name="Start a game").click()
    page.wait_for_url("**/play")
    game_id = page.url.split("/")[-2]
    played = _play_by_clicks(page, http, game_id, random.Random(seed))
    # the record holds exactly what was clicked, and the page ends on the referee's totals
    record = http.get(f"/v1/games/{game_id}/record").json()
    assert [d["moves"][0] for d in record["decisions"] if d["seat"] == 0] == played
    assert not any(d["timeout"] for d in record["decisions"])
    page.wait_for_selector("[data-verified=true]")
    final = http.get(f"/v1/games/{game_id}").json()
    assert totals_shown(page) == totals_of(final)
    assert page.locator(".prompt").inner_text().startswith("The game is over: Ada ")
    shot(page, f"play-over-{ruleset}")


def test_an_open_seat_is_taken_on_the_game_page_and_its_token_stays_in_the_tab(page, server, http):
    game = create(http, "choice-specials", [{}, {"bot": "greedy"}], deadline_s=60)
    sent: list[tuple[str, str | None]] = []
    page.on("request", lambda r: sent.append((r.url, r.headers.get("authorization"))))
    page.goto(f"{server.url}/games/{game['id']}")
    page.fill("#join-name", "Grace")
    page.get_by_role("button", name="Take a seat and play").click()
    page.wait_for_url(f"**/games/{game['id']}/play")
    page.wait_for_function(
        "() => document.querySelector('.prompt')?.textContent.startsWith('Your turn')"
    )
    token = _token_of(page, game["id"])
    assert token and token.startswith(game["id"] + ".")
    first = page.locator("button.move").first
    move = json.loads(first.get_attribute("data-move"))
    first.click()
    page.wait_for_function(
        "() => document.querySelector('.message')?.textContent.startsWith('Played')"
    )
    record = http.get(f"/v1/games/{game['id']}/record").json()
    assert [d["moves"] for d in record["decisions"] if d["seat"] == 0] == [[move]]
    # the token went out only in Authorization headers, only to the seat's own calls
    assert not [url for url, _ in sent if token in url]
    carried = {url.split("?")[0].rsplit("/", 1)[-1] for url, header in sent if header}
    assert carried <= {"turn", "moves"} and "moves" in carried, carried
    assert all(header == f"Bearer {token}" for _, header in sent if header)
    # the game's page of that tab now offers the seat back, not the form
    page.goto(f"{server.url}/games/{game['id']}")
    page.wait_for_selector(f".your-seat a[href='/games/{game['id']}/play']")
    assert page.locator("form.join").count() == 0


def test_a_seat_token_handed_over_in_the_fragment_is_kept_and_cleared_from_the_address(
    page, server, http
):
    game = create(http, "chopta", [{"name": "Lin"}, {"bot": "random"}], {"target": 20}, 60)
    token = game["seats"][0]["token"]
    page.goto(f"{server.url}/games/{game['id']}/play#token={token}")
    page.wait_for_function(
        "() => document.querySelector('.prompt')?.textContent.startsWith('Your turn')"
    )
    assert page.url == f"{server.url}/games/{game['id']}/play"
    assert page.locator(".pick-row").first.inner_text().startswith("your pool (10")
    page.wait_for_function(  # named, not numbered, once the public view is read
        "() => document.querySelector('.seat-panel h2').textContent.startsWith('You: Lin ')"
    )
    # the keyboard focus stays in the panel as it is drawn again: a die picked, then undone
    in_panel = "() => !!document.activeElement.closest('.seat-panel')"
    page.locator("button.pick").first.focus()
    page.keyboard.press("Enter")
    assert page.evaluate(in_panel)
    prompt = page.locator(".prompt").inner_text()
    assert prompt == "1 move fits your picks." or prompt.endswith(" moves fit your picks.")
    page.get_by_role("button", name="Undo pick").focus()
    page.keyboard.press("Enter")
    assert page.evaluate(in_panel)
    assert page.locator("button.pick.picked").count() == 0


def test_a_token_the_referee_refuses_is_said_so_on_the_play_page(browser, server, http):
    game = create(http, "chopta", [{"name": "Lin"}, {"bot": "random"}], {"target": 20}, 60)
    context = browser.new_context()  # the refused call is logged as a console error: expected
    tab = context.new_page()
    tab.goto(f"{server.url}/games/{game['id']}/play#token={game['id']}.not-its-token")
    tab.wait_for_function(
        "() => document.querySelector('.prompt')?.textContent.includes('refused')"
    )
    assert tab.locator("button.pick").count() == 0
    context.close()


# -- a ruleset installed from outside: Liar's dice, drawn by its own page module --------------


def test_a_liars_dice_replay_shows_the_board_and_the_moves_hidden_dice_until_the_call(
    liars_page, liars_referee
):
    """A finished game of the plug-in, on its game page: the plug-in's ``page.js`` draws it
    (the referee's plain drawing has no bids); the last step shows every die and the call, the
    first none of the dice, and each step tells its move."""
    page = liars_page
    with httpx.Client(base_url=liars_referee.url, timeout=30) as http:
        game = create(http, "liars-dice", 3, {"dice_per_seat": 2})
        final = play_out(http, game, random.Random(5))
        events = http.get(f"/v1/games/{game['id']}/events").text
    assert final["status"] == "finished" and final["call"]
    page.goto(f"{liars_referee.url}/games/{game['id']}")
    page.wait_for_selector("[data-verified=true]")
    board = page.locator(".liars-dice")
    assert board.count() == 1
    # the end: every seat's dice as the referee revealed them, the bids, the call, the totals
    shown = [
        [d.get_attribute("aria-label") for d in page.locator(f".area[data-seat='{s}'] .die").all()]
        for s in range(3)
    ]
    assert shown == [[f"die showing {d}" for d in seat["dice"]] for seat in final["seats"]]
    assert page.locator(".bids li").count() == len(final["bids"])
    call = final["call"]
    assert f"{call['matches']} " in page.locator(".call").inner_text()
    assert totals_shown(page) == [s["total"] for s in final["seats"]]
    shot(page, "replay-end-liars-dice")
    # the start: six hidden dice, no bid; each step forward tells its move as the feed does
    page.get_by_role("button", name="First step").click()
    assert page.locator(".area .die.hidden").count() == 6
    assert page.locator(".area .die:not(.hidden)").count() == 0
    assert page.locator(".bids li").count() == 0 and page.locator(".call").count() == 0
    assert "step 0 of" in page.locator(".step").inner_text()
    first = final["bids"][0]
    page.get_by_role("button", name="Step forward").click()
    assert (
        page.locator(".step")
        .inner_text()
        .endswith(f"bot{first['seat']}: bid {first['quantity']} × {first['face']}")
    )
    assert page.locator(".bids li").count() == 1
    assert page.locator(".area .die.hidden").count() == 6
    shot(page, "replay-start-liars-dice")
    # the move list tells the game's story in the module's words, the call last
    assert "event: played" in events
    moves = page.locator(".moves-of-game a")
    assert moves.count() == len(final["bids"]) + 1
    assert "called the last bid a lie" in moves.last.text_content()


def test_a_person_plays_liars_dice_against_a_house_bot_seeing_only_their_own_dice(
    liars_page, liars_referee
):
    """The practice form lists the plug-in; its play page shows the seat its own dice and
    every other die as hidden until the call; bids are clicked as a face and a quantity."""
    page = liars_page
    page.goto(f"{liars_referee.url}/")
    page.wait_for_selector("#practice-ruleset option[value='liars-dice']", state="attached")
    page.fill("#practice-name", "Ada")
    page.select_option("#practice-ruleset", "liars-dice")
    page.select_option("#practice-level", "greedy")
    page.fill("#practice-deadline", "0")
    page.get_by_role("button", name="Start a game").click()
    page.wait_for_url("**/play")
    game_id = page.url.split("/")[-2]
    page.wait_for_function(
        "() => /^(Your turn|The game is over)/.test(document.querySelector('.prompt')?.textContent)"
    )
    with httpx.Client(base_url=liars_referee.url, timeout=30) as http:
        turn = http.get(f"/v1/games/{game_id}/turn", headers=auth(_token_of(page, game_id)))
        mine = turn.json()["view"]["you"]["dice"]
        own = page.locator(".seat-panel .pick-row").first
        assert own.inner_text().startswith("your dice (hidden from the others)")
        assert [d.get_attribute("aria-label") for d in own.locator(".die").all()] == [
            f"die showing {d}" for d in mine
        ]
        page.wait_for_selector(".area[data-seat='1']")
        assert page.locator(".area .die.hidden").count() == 10  # the board is the public view
        played = _play_by_clicks(page, http, game_id, random.Random(21))
        record = http.get(f"/v1/games/{game_id}/record").json()
        final = http.get(f"/v1/games/{game_id}").json()
    assert played and [d["moves"][0] for d in record["decisions"] if d["seat"] == 0] == played
    page.wait_for_selector("[data-verified=true]")
    assert page.locator(".area .die.hidden").count() == 0  # the call showed every die
    assert totals_shown(page) == [s["total"] for s in final["seats"]]
    shot(page, "play-over-liars-dice")


# -- a finished game, its replay ----------------------------------------------------------------


def _options(ruleset: str) -> dict:
    return {"target": 20} if ruleset == "chopta" else {}


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_a_finished_game_shows_its_winner_ranking_and_how_to_verify_it(page, server, http, ruleset):
    seats = max(3, RULESETS[ruleset].min_seats) if RULESETS[ruleset].max_seats >= 3 else 2
    game = create(http, ruleset, seats, _options(ruleset))
    play_out(http, game, random.Random(9))
    record = http.get(f"/v1/games/{game['id']}/record").json()
    page.goto(f"{server.url}/games/{game['id']}")
    page.wait_for_selector(".outcome .winner")
    places = sorted(range(seats), key=lambda s: (record["ranking"][s], s))
    winners = [record["seats"][s] for s in places if record["ranking"][s] == 1]
    banner = page.locator(".outcome .winner").inner_text()
    assert all(name in banner for name in winners) and str(record["totals"][places[0]]) in banner
    rows = page.locator(".ranking tbody tr")
    shown = [
        (r.locator("th").inner_text(), int(r.locator(".final-total").inner_text()))
        for r in rows.all()
    ]
    assert shown == [(record["seats"][s], record["totals"][s]) for s in places]
    command = page.locator(".verify pre").inner_text()
    assert f"{server.url}/v1/games/{game['id']}/record" in command
    assert "referee verify record.json" in command and f"--chain {record['chain']}" in command
    assert record["commitment"] in page.locator(".verify .commitment").inner_text()
    page.wait_for_function(
        "() => document.querySelector('[data-check=page]').textContent.includes('✓')"
    )
    assert page.get_by_role("link", name="rules").get_attribute("href") == (
        f"/rulesets/{ruleset}/rules"
    )


def _step(page) -> int:
    return int(page.locator(".step").inner_text().split()[1])


def test_a_replay_is_dragged_stepped_by_keys_played_and_linked_by_move(page, server, http):
    game = create(http, "choice", 3)
    play_out(http, game, random.Random(3))
    frames = len(http.get(f"/v1/games/{game['id']}/replay").json()["frames"])
    page.goto(f"{server.url}/games/{game['id']}#ply=3")
    page.wait_for_selector("[data-verified=true]")
    assert _step(page) == 3  # the link's step
    slider = page.locator(".replay input[type=range]")
    page.evaluate("window.slider = document.querySelector('.replay input[type=range]')")
    # dragged: the slider follows the pointer, and is the same element all along
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 2, y)
    page.mouse.down()
    seen = []
    for fraction in (0.2, 0.4, 0.6, 0.8):
        page.mouse.move(box["x"] + box["width"] * fraction, y, steps=4)
        seen.append(_step(page))
    page.mouse.up()
    assert seen == sorted(set(seen)) and len(seen) == 4, seen
    assert page.evaluate("window.slider === document.querySelector('.replay input[type=range]')")
    assert page.url.endswith(f"#ply={_step(page)}")
    # keys, with the focus kept on the button that has it
    page.get_by_role("button", name="Step forward").focus()
    before = _step(page)
    page.get_by_role("button", name="Step forward").click()
    page.keyboard.press("ArrowRight")
    assert _step(page) == before + 2
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Step forward"
    page.keyboard.press("ArrowLeft")
    assert _step(page) == before + 1
    page.keyboard.press("Home")
    assert _step(page) == 0
    page.keyboard.press("End")
    assert _step(page) == frames - 1
    # space plays from the start, at the chosen speed, and pauses
    page.select_option(".replay select", label="8×")
    page.keyboard.press("Home")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press(" ")
    page.wait_for_function(
        "() => Number(document.querySelector('.step').textContent.split(' ')[1]) >= 3"
    )
    assert page.get_by_role("button", name="Pause").is_visible()
    page.keyboard.press(" ")
    paused = _step(page)
    page.wait_for_timeout(300)
    assert _step(page) == paused and page.get_by_role("button", name="Play").is_visible()
    # the move list: each move in the players' terms, with its time, a link to its step
    moves = page.locator(".moves-of-game a")
    assert moves.count() == frames - 1
    assert moves.nth(4).inner_text().startswith(("bot0: sum", "bot1: sum", "bot2: sum"))
    assert moves.nth(4).inner_text().endswith(" s)")
    moves.nth(4).click()
    assert _step(page) == 5 and page.url.endswith("#ply=5")
    assert moves.nth(4).get_attribute("aria-current") == "step"
    assert page.evaluate("document.activeElement.getAttribute('href')") == "#ply=5"


# alone: the bound below is on the referee's CPU, which other workers' tests would share
@pytest.mark.alone
def test_a_finished_64_seat_game_is_light_on_the_wire(browser, server, http):
    game = create(http, "choice", 64)
    play_out(http, game, random.Random(64))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    cdp = context.new_cdp_session(tab)
    cdp.send("Network.enable")
    sent: list[int] = []
    cdp.on("Network.loadingFinished", lambda event: sent.append(event["encodedDataLength"]))
    tab.goto(f"{server.url}/games/{game['id']}")
    tab.wait_for_selector("[data-verified=true]")
    tab.wait_for_selector(".moves-of-game li")
    assert tab.locator(".sheet[data-seat]").count() == 64
    ready_ms = tab.evaluate("performance.now()")
    print(f"64 seats: {sum(sent) / 1e6:.2f} MB transferred, interactive after {ready_ms:.0f} ms")
    assert sum(sent) <= 2_000_000, sent
    # its very first visit, right after the end: the referee began its compact replay as it
    # committed the end (the target is 1 s; the bound is wide, the machine being shared)
    assert ready_ms <= 3_000, ready_ms
    tab.keyboard.press("Home")
    assert tab.locator(".step").inner_text().startswith("step 0 of")
    context.close()


# -- live: the home page's TV, an embedded board -------------------------------------------------


def test_the_home_page_and_an_embedded_board_follow_a_live_game(page, server, http):
    game = create(http, "chopta", 2, {"target": 40}, deadline_s=60)
    page.goto(f"{server.url}/")
    page.wait_for_selector(f".tv a[href='/games/{game['id']}']")
    page.wait_for_selector(".tv [data-seat]")
    embed = page.context.new_page()
    embed.goto(f"{server.url}/embed/games/{game['id']}")
    embed.wait_for_selector("[data-seat]")
    assert embed.locator("header.top").count() == 0
    rnd = random.Random(5)
    for _ in range(3):
        due = http.get(f"/v1/games/{game['id']}").json()["to_decide"]
        list(decide_due(http, http, game, due, rnd))
    dice = sum(len(s["area"]) for s in http.get(f"/v1/games/{game['id']}").json()["seats"])
    count = "(n) => document.querySelectorAll('SCOPE .arranged .die').length === n"
    page.wait_for_function(count.replace("SCOPE", ".tv"), arg=dice)
    embed.wait_for_function(count.replace("SCOPE ", ""), arg=dice)
    assert page.locator(".tv .live-status").inner_text().endswith("to decide")
    embed.close()


def test_the_home_page_features_the_closest_running_game(page, server, http):
    level = create(http, "choice", 2, deadline_s=60)
    ahead = create(http, "choice", 2, deadline_s=60)  # the newest, but not the closest
    rnd = random.Random(38)
    for _ in range(40):
        if leader_gap(http.get(f"/v1/games/{ahead['id']}").json()):
            break
        due = http.get(f"/v1/games/{ahead['id']}").json()["to_decide"]
        list(decide_due(http, http, ahead, due, rnd))
    assert leader_gap(http.get(f"/v1/games/{ahead['id']}").json()) > 0
    assert leader_gap(http.get(f"/v1/games/{level['id']}").json()) == 0
    assert http.get("/featured.json").json()["id"] == level["id"]
    page.goto(f"{server.url}/")
    page.wait_for_selector(f".tv a[href='/games/{level['id']}']")
    assert page.locator(".tv").get_attribute("data-why") == "closest"
    assert "the closest game" in page.locator(".tv > h2").inner_text()


# -- every page at 360 and 1280 px --------------------------------------------------------------

_LAYOUT = """(width) => {
  const clipped = (node) => {
    for (let up = node.parentElement; up && up !== document.body; up = up.parentElement) {
      if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(up).overflowX)) return up;
    }
    return null;
  };
  const cards = [...document.querySelectorAll('.sheet, .area')];
  for (const card of cards) card.style.contentVisibility = 'visible';
  const wide = [];
  for (const node of document.querySelectorAll('body *')) {
    const box = node.getBoundingClientRect();
    if (!box.width || box.right <= width + 0.5) continue;
    const clip = clipped(node);
    if (clip && clip.getBoundingClientRect().right <= width + 0.5) continue;
    wide.push(`${node.tagName}.${node.className} ${Math.round(box.right)}`);
  }
  const spilling = cards.filter((card) => card.scrollWidth > card.clientWidth + 1)
    .map((card) => card.getAttribute('aria-label'));
  const targets = 'button, select, input, summary, .top a, .meta a, .listing td a, '
    + '.rounds li a, .moves-of-game a';
  const small = [...document.querySelectorAll(targets)]
    .filter((node) => node.getClientRects().length)
    .map((node) => [node, node.getBoundingClientRect()])
    .filter(([node, box]) => box.height < 43.5
      || (!['A', 'SUMMARY'].includes(node.tagName) && box.width < 43.5))
    .map(([node, box]) => `${node.tagName} ${node.textContent.slice(0, 20)} ${box.height}`);
  const scroll = document.documentElement.scrollWidth;
  // only what changes on its own is read out: never the page, nor a whole board
  const loud = [...document.querySelectorAll('[aria-live]')]
    .filter((node) => node.matches('main, body') || node.querySelector('.sheet, .area, table'))
    .map((node) => `${node.tagName}.${node.className}`);
  return { scroll, wide: wide.slice(0, 8), spilling, small: small.slice(0, 8), loud };
}"""
_AXE_RUN = """async () => {
  const found = await axe.run(document, { resultTypes: ['violations'] });
  return found.violations.filter((v) => ['serious', 'critical'].includes(v.impact))
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}"""


@pytest.fixture(scope="module")
def every_page(server):
    """A page of every kind, with what shows it is drawn: name -> (path, selector)."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        finished = create(http, "choice-specials", 3, {"schedule": [2]})
        play_out(http, finished, random.Random(21))
        areas = create(http, "chopta", 3, {"target": 20})
        play_out(http, areas, random.Random(22))
        live = create(http, "choice", 4, deadline_s=120)
        list(decide_due(http, http, live, [0, 1, 2, 3], random.Random(23)))
        seat = create(http, "chopta", [{"name": "Lin"}, {"bot": "random"}], {"target": 20}, 120)
        spec = {"ruleset": "chopta", "format": "round-robin", "entrants": 4, "deadline_s": 0}
        tournament_id, tokens = start_tournament(http, {**spec, "options": {"target": 8}})
        play_tournament(http, tournament_id, tokens)
    return {
        "index": ("/", ".tv [data-seat]"),
        "game-live": (f"/games/{live['id']}", ".sheet[data-seat]"),
        "game-finished": (f"/games/{finished['id']}", ".outcome .winner"),
        "game-finished-areas": (f"/games/{areas['id']}", ".outcome .winner"),
        "play": (f"/games/{seat['id']}/play#token={seat['seats'][0]['token']}", "button.pick"),
        "tournament": (f"/tournaments/{tournament_id}", "[data-check=tournament]"),
        "report": (f"/games/{finished['id']}/report", "section.report"),
        "rules": ("/rulesets/choice/rules", "article.rules"),
        "embed": (f"/embed/games/{live['id']}", ".sheet[data-seat]"),
        "not-found": ("/games/0123456789abcdef", "h1"),
    }


@pytest.mark.skipif(not AXE.exists(), reason="axe-core is not installed: cd openapi && npm ci")
@pytest.mark.parametrize(("width", "scheme"), [(360, "dark"), (1280, "light")])
def test_every_page_fits_its_window_and_axe_finds_nothing_serious(
    browser, server, every_page, width, scheme
):
    context = browser.new_context(
        viewport={"width": width, "height": 740 if width < 600 else 800},
        color_scheme=scheme,
        bypass_csp=True,  # axe is injected into the page
    )
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    axe = AXE.read_text()
    found = {}
    for name, (path, ready) in every_page.items():
        tab.goto(server.url + path)
        tab.wait_for_selector(ready)
        tab.wait_for_timeout(100)  # what is drawn after it (a seat's turn, a verdict)
        SHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SHOTS / f"page-{name}-{width}.png"))
        layout = tab.evaluate(_LAYOUT, width)
        tab.evaluate(axe)
        problems = tab.evaluate(_AXE_RUN)
        wrong = {
            "scrolls sideways": layout["scroll"] > width,
            "wider than the window": layout["wide"],
            "spills out of its card": layout["spilling"],
            "tap targets under 44 px": layout["small"],
            "aria-live over what does not change": layout["loud"],
            "axe": problems,
        }
        found.update({f"{name} {what}": v for what, v in wrong.items() if v})
    context.close()
    assert not found, found
    assert not errors, errors


def test_up_to_64_players_have_distinct_colours(page, server):
    page.goto(f"{server.url}/rulesets/choice/rules")
    colours = page.evaluate(
        "async () => { const { colourOf } = await import('/static/common.js');"
        " return [...Array(64).keys()].map(colourOf); }"
    )
    assert len(set(colours)) == 64, colours


#: a plug-in ruleset with no page module of its own: CHOICE's rules under another id
PLAIN_PLUGIN = """
from referee.rulesets.choice.engine import ChoiceRuleset


class PlainChoice(ChoiceRuleset):
    id = "plain-choice"
    title = "CHOICE, drawn plainly"
    page_script = None
    rules_help = None
"""


def test_a_plugin_ruleset_without_a_page_module_is_watched_and_replayed_plainly(browser, tmp_path):
    """A plug-in (installed as pip leaves one, in a referee process of its own on a Valkey of
    its own) that has no page module: its finished game's page has the result, the replay and
    the move list all the same, drawn by ``static/plain.js``."""
    from test_plugins import _distribution

    from referee.store.embedded import start_embedded
    from referee.tools.launch import LOAD_LIMITS, start_referee

    _distribution(
        tmp_path, "plugin_plain", "0.1", {"plain": "plugin_plain:PlainChoice"}, PLAIN_PLUGIN
    )
    path = os.pathsep.join([str(tmp_path), str(Path(__file__).parents[2]), *sys.path])
    own = start_embedded(tmp_path / "valkey")
    process, url = start_referee(own.url, env={**LOAD_LIMITS, "PYTHONPATH": path})
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            script = http.get("/rulesets/plain-choice/page.js")
            assert script.status_code == 200 and "plain" in script.text.lower()
            game = create(http, "plain-choice", 3)
            final = play_out(http, game, random.Random(8))
            record = http.get(f"/v1/games/{final['id']}/record").json()
        context = browser.new_context(viewport={"width": 360, "height": 740})
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.on("console", lambda m: m.type == "error" and errors.append(m.text))
        tab.goto(f"{url}/games/{final['id']}")
        tab.wait_for_selector("[data-verified=true]")
        winners = [n for n, p in zip(record["seats"], record["ranking"], strict=True) if p == 1]
        assert all(name in tab.locator(".outcome .winner").inner_text() for name in winners)
        assert tab.locator(".ranking tbody tr").count() == 3
        assert tab.locator(".seats-plain [data-seat]").count() == 3
        moves = tab.locator(".moves-of-game a")
        assert moves.count() == len(record["decisions"]) > 0
        first = moves.first.text_content()  # (off screen: laid out when it shows)
        assert first.startswith(tuple(f"{n}: " for n in record["seats"])), first
        tab.keyboard.press("Home")
        assert tab.locator(".step").inner_text().startswith("step 0 of")
        assert tab.evaluate("document.documentElement.scrollWidth") <= 360
        context.close()
        assert not errors, errors
    finally:
        process.terminate()
        process.wait(timeout=10)
        own.stop()


def test_a_sheet_stays_inside_its_card_from_768_to_1400_px(page, server, http):
    # at the end, where sheets are fullest (marks past the tenth, cards, the plate)
    game = create(http, "choice-specials", 5, {"schedule": [2]})
    play_out(http, game, random.Random(768))
    page.goto(f"{server.url}/games/{game['id']}")
    page.wait_for_selector(".sheet[data-seat]")
    for width in (768, 900, 1024, 1200, 1280, 1400):
        page.set_viewport_size({"width": width, "height": 900})
        spilling = page.evaluate(
            "() => [...document.querySelectorAll('.sheet')].filter((card) =>"
            " card.scrollWidth > card.clientWidth + 1 || [...card.querySelectorAll('*')].some("
            "(node) => node.getBoundingClientRect().right > card.getBoundingClientRect().right"
            " + 0.5)).length"
        )
        assert spilling == 0, width
        assert page.evaluate("document.documentElement.scrollWidth") <= width
