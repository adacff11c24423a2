"""Every body a bot or a spectator reads is what the committed contract says it is: games of
each ruleset (open seats, postal rounds, finished), a tournament whose tables share dice
(sealed views), and refusals, each answer checked against ``openapi/openapi.json``'s schema
for its operation and status, and its views told apart by ``ruleset`` alone."""

from __future__ import annotations

import random

import httpx
import pytest
from contract_schema import CLOSED, CONTRACT, answer_validator, closed_registry
from helpers import auth


class Checked:
    """An HTTP client whose every answer is checked against the contract (the committed one,
    or ``contract``: another referee's)."""

    def __init__(self, http: httpx.Client, contract: dict = CONTRACT) -> None:
        self.http = http
        self.contract = contract
        self.registry = CLOSED if contract is CONTRACT else closed_registry(contract)
        self.seen: dict[tuple[str, int], int] = {}
        self.views: set[tuple[str, str, bool]] = set()

    def call(self, method: str, template: str, token: str | None = None, **kwargs):
        path = template.format(**kwargs.pop("ids", {}))
        headers = auth(token) if token else {}
        reply = self.http.request(method, path, headers=headers, **kwargs)
        operation = self.contract["paths"][template][method.lower()]
        assert str(reply.status_code) in operation["responses"], (template, reply.text)
        body = reply.json()
        validator = answer_validator(
            template, method.lower(), reply.status_code, self.contract, self.registry
        )
        errors = list(validator.iter_errors(body))
        assert not errors, (template, reply.status_code, [e.message for e in errors[:3]], body)
        key = (operation["operationId"], reply.status_code)
        self.seen[key] = self.seen.get(key, 0) + 1
        return reply.status_code, body


# the unfinished record is checked at steps 0, 5, 10, 20, 40, ...: it grows with the game, and
# checked every fifth step its validation took a third of a CHOPTA game's test
_RECORD_STEPS = {0, 5, *(10 * 2**k for k in range(10))}


def _play(api: Checked, game_id: str, tokens: list[str], rnd: random.Random, postal=False):
    """Every seat plays random legal moves until the game is over, asking for the next turn
    with the decision half of the time; a public view after each round, and the record
    (``_RECORD_STEPS``)."""
    ids = {"game_id": game_id}
    for step in range(5000):
        _, view = api.call("GET", "/v1/games/{game_id}", ids=ids)
        api.views.add(("game", view["ruleset"], view["sealed"]))
        if step in _RECORD_STEPS:
            api.call("GET", "/v1/games/{game_id}/record", ids=ids)
        if view["status"] == "finished":
            api.call("GET", "/v1/games/{game_id}/replay", ids=ids)
            api.call("GET", "/v1/games", params={"limit": 3})
            return view
        if step == 1:
            api.call("GET", "/v1/games/{game_id}/replay", ids=ids)  # 409 game-not-over
        for seat in view["to_decide"]:
            _, turn = api.call("GET", "/v1/games/{game_id}/turn", tokens[seat], ids=ids)
            if turn["status"] != "your_turn":
                continue
            api.views.add(("turn", turn["view"]["ruleset"], False))
            move = rnd.choice(turn["legal_moves"])
            body = {"seq": turn["seq"], "move": move}
            if postal:
                body = {"seq": turn["seq"], "moves": [move]}
            params = {"wait": 0} if rnd.random() < 0.5 else {}
            status, _ = api.call(
                "POST",
                "/v1/games/{game_id}/moves",
                tokens[seat],
                ids=ids,
                json=body,
                params=params,
            )
            assert status == 200
            # the same seq again with another decision: a problem the contract describes
            another = {"type": "place", "die": 1 if move != {"type": "place", "die": 1} else 2}
            other = {"seq": turn["seq"], "move": another}
            status, problem = api.call(
                "POST", "/v1/games/{game_id}/moves", tokens[seat], ids=ids, json=other
            )
            assert status in (409, 422), problem
    raise AssertionError("the game did not finish")


@pytest.mark.parametrize(
    ("ruleset", "options"),
    [
        ("choice", {}),
        ("choice", {"schedule": [3, 2, 1]}),
        ("choice-specials", {}),
        ("chopta", {"dice_per_turn": 2}),
    ],
)
def test_every_answer_of_a_game_is_typed_by_the_contract(server, ruleset, options):
    api = Checked(httpx.Client(base_url=server.url, timeout=30))
    rnd = random.Random(f"{ruleset}{options}")
    _, created = api.call(
        "POST",
        "/v1/games",
        json={
            "ruleset": ruleset,
            "seats": [{"name": "ann"}, {}, {"name": "cy"}],
            "options": options,
            "deadline_s": 0,
        },
    )
    ids = {"game_id": created["id"]}
    # an open seat: the game waits, its views hold only who sits where
    _, waiting = api.call("GET", "/v1/games/{game_id}", ids=ids)
    assert waiting["status"] == "waiting" and "seats" in waiting
    _, turn = api.call("GET", "/v1/games/{game_id}/turn", created["seats"][0]["token"], ids=ids)
    assert turn["view"] is None and turn["status"] == "waiting"
    api.call("GET", "/v1/games/{game_id}/record", ids=ids)
    status, claimed = api.call("POST", "/v1/games/{game_id}/seats", ids=ids, json={"name": "bo"})
    assert status == 201
    tokens = [created["seats"][0]["token"], claimed["token"], created["seats"][2]["token"]]
    api.call("POST", "/v1/games/{game_id}/seats", ids=ids, json={"name": "late"})  # 409
    api.call("GET", "/v1/games/{game_id}/turn", ids=ids)  # 401
    api.call("GET", "/v1/games/{game_id}/turn", "x.y", ids=ids)  # 403
    postal = bool(options.get("schedule"))
    final = _play(api, created["id"], tokens, rnd, postal=postal)
    assert final["status"] == "finished" and final["ranking"] and final["seed"]
    _, record = api.call("GET", "/v1/games/{game_id}/record", ids=ids)
    assert record["finished"] and record["dice"] and record["final"]
    _, turn = api.call("GET", "/v1/games/{game_id}/turn", tokens[0], ids=ids)
    assert turn["status"] == "finished" and turn["view"]["ruleset"] == ruleset
    assert {("getGame", 200), ("getTurn", 200), ("submitMove", 200), ("getRecord", 200)} <= set(
        api.seen
    )
    assert {("claimSeat", 409), ("getTurn", 401), ("getTurn", 403)} <= set(api.seen)


def _decide_next(api: Checked, step: dict, rnd: random.Random) -> None:
    """A random legal move for the turn ``nextDecision`` handed, posted with its seat token."""
    turn = step["turn"]
    api.call(
        "POST",
        "/v1/games/{game_id}/moves",
        step["seat_token"],
        ids={"game_id": step["game_id"]},
        json={"seq": turn["seq"], "move": rnd.choice(turn["legal_moves"])},
    )


def test_a_tournament_and_its_sealed_tables_are_typed_by_the_contract(server):
    api = Checked(httpx.Client(base_url=server.url, timeout=30))
    rnd = random.Random(7)
    _, created = api.call(
        "POST",
        "/v1/tournaments",
        json={"ruleset": "chopta", "entrants": 4, "deadline_s": 0, "format": "round-robin"},
    )
    ids = {"tournament_id": created["id"]}
    api.call("GET", "/v1/tournaments/{tournament_id}", ids=ids)
    tokens = []
    for name in ("ann", "bo", "cy", "di"):
        status, entry = api.call(
            "POST", "/v1/tournaments/{tournament_id}/entrants", ids=ids, json={"name": name}
        )
        assert status == 201
        tokens.append(entry["token"])
    api.call("POST", "/v1/tournaments/{tournament_id}/entrants", ids=ids, json={"name": "ed"})
    api.call("GET", "/v1/me/next")  # 401: no entrant token
    _, tournament = api.call("GET", "/v1/tournaments/{tournament_id}", ids=ids)
    first, second = tournament["rounds"][0][:2]
    # the first table plays its game out while the second waits: the first is sealed
    while True:
        moved = False
        for entrant in first["entrants"]:
            _, nxt = api.call("GET", "/v1/me/next", tokens[entrant], params={"wait": 0})
            if nxt["status"] == "your_turn" and nxt["game_id"] == first["game_id"]:
                _decide_next(api, nxt, rnd)
                moved = True
        if not moved:
            break
    game = {"game_id": first["game_id"]}
    _, sealed = api.call("GET", "/v1/games/{game_id}", ids=game)
    assert sealed["sealed"] and sealed["status"] == "finished" and "round" not in sealed
    status, _ = api.call("GET", "/v1/games/{game_id}/record", ids=game)
    assert status == 409
    api.call("GET", "/v1/tournaments/{tournament_id}", ids=ids)
    # then every table plays on through nextDecision until the tournament is over
    for _ in range(20_000):
        answers = [api.call("GET", "/v1/me/next", t, params={"wait": 0})[1] for t in tokens]
        if all(a["status"] == "finished" for a in answers):
            break
        for answer in answers:
            if answer["status"] == "your_turn":
                _decide_next(api, answer, rnd)
    _, final = api.call("GET", "/v1/tournaments/{tournament_id}", ids=ids)
    _, listed = api.call("GET", "/v1/tournaments", params={"limit": 100})
    assert created["id"] in [t["id"] for t in listed["tournaments"]]
    assert final["status"] == "finished" and final["seed"] and final["ruleset"] == "chopta"
    _, opened = api.call("GET", "/v1/games/{game_id}", ids={"game_id": second["game_id"]})
    assert not opened["sealed"] and opened["status"] == "finished"
    assert {("nextDecision", 401), ("registerEntrant", 409), ("getRecord", 409)} <= set(api.seen)
