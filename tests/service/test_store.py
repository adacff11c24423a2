"""Storage promises: two Redis round trips per decision, retention, secrets kept back."""

from __future__ import annotations

import asyncio
import contextlib
import time

import msgspec
import pytest
from helpers import Counted, counted_redis
from redis.asyncio import Redis

from referee.core import game as game_module
from referee.core.refusals import Refusal
from referee.service import GameService, Seats, TournamentService
from referee.store import GameKeys, GameStore, TournamentStore
from referee.store.cluster import part_for
from referee.store.games import GAMES


class Referee:
    """One process's games and its seats' requests, as the app holds them (without its
    background work)."""

    def __init__(self, redis: Redis, **options) -> None:
        self.games = GameService(GameStore(redis), **options)
        self.seats = Seats(self.games)
        self.store = self.games.store
        self.memory = self.games.memory

    async def create(self, *args, **kwargs):
        game, tokens = await self.games.create(*args, **kwargs)
        return game.doc, tokens

    def wait_turn(self, *args):
        return self.seats.wait_turn(*args)

    def move(self, *args):
        return self.seats.move(*args)

    def current(self, *args):
        return self.games.current(*args)

    def claim(self, *args):
        return self.games.claim(*args)

    def record(self, *args):
        return self.games.record(*args)


def _counted(valkey: str, recent_games: int = 4096) -> Referee:
    return Referee(counted_redis(valkey), recent_games=recent_games)


async def _trips(call) -> tuple[int, object]:
    before = Counted.round_trips
    result = await call
    return Counted.round_trips - before, result


async def _seat_0_decided(service: Referee) -> tuple:
    """A 2-seat CHOICE game whose seat 0 has decided its first roll: doc, tokens, turns."""
    doc, tokens = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
    turns = [await service.wait_turn(doc.id, token, 0) for token in tokens]
    await service.move(doc.id, tokens[0], 0, [turns[0]["legal_moves"][0]])
    return doc, tokens, turns


async def _seat_0_waits(service: Referee, doc, tokens) -> asyncio.Task:
    """Seat 0 long-polling its turn (5 s), set waiting."""
    waiting = asyncio.create_task(service.wait_turn(doc.id, tokens[0], 5))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    return waiting


async def _listening(service: Referee) -> asyncio.Task:
    """The service's background work on the channels it hears, as the app runs it (a game's
    channel is subscribed by the first waiter on it)."""
    return asyncio.create_task(service.games.let_go_forever())


async def _close(watchers: list[asyncio.Task], *services: Referee) -> None:
    for watcher in watchers:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    for service in services:
        await service.store.aclose()
        await service.store.redis.aclose()


def test_a_decision_takes_two_round_trips_turn_and_move(valkey):
    """A bot's loop: the first ``/turn`` subscribes to the game's channel and reads it once;
    from then on the process hears every commit of the game, so a turn is told from memory
    and ``/moves`` commits without reading: the commit alone."""

    async def scenario():
        service = _counted(valkey)
        doc, tokens = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        used = []
        for _ in range(3):  # three rolls, both seats deciding each
            for seat, token in enumerate(tokens):
                trips, turn = await _trips(service.wait_turn(doc.id, token, 0))
                assert turn["status"] == "your_turn", turn
                move = service.move(doc.id, token, turn["seq"], [turn["legal_moves"][0]])
                more, accepted = await _trips(move)
                assert accepted["accepted"] and accepted["seat"] == seat
                used.append(trips + more)
        await service.store.aclose()
        await service.store.redis.aclose()
        return used

    assert asyncio.run(scenario()) == [2] + [1] * 5


def test_a_seat_waiting_on_the_other_is_woken_without_a_read(valkey):
    """Seat 0 has decided and waits; seat 1's decision wakes it, and the game that decision
    committed, written with the newest event, answers without another read (the commit
    alone). Seat 1's next turn is told from memory."""
    wake_trips, next_turn_trips = 1, 0

    async def scenario():
        service = _counted(valkey)
        watchers = [await _listening(service)]
        doc, tokens, turns = await _seat_0_decided(service)
        redis = service.store.redis
        await asyncio.gather(redis.ping(), redis.ping())  # two connections, set up before
        before = Counted.round_trips
        waiting = await _seat_0_waits(service, doc, tokens)
        await service.move(doc.id, tokens[1], 0, [turns[1]["legal_moves"][0]])
        woken = await waiting
        trips = Counted.round_trips - before
        idle, still = await _trips(service.wait_turn(doc.id, tokens[1], 0))
        cold = _counted(valkey)
        theirs = await cold.wait_turn(doc.id, tokens[0], 0)
        await _close(watchers, service, cold)
        return trips, woken, still, idle, theirs

    trips, woken, still, idle, theirs = asyncio.run(scenario())
    assert woken["status"] == "your_turn" and woken["seq"] == 1 and woken == theirs
    assert trips == wake_trips
    assert still["status"] == "your_turn" and idle == next_turn_trips


@pytest.mark.parametrize(("listening", "reads"), [(True, 1)], ids=["the game, once"])
def test_a_remembered_wait_is_checked_against_the_events(valkey, listening, reads):
    """Replica ``one`` remembers seat 0 waiting; ``two`` takes seat 1's decision. Seat 0 asks
    ``one`` without waiting: the events show the game moved (read, or heard: ``one`` then
    forgets what it remembered), and the answer is read."""

    async def scenario():
        one, two = _counted(valkey), _counted(valkey)
        watchers = [await _listening(one)] if listening else []
        doc, tokens, turns = await _seat_0_decided(one)
        waiting = await one.wait_turn(doc.id, tokens[0], 0)
        await two.move(doc.id, tokens[1], 0, [turns[1]["legal_moves"][0]])
        for _ in range(200 if listening else 0):
            if one.memory.remembered(doc.id) is None:
                break
            await asyncio.sleep(0.005)
        trips, moved = await _trips(one.wait_turn(doc.id, tokens[0], 0))
        await _close(watchers, one, two)
        return waiting, moved, trips

    waiting, moved, trips = asyncio.run(scenario())
    assert waiting["status"] == "waiting"
    assert moved["status"] == "your_turn" and moved["seq"] == 1
    assert trips == reads


def test_a_finished_game_answers_its_seats_from_memory(valkey):
    async def scenario():
        service = _counted(valkey)
        doc, tokens = await service.create(
            "chopta", {"target": 1}, [{"name": "a"}, {"name": "b"}], 0
        )
        while True:
            game = await service.current(doc.id)
            if game.doc.status == "finished":
                break
            seat = game.ruleset.to_decide(game.state)[0]
            turn = await service.wait_turn(doc.id, tokens[seat], 0)
            await service.move(doc.id, tokens[seat], turn["seq"], [turn["legal_moves"][0]])
        trips, again = await _trips(service.wait_turn(doc.id, tokens[0], 5))
        other = _counted(valkey)  # a replica that never saw the game reads it
        read, theirs = await _trips(other.wait_turn(doc.id, tokens[0], 5))
        for each in (service, other):
            await each.store.redis.aclose()
        return trips, again, read, theirs

    trips, again, read, theirs = asyncio.run(scenario())
    assert again == theirs and again["status"] == "finished"
    assert trips == 0 and read >= 1


def test_without_remembered_games_a_move_reads_then_commits(valkey):
    async def scenario():
        service = _counted(valkey, recent_games=0)
        doc, tokens = await service.create("chopta", {}, [{"name": "a"}, {"name": "b"}], 0)
        game = await service.current(doc.id)
        move = game.ruleset.legal_moves(game.state, 0)[0]
        trips, _ = await _trips(service.move(doc.id, tokens[0], 0, [move]))
        await service.store.aclose()
        await service.store.redis.aclose()
        return trips

    assert asyncio.run(scenario()) == 2


def test_a_remembered_game_moved_by_another_replica_costs_no_extra_read(valkey):
    """Replica ``one`` remembers an old version; ``two`` decides for seat 0 meanwhile. Seat 1's
    decision on ``one`` loses its first commit, gets the game as it is in the same reply, and
    lands on top: both decisions are kept, in order, and no read is spent."""

    async def scenario():
        one, two = _counted(valkey), _counted(valkey)
        doc, tokens = await one.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        turns = [await one.wait_turn(doc.id, token, 0) for token in tokens]
        await two.move(doc.id, tokens[0], turns[0]["seq"], [turns[0]["legal_moves"][0]])
        trips, accepted = await _trips(
            one.move(doc.id, tokens[1], turns[1]["seq"], [turns[1]["legal_moves"][0]])
        )
        record = await two.record(doc.id)
        for service in (one, two):
            await service.store.aclose()
        await service.store.redis.aclose()
        return trips, accepted, record

    trips, accepted, record = asyncio.run(scenario())
    assert accepted["accepted"] and accepted["seat"] == 1
    told = [msgspec.json.decode(d) for d in record.decisions]  # as stored
    assert [(d["seat"], d["seq"]) for d in told] == [(0, 0), (1, 0)]
    assert trips == 2, "a failed commit, then the commit on the game it returned"


def test_a_refusal_is_never_given_from_a_remembered_game(valkey):
    """Replica ``one`` remembers the game with seat 1 open; ``two`` seats a player, who then
    moves through ``one``: accepted, though the remembered game knows neither the token nor a
    started game."""

    async def scenario():
        one, two = _counted(valkey), _counted(valkey)
        doc, _ = await one.create("choice", {}, [{"name": "a"}, {}], 0)
        await one.current(doc.id)
        _, token = await two.claim(doc.id, "late", None)
        turn = await two.wait_turn(doc.id, token, 0)
        accepted = await one.move(doc.id, token, turn["seq"], [turn["legal_moves"][0]])
        with pytest.raises(Refusal) as refused:  # a real refusal comes, from the game as read
            await one.move(doc.id, token, turn["seq"] + 5, [turn["legal_moves"][0]])
        for service in (one, two):
            await service.store.aclose()
        await service.store.redis.aclose()
        return accepted, refused

    accepted, refused = asyncio.run(scenario())
    assert accepted["accepted"] and accepted["seat"] == 1
    assert refused.value.code == "seq-mismatch" and refused.value.extra["current_seq"] == 1


def test_a_listening_process_spends_one_round_trip_per_decision(valkey):
    """While it hears a game's commits, a process tells its turns from the game it remembers:
    a bot's loop costs the commit alone, and each turn equals what a cold replica reads (one
    that remembers no game: a replica that remembers one may not have heard the last commit
    yet, and answer as just before it)."""

    async def scenario():
        service, cold = _counted(valkey), _counted(valkey, recent_games=0)
        watcher = await _listening(service)
        doc, tokens = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        used, same = [], []
        for _ in range(3):
            for seat, token in enumerate(tokens):
                trips, turn = await _trips(service.wait_turn(doc.id, token, 0))
                same.append(turn == await cold.wait_turn(doc.id, token, 0))
                move = service.move(doc.id, token, turn["seq"], [turn["legal_moves"][0]])
                more, accepted = await _trips(move)
                assert accepted["accepted"] and accepted["seat"] == seat
                used.append(trips + more)
        await _close([watcher], service, cold)
        return used, same

    used, same = asyncio.run(scenario())
    assert used == [2] + [1] * 5  # the first turn reads the game, once its channel is heard
    assert all(same)


def test_a_commit_of_another_replica_is_heard(valkey):
    """Replica ``one`` listens, with seat 0 waiting; ``two`` takes seat 1's decision. Seat 0
    is woken, and ``one``, which heard its remembered game is out of date, reads it."""

    async def scenario():
        one, two = _counted(valkey), _counted(valkey)
        watcher = await _listening(one)
        doc, tokens, turns = await _seat_0_decided(one)
        waiting = await _seat_0_waits(one, doc, tokens)
        await two.move(doc.id, tokens[1], 0, [turns[1]["legal_moves"][0]])
        woken = await asyncio.wait_for(waiting, 2)
        trips, seat_1 = await _trips(one.wait_turn(doc.id, tokens[1], 0))
        theirs = await two.wait_turn(doc.id, tokens[1], 0)
        await _close([watcher], one, two)
        return woken, trips, seat_1, theirs

    woken, trips, seat_1, theirs = asyncio.run(scenario())
    assert woken["status"] == "your_turn" and woken["seq"] == 1
    assert seat_1 == theirs and seat_1["seq"] == 1
    assert trips == 0, "seat 0's wake read the game; it is remembered as it is now"


def test_a_listening_process_refuses_only_from_the_game_as_read(valkey):
    """Replica ``two`` seats a player whose claim ``one`` has not heard yet: asking ``one``
    for the turn, the player is not refused by ``one``'s remembered game, which knows no such
    token, but answered from the game as read."""

    async def scenario():
        one, two = _counted(valkey), _counted(valkey)
        watcher = await _listening(one)
        doc, _ = await one.create("choice", {}, [{"name": "a"}, {}], 0)
        one._heard_commit = lambda *heard: None  # the claim's commit is still on its way
        _, token = await two.claim(doc.id, "late", None)
        turn = await one.wait_turn(doc.id, token, 0)
        del one._heard_commit
        await _close([watcher], one, two)
        return turn

    turn = asyncio.run(scenario())
    assert turn["status"] == "your_turn" and turn["seat"] == 1


def test_a_game_read_before_listening_began_is_not_remembered(valkey):
    """A read in flight when the process starts hearing the game may miss a commit no one
    will tell it of: what it brings is used once, not remembered."""

    async def scenario():
        service = _counted(valkey)
        doc, _ = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        service.memory.recent.clear()
        release = asyncio.Event()
        load = service.store.load

        async def slow_load(game_id):
            stored = await load(game_id)
            await release.wait()
            return stored

        service.store.load = slow_load
        reading = asyncio.create_task(service.current(doc.id))
        await asyncio.sleep(0.05)
        await service.games.follow(doc.id)
        release.set()
        game = await reading
        kept = service.memory.remembered(doc.id)
        heard = service.memory.hears(doc.id)
        await service.store.aclose()
        await service.store.redis.aclose()
        return game, kept, heard

    game, kept, heard = asyncio.run(scenario())
    assert game.doc.status == "running" and kept is None and heard


def test_a_process_that_stops_hearing_a_game_looks_at_it_again_and_hears_it_again(
    valkey, redis_client
):
    """The connection that hears the game's channel is cut while seat 0 waits: the process
    stops hearing the game (forgetting what it remembered of it), the seat looks at its game
    again and keeps waiting, the channel is subscribed again on a new connection, and a
    decision taken elsewhere still wakes it."""

    async def scenario():
        one, two = _counted(valkey), _counted(valkey)
        watcher = await _listening(one)
        doc, tokens, turns = await _seat_0_decided(one)
        waiting = await _seat_0_waits(one, doc, tokens)
        lost = []
        stopped_hearing = one.memory.stopped_hearing

        def stopped(game_id):
            lost.append((game_id, one.memory.remembered(game_id) is not None))
            stopped_hearing(game_id)
            lost.append((game_id, one.memory.remembered(game_id) is not None))

        one.store.hearing.lost = stopped
        redis_client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
        for _ in range(400):
            if lost and one.memory.hears(doc.id):
                break
            await asyncio.sleep(0.005)
        heard_again = one.memory.hears(doc.id)
        still_waiting = not waiting.done()
        await two.move(doc.id, tokens[1], 0, [turns[1]["legal_moves"][0]])
        woken = await asyncio.wait_for(waiting, 2)
        await _close([watcher], one, two)
        return lost, heard_again, still_waiting, woken

    lost, heard_again, still_waiting, woken = asyncio.run(scenario())
    assert lost[-1][1] is False and lost[0][0] == lost[-1][0]
    assert heard_again and still_waiting
    assert woken["status"] == "your_turn" and woken["seq"] == 1


def test_finished_games_expire_after_the_retention_and_their_stream_sooner(valkey, redis_client):
    async def scenario():
        redis = Redis.from_url(valkey)
        service = Referee(redis, retention_s=3600, events_retention_s=120, idle_ttl_s=900)
        doc, tokens = await service.create(
            "chopta", {"target": 1}, [{"name": "a"}, {"name": "b"}], 0
        )
        running_ttl = [
            await redis.ttl(key) for key in (GameKeys(doc.id).doc, GameKeys(doc.id).events)
        ]
        while True:
            game = await service.current(doc.id)
            if game.doc.status == "finished":
                break
            seat = game.ruleset.to_decide(game.state)[0]
            seq = game.ruleset.seq(game.state, seat)
            move = game.ruleset.legal_moves(game.state, seat)[0]
            await service.move(doc.id, tokens[seat], seq, [move])
        ttls = [await redis.ttl(key) for key in GameKeys(doc.id).all()]
        await redis.aclose()
        return running_ttl, ttls

    running_ttl, (doc_ttl, decisions_ttl, events_ttl) = asyncio.run(scenario())
    assert all(800 < ttl <= 900 for ttl in running_ttl), "a game with no deadline expires too"
    assert 3500 < doc_ttl <= 3600 and 3500 < decisions_ttl <= 3600
    assert 100 < events_ttl <= 120, "the event stream goes first; the record stays"


@pytest.mark.parametrize("ruleset", ["choice", "chopta"])
def test_the_seed_is_kept_back_until_the_end(http, ruleset):
    from helpers import create

    game = create(http, ruleset, 2)
    view = http.get(f"/v1/games/{game['id']}").json()
    record = http.get(f"/v1/games/{game['id']}/record").json()
    assert "seed" not in view and record["seed"] is None and record["dice"] == []


@pytest.mark.parametrize("listening", [True], ids=["listening"])
def test_an_entrant_waiting_on_its_opponent_is_woken_by_the_move_not_by_a_timer(valkey, listening):
    """``/v1/me/next`` waits on the game's commits, heard on its channel: an idle wait costs
    a few round trips."""
    from referee.core.pairing import TournamentSpec

    async def scenario():
        redis = counted_redis(valkey)
        games = Referee(redis)
        watchers = [await _listening(games)] if listening else []
        tournaments = TournamentService(games.games, TournamentStore(redis))
        doc = await tournaments.create(TournamentSpec("chopta", entrants=2, deadline_s=0))
        tokens = [(await tournaments.register(doc.id, name))[1] for name in ("a", "b")]
        first = await tournaments.next_decision(tokens[0], 0)
        mover, waiter = tokens if first["status"] == "your_turn" else tokens[::-1]

        async def move_later():
            await asyncio.sleep(1.0)
            turn = await tournaments.next_decision(mover, 0)
            move = turn["turn"]["legal_moves"][0]
            await games.move(turn["game_id"], turn["seat_token"], turn["turn"]["seq"], [move])

        mover_task = asyncio.create_task(move_later())
        before = Counted.round_trips
        began = time.monotonic()
        answer = await tournaments.next_decision(waiter, 10.0)
        waited = time.monotonic() - began
        used = Counted.round_trips - before
        await mover_task
        await _close(watchers, games)
        return answer, used, waited

    answer, used, waited = asyncio.run(scenario())
    assert answer["status"] == "your_turn"
    # the move comes after 1 s; a wait that missed it would end after its 5 s slice
    assert waited < 3.5, f"woken {waited:.1f} s in: by a timer, not by the move"
    # polling every 50 ms for that second would take more than 60 (three per look)
    assert used < 25, used


def test_a_round_created_again_after_a_crash_adopts_its_games_instead_of_orphaning_them(valkey):
    """A crash between creating a round's games and saving the tournament: the next attempt
    finds the same games (same ids, seats answering to the same entrants) and creates no
    others."""
    from referee.core.pairing import TournamentSpec, next_round

    async def scenario():
        redis = Redis.from_url(valkey)
        games = Referee(redis)
        tournaments = TournamentService(games.games, TournamentStore(redis))
        spec = TournamentSpec("choice", entrants=4, games_per_pairing=2, deadline_s=0)
        doc = await tournaments.create(spec)
        tokens = [(await tournaments.register(doc.id, name))[1] for name in "abcd"]
        _, doc = await tournaments.load(doc.id)
        tables = next_round(doc.spec, [], 1)
        before = len([key async for key in redis.scan_iter("{game:*}:doc")])
        crashed = await tournaments.create_round(doc, 1, tables)  # never saved
        listed = [
            await redis.zscore(part_for(GAMES, GameKeys(t.game_id).doc), t.game_id) for t in crashed
        ]
        await asyncio.sleep(0.01)
        again = await tournaments.create_round(doc, 1, tables)
        after = len([key async for key in redis.scan_iter("{game:*}:doc")])
        # listed once, in the write that created it: the attempt again moves no game's place
        assert listed == [
            await redis.zscore(part_for(GAMES, GameKeys(t.game_id).doc), t.game_id) for t in again
        ]
        assert None not in listed
        # the adopted game's second seat answers to its entrant's own token
        table = again[0]
        game = await games.current(table.game_id)
        seat = game.seat_of(tokens[table.entrants[1]])
        await redis.aclose()
        return crashed, again, after - before, seat

    crashed, again, created, seat = asyncio.run(scenario())
    assert [t.game_id for t in crashed] == [t.game_id for t in again]
    assert all(t.seat_tokens == [] for t in again)  # no token kept in clear
    assert created == len(again) and seat == 1


def test_an_entrant_with_several_games_waits_on_all_of_them(valkey):
    """Gauntlet CHOPTA, 4 entrants: entrant 0 sits first at its three tables, one round.

    Once it has moved at all three, its wait reads its own games and then waits on their
    events together, and an opponent's move wakes it."""
    from referee.core.pairing import TournamentSpec

    async def scenario():
        redis = counted_redis(valkey)
        games = Referee(redis)
        tournaments = TournamentService(games.games, TournamentStore(redis))
        spec = TournamentSpec("chopta", format="gauntlet", entrants=4, deadline_s=0)
        doc = await tournaments.create(spec)
        tokens = [(await tournaments.register(doc.id, name))[1] for name in "abcd"]
        _, doc = await tournaments.load(doc.id)
        assert [t.entrants for t in doc.rounds[0]] == [[0, 1], [0, 2], [0, 3]]
        for table in doc.rounds[0]:
            game = await games.current(table.game_id)
            move = game.ruleset.legal_moves(game.state, 0)[0]
            await games.move(table.game_id, tokens[0], 0, [move])

        before = Counted.round_trips
        idle = await tournaments.next_decision(tokens[0], 1.0)
        idle_trips = Counted.round_trips - before

        table = doc.rounds[0][2]

        async def reply_later():  # entrant 3 answers at the table it shares with 0
            await asyncio.sleep(0.5)
            game = await games.current(table.game_id)
            move = game.ruleset.legal_moves(game.state, 1)[0]
            await games.move(table.game_id, tokens[3], 0, [move])

        mover = asyncio.create_task(reply_later())
        woken = await tournaments.next_decision(tokens[0], 4.0)
        await mover
        await redis.aclose()
        return idle, idle_trips, woken, table.game_id

    idle, idle_trips, woken, game_id = asyncio.run(scenario())
    assert idle["status"] == "waiting"
    # a look (the tournament and its own three games), another once their channels are heard
    # (a commit may have gone untold before), one wait, a last look; polling would take dozens
    assert idle_trips <= 14, idle_trips
    assert woken["status"] == "your_turn" and woken["game_id"] == game_id


def test_a_game_stored_without_its_newest_event_id_still_gives_one(valkey):
    """Games written before the document kept ``e``: a long-poll must not wait from "0"."""

    async def scenario():
        redis = Redis.from_url(valkey)
        store = GameStore(redis)
        doc, _ = await Referee(redis).create("choice", {}, [{"name": "a"}], 0)
        kept = (await store.load(doc.id))[2]
        await redis.hdel(GameKeys(doc.id).doc, "e")
        recovered = (await store.load(doc.id))[2]
        newest = (await redis.xrevrange(GameKeys(doc.id).events, count=1))[0][0].decode()
        await redis.aclose()
        return kept, recovered, newest

    kept, recovered, newest = asyncio.run(scenario())
    assert kept == recovered == newest != "0"


def test_a_form_shared_between_readers_is_not_read_past_a_deadline(valkey):
    """Readers of one remembered form share what the first decoded; once a deadline has
    passed, the game is decoded again and the timeout applied, never read from the share."""

    async def scenario():
        service = _counted(valkey)
        watcher = await _listening(service)
        doc, tokens = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 1)
        first = await service.wait_turn(doc.id, tokens[0], 0)
        again = await service.wait_turn(doc.id, tokens[0], 0)
        shared = service.memory.shared_reads.get(doc.id)
        await asyncio.sleep(1.2)
        late = await service.wait_turn(doc.id, tokens[0], 0)
        record = await service.store.decisions(doc.id)
        await _close([watcher], service)
        return first, again, shared, late, record

    first, again, shared, late, record = asyncio.run(scenario())
    assert again == first and first["seq"] == 0
    assert shared is not None, "the second reader found the first one's decoded form"
    assert late["seq"] == 1, late  # the timeouts of roll 0 were applied, and written
    assert [b'"timeout":true' in decision for decision in record] == [True, True]


def test_seats_reading_one_form_share_its_public_view_and_each_sees_its_own(valkey):
    """The public part of a turn's view is built once for every reader of a shared form;
    each seat still gets its own "you", and the next form is viewed anew."""

    async def scenario():
        service = _counted(valkey)
        watcher = await _listening(service)
        doc, tokens = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        turns = [await service.wait_turn(doc.id, token, 0) for token in tokens]
        game = await service.games.load(doc.id)  # decoded anew, shared with nobody
        expected = [game.ruleset.view(game.state, seat) for seat in range(2)]
        await service.move(doc.id, tokens[0], 0, [turns[0]["legal_moves"][0]])
        after = [await service.wait_turn(doc.id, token, 0) for token in tokens]
        await _close([watcher], service)
        return turns, expected, after

    turns, expected, after = asyncio.run(scenario())
    assert [turn["view"] for turn in turns] == expected
    assert turns[0]["view"].seats is turns[1]["view"].seats, "built twice"
    assert [turn["view"].you.seat for turn in turns] == [0, 1]
    assert [s.decided for s in after[1]["view"].seats] == [True, False]
    assert after[0]["view"].you.roll_index == 1
    assert after[0]["view"].seats is after[1]["view"].seats


def test_the_turns_after_a_decision_share_the_game_it_stored_without_decoding_it(
    valkey, monkeypatch
):
    """The decision's own game, as stored, answers the seats' next turns: nothing is decoded
    again, and the answers are those of the game as read anew."""
    decoded: list[bytes] = []

    def counting(blob: bytes):
        decoded.append(blob)
        return real(blob)

    real = game_module.decode_doc

    async def scenario():
        service = _counted(valkey)
        watcher = await _listening(service)
        doc, tokens = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        turns = [await service.wait_turn(doc.id, token, 0) for token in tokens]
        for seat, token in enumerate(tokens):
            await service.move(doc.id, token, 0, [turns[seat]["legal_moves"][0]])
        monkeypatch.setattr(game_module, "decode_doc", counting)
        after = [await service.wait_turn(doc.id, token, 0) for token in tokens]
        monkeypatch.undo()
        cold = _counted(valkey)
        expected = [await cold.wait_turn(doc.id, token, 0) for token in tokens]
        await _close([watcher], service, cold)
        return after, expected

    after, expected = asyncio.run(scenario())
    assert decoded == []
    assert after == expected and [turn["seq"] for turn in after] == [1, 1]
    assert all(turn["status"] == "your_turn" for turn in after)


def test_a_games_turn_taking_is_forgotten_once_its_decisions_end_cancelled_or_refused(valkey):
    """A decision waiting for the game's turn and cancelled, or refused, leaves nothing
    behind: the game's queue lasts only while a decision holds or waits for it."""

    async def scenario():
        service = _counted(valkey)
        doc, tokens = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        turn = await service.wait_turn(doc.id, tokens[0], 0)
        queue = service.memory.one_at_a_time(doc.id)
        async with queue:  # the game's turn, held
            waiting = asyncio.create_task(service.move(doc.id, tokens[0], 0, turn["legal_moves"]))
            await asyncio.sleep(0.05)
            held = (waiting.done(), queue.users)
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
            left = queue.users
        after_cancel = dict(service.memory.turns)
        with pytest.raises(Refusal):
            await service.move(doc.id, tokens[0], 7, [turn["legal_moves"][0]])
        after_refusal = dict(service.memory.turns)
        accepted = await service.move(doc.id, tokens[0], 0, [turn["legal_moves"][0]])
        await service.store.aclose()
        return held, left, after_cancel, after_refusal, accepted, dict(service.memory.turns)

    held, left, after_cancel, after_refusal, accepted, after = asyncio.run(scenario())
    assert held == (False, 2) and left == 1
    assert after_cancel == after_refusal == after == {}
    assert accepted["accepted"] and accepted["seq"] == 0


def test_a_games_turn_passes_in_order_past_waiters_cancelled_before_or_after_their_turn():
    """The turn goes to the waiters in the order they came; one cancelled while it waits is
    passed over, one cancelled once handed the turn hands it on; the lock is forgotten."""
    from referee.service.memory import Memory

    async def scenario():
        memory = Memory()
        order: list[str] = []
        tasks: dict[str, asyncio.Task] = {}

        async def decide(name: str, then=None) -> None:
            async with memory.one_at_a_time("g"):
                order.append(name)
                await asyncio.sleep(0.01)
            if then is not None:
                tasks[then].cancel()  # handed the turn already, not yet running

        for name, then in (("a", "b"), ("b", None), ("c", None), ("d", None), ("e", None)):
            tasks[name] = asyncio.create_task(decide(name, then))
            await asyncio.sleep(0)
        tasks["c"].cancel()  # waiting
        results = await asyncio.gather(*tasks.values(), return_exceptions=True)
        return order, [type(r).__name__ for r in results], dict(memory.turns)

    order, results, turns = asyncio.run(scenario())
    assert order == ["a", "d", "e"]
    assert results == ["NoneType", "CancelledError", "CancelledError", "NoneType", "NoneType"]
    assert turns == {}


def test_a_commit_cut_off_with_its_connection_is_sent_again_and_lands_once(valkey):
    """The shared connection dies with a commit on it (Redis holds the commit: clients are
    paused): the store sends it again on a new connection, and the decision lands once."""

    async def scenario():
        admin = Redis.from_url(valkey)
        service = Referee(Redis.from_url(valkey))
        doc, tokens = await service.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        turn = await service.wait_turn(doc.id, tokens[0], 0)
        shared_id = await service.store.shared.execute("CLIENT", "ID")
        await admin.execute_command("CLIENT", "PAUSE", 400, "WRITE")
        moving = asyncio.create_task(service.move(doc.id, tokens[0], 0, [turn["legal_moves"][0]]))
        await asyncio.sleep(0.1)
        killed = await admin.execute_command("CLIENT", "KILL", "ID", shared_id)
        accepted = await asyncio.wait_for(moving, 5)
        new_id = await service.store.shared.execute("CLIENT", "ID")
        record = await service.store.decisions(doc.id)
        await service.store.aclose()
        await service.store.aclose()
        await service.store.redis.aclose()
        await admin.aclose()
        return killed, accepted, new_id != shared_id, record

    killed, accepted, reconnected, record = asyncio.run(scenario())
    assert killed in (1, True) and reconnected
    assert accepted["accepted"] and accepted["seq"] == 0
    assert len(record) == 1 and b'"seat":0' in record[0]


async def _three_seats(service: Referee) -> tuple:
    """A 3-seat CHOICE game, its first turns read: doc, tokens, each seat's legal moves."""
    seats = [{"name": name} for name in "abc"]
    doc, tokens = await service.create("choice", {}, seats, 0)
    turns = [await service.wait_turn(doc.id, token, 0) for token in tokens]
    return doc, tokens, [turn["legal_moves"] for turn in turns]


def test_a_turn_asked_while_a_commit_of_its_game_is_on_its_way_waits_for_it(valkey):
    """Seat 1's commit is on its way, and heard first (the commit's message can beat its
    reply, and a form older than a commit heard is dropped): seat 0's turn, asked meanwhile,
    waits for the reply instead of reading the game, and equals what a cold replica reads."""

    async def scenario():
        service, cold = _counted(valkey), _counted(valkey)
        watcher = await _listening(service)
        doc, tokens, turns = await _seat_0_decided(service)
        deciding = asyncio.ensure_future(
            service.move(doc.id, tokens[1], 0, [turns[1]["legal_moves"][0]])
        )
        for _ in range(2):  # queued, then written; not answered
            await asyncio.sleep(0)
        assert doc.id in service.memory.in_flight
        del service.memory.recent[doc.id]  # as hearing the commit before its reply does
        trips, turn = await _trips(service.wait_turn(doc.id, tokens[0], 0))
        accepted = await deciding
        theirs = await cold.wait_turn(doc.id, tokens[0], 0)
        await _close([watcher], service, cold)
        return trips, turn, accepted, theirs

    trips, turn, accepted, theirs = asyncio.run(scenario())
    assert accepted["accepted"]
    assert turn["status"] == "your_turn" and turn["seq"] == 1 and turn == theirs
    assert trips == 0, "no read: the commit was sent before"


def test_a_games_simultaneous_decisions_are_sent_before_the_first_is_answered(valkey):
    """Two seats decide at once in one process: the second builds on the first's commit while
    it is on its way and is sent behind it, in the same write (it does not wait for the
    first's reply), and both land."""

    async def scenario():
        service = _counted(valkey)
        doc, tokens, moves = await _three_seats(service)
        deciding = [
            asyncio.ensure_future(service.move(doc.id, tokens[seat], 0, moves[seat][:1]))
            for seat in (0, 1)
        ]
        before = Counted.round_trips
        for _ in range(2):  # each decision's first step; then what they queued, written
            await asyncio.sleep(0)
        answered = [d.done() for d in deciding]
        sent = Counted.round_trips - before
        both = await asyncio.gather(*deciding)
        cold = _counted(valkey)
        turns = [await cold.wait_turn(doc.id, token, 0) for token in tokens]
        record = await cold.store.decisions(doc.id)
        await _close([], service, cold)
        return both, sent, answered, turns, record

    both, sent, answered, turns, record = asyncio.run(scenario())
    assert [accepted["seat"] for accepted in both] == [0, 1]
    assert sent == 1 and answered == [False, False], "both commits in one write"
    assert [turn["seq"] for turn in turns] == [1, 1, 0] and len(record) == 2


def test_a_decision_chained_on_a_commit_that_loses_its_race_is_taken_again(valkey):
    """Replica ``two`` takes seat 0's decision; ``one``, on the game as it knew it, takes
    seats 1 and 2 at once, the second chained on the first. The first loses its race, so
    the second expects a version that was never written: it must not pass for the one
    ``two`` wrote (that would drop decisions). Both are taken again; all three land once."""

    async def scenario():
        one, two = _counted(valkey), _counted(valkey)
        doc, tokens, moves = await _three_seats(one)
        await two.move(doc.id, tokens[0], 0, moves[0][:1])
        both = await asyncio.gather(
            *(one.move(doc.id, tokens[seat], 0, moves[seat][:1]) for seat in (1, 2))
        )
        cold = _counted(valkey)
        turns = [await cold.wait_turn(doc.id, token, 0) for token in tokens]
        record = await cold.store.decisions(doc.id)
        await _close([], one, two, cold)
        return both, turns, record

    both, turns, record = asyncio.run(scenario())
    assert [accepted["seat"] for accepted in both] == [1, 2]
    assert all(turn["seq"] == 1 for turn in turns), turns
    assert [sum(b'"seat":%d' % seat in d for d in record) for seat in range(3)] == [1, 1, 1]


def test_a_retry_sent_while_its_decision_is_on_its_way_gets_the_same_answer(valkey):
    """A bot sends its decision again before the first reply came: the second builds on the
    first, on its way, finds the seq decided, and answers from the record once the first
    has landed, the same answer."""

    async def scenario():
        service = _counted(valkey)
        doc, tokens, moves = await _three_seats(service)
        first, again = await asyncio.gather(
            service.move(doc.id, tokens[0], 0, moves[0][:1]),
            service.move(doc.id, tokens[0], 0, moves[0][:1]),
        )
        try:
            await asyncio.gather(
                service.move(doc.id, tokens[1], 0, moves[1][:1]),
                service.move(doc.id, tokens[1], 0, moves[1][1:2]),
            )
            refused = None
        except Refusal as error:
            refused = error.code
        record = await service.store.decisions(doc.id)
        await _close([], service)
        return first, again, refused, record

    first, again, refused, record = asyncio.run(scenario())
    sent = [msgspec.json.decode(msgspec.json.encode(answer)) for answer in (first, again)]
    assert sent[0] == sent[1] and first["accepted"]
    assert refused == "seq-already-decided"
    assert len(record) == 2
