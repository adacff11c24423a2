"""The spectator pages in a real browser: Debian's chromium driven by Playwright (its own
browser download is not reachable, so ``executable_path``). Skipped, with the reason, where
chromium is not installed (CI installs it). Each page is photographed into
``test-output/screenshots/`` (or ``$REFEREE_SCREENSHOTS``) for a reviewer to look at, and
every request a page makes must stay on the referee's origin."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import httpx
import pytest
from helpers import auth, create, decide_due, play_out, play_tournament, start_tournament

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

CHROMIUM = os.environ.get("REFEREE_CHROMIUM") or next(
    filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium here: apt-get install -y chromium (CI installs it)"
)
SHOTS = Path(os.environ.get("REFEREE_SCREENSHOTS", "test-output/screenshots"))


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        # --no-sandbox: CI runs the suite as root, where chromium's sandbox will not start
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
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
    return [int(t) for t in page.locator(".seat-total").all_inner_texts()]


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
    page.goto(f"{server.url}/tournaments/{tournament_id}")
    page.wait_for_selector(".standings tbody tr")
    page.evaluate("window.stillTheSamePage = true")
    final = play_tournament(http, tournament_id, tokens)
    page.wait_for_selector("h1 .status.finished", timeout=15_000)
    assert page.evaluate("window.stillTheSamePage") is True
    rows = page.locator(".standings tbody tr")
    shown = [
        (r.locator("th").inner_text(), float(r.locator(".rating").inner_text())) for r in rows.all()
    ]
    assert shown == [(s["name"], s["rating"]) for s in final["standings"]]
    assert page.locator(".chart polyline").count() == 4
    assert page.locator(".rounds li a").count() == sum(len(r) for r in final["rounds"])
    shot(page, "tournament")


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
    # the event feed tells the game's story in the module's words
    assert "event: played" in events
    page.wait_for_function(
        "() => [...document.querySelectorAll('.feed li')]"
        ".some((li) => li.textContent.endsWith('called the last bid a lie'))"
    )


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
