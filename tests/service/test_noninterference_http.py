"""Noninterference over HTTP, as a cheating bot sees it: two games dealt the same dice (two
tournaments with one organizer seed) are played alike, except that one seat (X) makes other
hidden decisions in each (hypothesis picks them: steps of a postal round one roll at a time or
several, cards alone or with a roll's move, ``pass`` once its sheet is complete). Until the
reveal, everything another party can read must be byte-identical in the two games, ids,
tokens and clock times aside: the public view (per-seat deadlines included), another seat's
turn and its ``/v1/me/next``, a problem answered to it, the record, the games listing, the
tournament's view, and the event stream. While X takes steps that do not close its round,
nothing may change at all, in either game. The engines' own property:
``tests/test_noninterference.py``.

Liar's dice (a plug-in, on the referee that has it installed) hides dice, not decisions: two
of its games dealt the same dice but for one seat's, played alike, must look byte-identical to
every other seat and to spectators until the call. The referee deals every die from the game's
seed (its commitment published first), so no request deals one seat other dice and the rest
the same; the test deals games until two match so, and masks the commitment with the ids.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import httpx
import msgspec
import pytest
from helpers import auth, start_tournament, wait_until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SEED = "5eed" * 16
SPECS = [
    ("choice", {"schedule": [3]}),
    ("choice-specials", {"schedule": [3]}),
    ("choice-specials", {"schedule": [1]}),
]


def _masked(observed: Any, names: dict[str, str]) -> bytes:
    """``observed`` as bytes, with what differs between two games by nature replaced: each
    of ``names`` (ids, tokens) by its placeholder, every float (a clock time) by "<time>",
    the chains (they hash the times) by "<chain>"; JSON held in strings is read and masked."""

    def mask(value: Any, key: str = "") -> Any:
        if key in ("chain", "commitment_at"):
            return "<chain>" if value else value
        if isinstance(value, dict):
            return {k: mask(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [mask(v) for v in value]
        if isinstance(value, float):
            return "<time>"
        if isinstance(value, str):
            for name, placeholder in names.items():
                value = value.replace(name, placeholder)
            if value.startswith("{"):
                return mask(msgspec.json.decode(value))
        return value

    return msgspec.json.encode(mask(observed))


class Stream:
    """A game's event stream, followed in a thread: each message's event and data, as an
    EventSource would deliver them, and its id's number within its millisecond (the
    millisecond itself is a clock time)."""

    def __init__(self, url: str, game_id: str) -> None:
        self.messages: list[tuple[str, str, str]] = []
        self._client = httpx.Client(base_url=url, timeout=httpx.Timeout(5, read=None))
        self._response = self._client.send(
            self._client.build_request("GET", f"/v1/games/{game_id}/events"), stream=True
        )
        assert self._response.status_code == 200
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        event, data, number = "message", [], ""
        try:
            for line in self._response.iter_lines():
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
                elif line.startswith("id:"):
                    number = line[3:].strip().partition("-")[2]
                elif not line and data:
                    self.messages.append((event, "\n".join(data), number))
                    event, data, number = "message", [], ""
        except Exception:  # closed under it: the test is over
            return

    def close(self) -> None:
        self._response.close()
        self._client.close()


class World:
    """One of the two games: its tournament, its seats' tokens, its event stream."""

    def __init__(self, http: httpx.Client, url: str, ruleset: str, options: dict) -> None:
        self.http = http
        spec = {
            "ruleset": ruleset,
            "options": options,
            "format": "round-robin",
            "entrants": 3,
            "table_size": 3,
            "deadline_s": 3600,
            "seed": SEED,
        }
        self.tournament, entrants = start_tournament(http, spec)
        self.entrant = {}  # seat -> entrant token
        self.seat = {}  # seat -> seat token
        for token in entrants:
            nxt: dict[str, Any] = {}
            assert wait_until(lambda t=token, n=nxt: n.update(self._next(t)) or "game_id" in n)
            self.game = nxt["game_id"]
            seat = nxt["turn"]["seat"]
            self.entrant[seat], self.seat[seat] = token, nxt["seat_token"]
        self.url = f"/v1/games/{self.game}"
        self.stream = Stream(url, self.game)

    def _next(self, token: str) -> dict:
        return self.http.get("/v1/me/next", headers=auth(token)).json()

    def turn(self, seat: int) -> dict:
        reply = self.http.get(f"{self.url}/turn", headers=auth(self.seat[seat]))
        assert reply.status_code == 200, reply.text
        return reply.json()

    def post(self, seat: int, seq: int, moves: list) -> httpx.Response:
        body = {"seq": seq, "moves": moves} if len(moves) > 1 else {"seq": seq, "move": moves[0]}
        return self.http.post(f"{self.url}/moves", headers=auth(self.seat[seat]), json=body)

    def observe(self, watcher: int) -> dict[str, Any]:
        """Everything seat ``watcher`` and any spectator may read now."""
        http, url = self.http, self.url
        turn = self.turn(watcher)
        legal = turn["legal_moves"] or [{"type": "pass"}]
        problem = self.post(watcher, turn["seq"] + 7, [legal[0]])  # a seq not yet due
        listing = http.get("/v1/games", params={"limit": 100}).json()["games"]
        return {
            "public": http.get(url).json(),
            "turn": turn,
            "next": self._next(self.entrant[watcher]),
            "problem": (problem.status_code, problem.json()),
            "record": http.get(f"{url}/record").json(),
            "listed": [g for g in listing if g["id"] == self.game],
            "tournament": http.get(f"/v1/tournaments/{self.tournament}").json(),
            "events": list(self.stream.messages),
        }

    def masked(self, observed: dict[str, Any]) -> bytes:
        """An observation with what differs between any two games by nature replaced: ids,
        tokens, clock times (every float), and the chains (they hash the times)."""
        names = {t: "<entrant>" for t in self.entrant.values()}  # tokens hold the ids
        names.update({t: "<seat>" for t in self.seat.values()})
        names.update({self.game: "<game>", self.tournament: "<tournament>"})

        return _masked(observed, names)


def differences(left: bytes, right: bytes) -> list[str]:
    """Where two masked observations differ, as paths (for the failure's message)."""
    found: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                walk(a.get(key), b.get(key), f"{path}.{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for index, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{path}[{index}]")
        elif a != b:
            found.append(f"{path}: {a!r} != {b!r}")

    walk(msgspec.json.decode(left), msgspec.json.decode(right), "")
    return found[:10]


def _hidden_step(data: Any, world: World, x: int, turn: dict) -> list | None:
    """A step of X's round that does not close it, or None if only a close is left."""
    legal = turn["legal_moves"]
    last_roll = turn["view"]["you"]["roll_index"] == len(turn["view"]["rolls"]) - 1
    steps = [m for m in legal if m["type"] == "suppen_kasper"]
    if not last_roll:
        steps += [m for m in legal if m["type"] != "pass"]
    if not steps:
        return None
    sheet = turn["view"]["you"]["sheet"]
    if sheet["fifth_dice"] and data.draw(st.booleans()):  # aim at completing the sheet
        leading = max(sheet["fifth_dice"], key=lambda f: f["marks"])["value"]
        steps = [m for m in steps if m.get("fifth") == leading] or steps
    move = data.draw(st.sampled_from(steps))
    if move["type"] == "suppen_kasper" and not last_roll and data.draw(st.booleans()):
        rest = [m for m in legal if m["type"] in ("mark", "free_throw")]
        if rest:  # the card with a roll's move in one submission (may be refused: then alone)
            return [move, data.draw(st.sampled_from(rest))]
    return [move]


def play_round_alike(world: World, seat: int, rnd: random.Random) -> None:
    """The seat decides its whole round, one roll at a time, as the same random bot (and no
    more: the last seat's close rolls the next round)."""
    batch = None
    for _ in range(10):
        turn = world.turn(seat)
        if turn["status"] != "your_turn" or batch not in (None, turn["view"]["batch"]):
            return
        batch = turn["view"]["batch"]
        reply = world.post(seat, turn["seq"], [rnd.choice(turn["legal_moves"])])
        assert reply.status_code == 200, reply.text


@pytest.fixture
def worlds(server, http):
    made: list[World] = []

    def make(ruleset: str, options: dict) -> tuple[World, World]:
        pair = (
            World(http, server.url, ruleset, options),
            World(http, server.url, ruleset, options),
        )
        made.extend(pair)
        return pair

    yield make
    for world in made:
        world.stream.close()


@pytest.mark.parametrize(("ruleset", "options"), SPECS, ids=[f"{r}-{o}" for r, o in SPECS])
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), seed=st.integers(0, 2**16), rounds=st.integers(0, 30))
def test_no_party_can_tell_a_hidden_decision_from_another(
    worlds, ruleset, options, data, seed, rounds
):
    a, b = worlds(ruleset, options)
    x = data.draw(st.integers(0, 2))
    others = [s for s in range(3) if s != x]
    # the public history both share: the same random bot at every seat, round after round,
    # until X is a mark from its sheet's end (where a hidden step may complete it)
    for world in (a, b):
        rnd = random.Random(seed)
        for _ in range(rounds):
            public = world.http.get(world.url).json()
            fifth = [f["marks"] for f in public["seats"][x]["fifth_dice"]]
            due = public["to_decide"]
            if x not in due or len(due) < 2 or max(fifth, default=0) >= public["end_marks"] - 1:
                break
            for seat in (x, *others):
                play_round_alike(world, seat, rnd)
    watching = [s for s in others if a.turn(s)["status"] == "your_turn"]
    if a.turn(x)["status"] != "your_turn" or not watching:
        return  # the game ended, or X's sheet did: this example has no round to vary
    time.sleep(0.2)  # the streams have told everything so far
    watcher, others = watching[0], [watcher for watcher in others if watcher != watching[0]]
    before = {w: w.observe(watcher) for w in (a, b)}
    left, right = a.masked(before[a]), b.masked(before[b])
    assert left == right, differences(left, right)
    # X's hidden steps, other ones in each game: nothing anyone else reads may change
    for world in (a, b):
        for _ in range(4):
            turn = world.turn(x)
            step = _hidden_step(data, world, x, turn)
            if step is None or not data.draw(st.booleans()):
                break
            reply = world.post(x, turn["seq"], step)
            if reply.status_code == 422 and len(step) > 1:
                reply = world.post(x, turn["seq"], step[:1])
            assert reply.status_code == 200, reply.text
            time.sleep(0.05)
            now = world.observe(watcher)
            assert now == before[world], differences(world.masked(now), world.masked(before[world]))
    # X closes its round (a different way in each game); then the others, alike, one by one
    for world in (a, b):
        for _ in range(8):
            turn = world.turn(x)
            if turn["status"] != "your_turn":
                break
            move = data.draw(st.sampled_from(turn["legal_moves"]))
            assert world.post(x, turn["seq"], [move]).status_code == 200
    for closing in [None, *others]:
        if closing is not None:
            for world in (a, b):
                play_round_alike(world, closing, random.Random(seed + closing))
        if any(w.turn(s)["status"] != "your_turn" for w in (a, b) for s in [watcher]):
            return  # a reveal (the watcher's round was the last open): it may differ now
        time.sleep(0.2)
        left, right = a.masked(a.observe(watcher)), b.masked(b.observe(watcher))
        assert left == right, differences(left, right)


def test_a_hidden_step_wakes_no_long_poll(server, http, worlds):
    """A seat waiting for the others (its round closed) is not woken by a step of theirs that
    closes nothing: its long-poll answers when its wait runs out, as if nothing happened."""
    a, _ = worlds("choice", {"schedule": [3]})
    play_round_alike(a, 1, random.Random(1))
    play_round_alike(a, 2, random.Random(2))
    answered: dict[str, Any] = {}

    def wait() -> None:
        started = time.monotonic()
        reply = http.get(f"{a.url}/turn", params={"wait": 2}, headers=auth(a.seat[1]))
        answered.update(status=reply.json()["status"], took=time.monotonic() - started)

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.3)
    turn = a.turn(0)
    assert a.post(0, turn["seq"], [turn["legal_moves"][0]]).status_code == 200
    waiter.join(10)
    assert answered["status"] == "waiting" and answered["took"] >= 1.9


# -- Liar's dice, installed from outside: the secret is a seat's dice, not its decisions -------


class LiarsGame:
    """A game of Liar's dice on the referee that has it installed (``liars_referee``), its
    seats' tokens, its event stream, and what each seat holds (read with its own token)."""

    def __init__(self, http: httpx.Client, url: str, created: dict) -> None:
        self.http, self.game = http, created["id"]
        self.url = f"/v1/games/{self.game}"
        self.tokens = [seat["token"] for seat in created["seats"]]
        self.commitment = created["commitment"]
        self.dice = [tuple(self.turn(s)["view"]["you"]["dice"]) for s in range(len(self.tokens))]
        self.stream: Stream | None = None
        self._url = url

    def follow(self) -> None:
        self.stream = Stream(self._url, self.game)

    def turn(self, seat: int) -> dict:
        reply = self.http.get(f"{self.url}/turn", headers=auth(self.tokens[seat]))
        assert reply.status_code == 200, reply.text
        return reply.json()

    def post(self, seat: int, seq: int, move: dict) -> httpx.Response:
        body = {"seq": seq, "move": move}
        return self.http.post(f"{self.url}/moves", headers=auth(self.tokens[seat]), json=body)

    def observe(self, watcher: int) -> dict[str, Any]:
        """Everything seat ``watcher`` and any spectator may read now."""
        turn = self.turn(watcher)
        problem = self.post(watcher, turn["seq"] + 7, {"type": "liar"})  # a seq not yet due
        listing = self.http.get("/v1/games", params={"limit": 100}).json()["games"]
        assert self.stream is not None
        return {
            "public": self.http.get(self.url).json(),
            "turn": turn,
            "problem": (problem.status_code, problem.json()),
            "record": self.http.get(f"{self.url}/record").json(),
            "replay": self.http.get(f"{self.url}/replay").status_code,
            "listed": [g for g in listing if g["id"] == self.game],
            "events": list(self.stream.messages),
        }

    def masked(self, observed: dict[str, Any]) -> bytes:
        """An observation with what differs between any two games by nature replaced: the id,
        the tokens, clock times (every float), the chain (it hashes the times), and the
        commitment: the two games' seeds are drawn apart (no HTTP request deals one seat other
        dice and the rest the same), and a seed's SHA-256 says nothing of its dice."""
        names = {t: "<seat>" for t in self.tokens}
        names.update({self.game: "<game>", self.commitment: "<commitment>"})

        return _masked(observed, names)


def _liars_pair(http: httpx.Client, url: str, seats: int = 3) -> tuple[LiarsGame, LiarsGame, int]:
    """Two games alike in every seat's dice but one's (X's): games are dealt until two match
    so (one die a seat: a few games, as in the birthday problem); and X."""
    seen: dict[tuple[int, tuple], LiarsGame] = {}
    for _ in range(80):
        created = http.post(
            "/v1/games",
            json={
                "ruleset": "liars-dice",
                "seats": [{"name": f"s{i}"} for i in range(seats)],
                "options": {"dice_per_seat": 1},
                "deadline_s": 3600,
            },
        )
        assert created.status_code == 201, created.text
        game = LiarsGame(http, url, created.json())
        for x in range(seats):
            others = tuple(d for s, d in enumerate(game.dice) if s != x)
            twin = seen.setdefault((x, others), game)
            if twin.dice[x] != game.dice[x]:
                return twin, game, x
    raise AssertionError("no two games were dealt alike but for one seat")


def _told(*games: LiarsGame) -> None:
    """Wait until the games' streams have told everything so far: as many messages in each,
    and no more coming for a moment (a loaded machine may lag behind a fixed pause)."""
    counts: list[int] = []

    def settled() -> bool:
        now = [len(g.stream.messages) for g in games if g.stream is not None]
        done = now == counts and len(set(now)) == 1
        counts[:] = now
        return done

    assert wait_until(lambda: settled() or time.sleep(0.1), seconds=10)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_liars_dice_no_party_can_tell_a_seats_dice_until_the_call(liars_referee, seed):
    """Two games of the plug-in, dealt the same dice but for seat X's, played alike (the same
    bids, from the same random bot): every other seat and every spectator reads byte-identical
    answers (ids, tokens, times and the seed's commitment aside) after every bid, until the
    call; the call shows every die, and from then on the two games differ (which this
    comparison sees)."""
    with httpx.Client(base_url=liars_referee.url, timeout=30) as http:
        a, b, x = _liars_pair(http, liars_referee.url)
        assert a.dice[x] != b.dice[x]
        assert [d for s, d in enumerate(a.dice) if s != x] == [
            d for s, d in enumerate(b.dice) if s != x
        ]
        watchers = [s for s in range(3) if s != x]
        for game in (a, b):
            game.follow()
        try:
            rnds = {a: random.Random(seed), b: random.Random(seed)}
            for step in range(random.Random(seed).randint(2, 6)):
                _told(a, b)
                for watcher in watchers:
                    left, right = a.masked(a.observe(watcher)), b.masked(b.observe(watcher))
                    assert left == right, (step, watcher, differences(left, right))
                for game in (a, b):  # the seat to decide bids alike in both (never calls)
                    (seat,) = game.http.get(game.url).json()["to_decide"]
                    turn = game.turn(seat)
                    bids = [m for m in turn["legal_moves"] if m["type"] == "bid"][:6]
                    if not bids:
                        break
                    reply = game.post(seat, turn["seq"], rnds[game].choice(bids))
                    assert reply.status_code == 200, reply.text
            # the call: every die is shown, X's too, so the games now differ where X's dice do
            for game in (a, b):
                (seat,) = game.http.get(game.url).json()["to_decide"]
                turn = game.turn(seat)
                assert game.post(seat, turn["seq"], {"type": "liar"}).status_code == 200
            _told(a, b)
            seen = [g.observe(watchers[0]) for g in (a, b)]
            assert [v["public"]["seats"][x]["dice"] for v in seen] == [
                list(a.dice[x]),
                list(b.dice[x]),
            ]
            assert a.masked(seen[0]) != b.masked(seen[1])
        finally:
            for game in (a, b):
                if game.stream is not None:
                    game.stream.close()
