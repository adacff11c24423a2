"""A decision with its next turn (``Seats.move_then_turn``, the bots' one request) answers the
turn from the game the decision just stored, shared as proven current, not by looking the game
up again; and what it answers is what a separate turn request answers. Against the real
embedded Valkey."""

from __future__ import annotations

import asyncio
import time

from helpers import counted_redis

from referee.service import GameService, Seats
from referee.store import GameStore


async def _started(url: str) -> tuple[GameService, Seats, str, list, dict]:
    """A 2-seat CHOICE game: its services, id, tokens and seat 0's first turn."""
    games = GameService(GameStore(counted_redis(url)))
    seats = Seats(games)
    game, tokens = await games.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
    gid = game.doc.id
    return games, seats, gid, tokens, await seats.wait_turn(gid, tokens[0], 0)


async def _asked_again(games: GameService, seats: Seats, gid: str, token: str) -> dict:
    """The seat's turn asked on its own, as any turn request asks it; then the store closed."""
    again = await seats.wait_turn(gid, token, 0)
    await games.store.aclose()
    await games.store.redis.aclose()
    return again


def _lookups(games: GameService, monkeypatch) -> list[str]:
    """The games looked up (``GameService.current``) from now on, by id."""
    looked_up: list[str] = []
    current = games.current

    async def counted(*args, **kwargs):
        looked_up.append(args[0])
        return await current(*args, **kwargs)

    monkeypatch.setattr(games, "current", counted)
    return looked_up


def test_the_deciders_turn_comes_from_the_game_it_just_stored(valkey, monkeypatch):
    async def scenario():
        games, seats, gid, tokens, first = await _started(valkey)
        looked_up = _lookups(games, monkeypatch)
        answer = await seats.move_then_turn(gid, tokens[0], 0, [first["legal_moves"][0]], 0)
        lookups = len(looked_up)
        again = await _asked_again(games, seats, gid, tokens[0])
        return answer, lookups, again

    answer, lookups, again = asyncio.run(scenario())
    assert answer["accepted"] and answer["next_seq"] == 1
    assert answer["turn"]["status"] == "waiting"  # seat 1 has not decided yet
    assert lookups == 0, "the decider's turn looked the game up again"
    assert answer["turn"] == again


def test_a_decided_game_no_longer_shared_is_looked_up(valkey, monkeypatch):
    """Where the stored game is not what the process shares as current (here: forgotten), the
    turn is looked up as any turn is, and answers alike."""

    async def scenario():
        games, seats, gid, tokens, first = await _started(valkey)
        share = games.memory.share
        monkeypatch.setattr(games.memory, "share", lambda *a: None)  # nothing shared
        answer = await seats.move_then_turn(gid, tokens[0], 0, [first["legal_moves"][0]], 0)
        monkeypatch.setattr(games.memory, "share", share)
        again = await _asked_again(games, seats, gid, tokens[0])
        return answer, again

    answer, again = asyncio.run(scenario())
    assert answer["turn"] == again
    assert answer["turn"]["seq"] == 1


def test_a_waiting_seat_woken_by_a_commit_takes_the_game_it_shares(valkey, monkeypatch):
    """Seat 1 decides and waits for seat 0; seat 0's decision in the same process wakes it,
    and its turn is told from the game seat 0's decision stored and shared, not looked up."""

    async def scenario():
        games, seats, gid, tokens, first = await _started(valkey)
        other = await seats.wait_turn(gid, tokens[1], 0)
        waiting = asyncio.create_task(
            seats.move_then_turn(gid, tokens[1], 0, [other["legal_moves"][0]], 10)
        )
        await asyncio.sleep(0.3)
        assert not waiting.done(), "seat 1 did not wait for seat 0"
        looked_up = _lookups(games, monkeypatch)
        await seats.move(gid, tokens[0], 0, [first["legal_moves"][0]])
        woken = await asyncio.wait_for(waiting, 5)
        lookups = len(looked_up)
        again = await _asked_again(games, seats, gid, tokens[1])
        return woken, lookups, again

    woken, lookups, again = asyncio.run(scenario())
    assert woken["turn"]["status"] == "your_turn" and woken["turn"]["seq"] == 1
    assert lookups == 0, "the woken seat looked the game up again"
    assert woken["turn"] == again


def test_the_game_shared_now_is_the_proven_form_while_heard_and_no_deadline_is_due(
    valkey, monkeypatch
):
    """``GameService.shared_now`` (the league's look at a bot's games after each decision):
    the game the readers share while its commits are heard and its form remembered; nothing
    once the commits are no longer heard, or once a deadline of the game is due."""

    async def scenario():
        games = GameService(GameStore(counted_redis(valkey)))
        seats = Seats(games)
        game, tokens = await games.create("choice", {}, [{"name": "a"}, {"name": "b"}], 30)
        gid = game.doc.id
        await seats.wait_turn(gid, tokens[0], 0)  # heard, read, shared with its readers
        shared = games.memory.shared_reads[gid]
        found = games.shared_now(gid)
        later = time.time() + 31  # past the 30 s deadline of a seat
        monkeypatch.setattr("referee.service.games.time.time", lambda: later)
        due = games.shared_now(gid)
        monkeypatch.undo()
        games.memory.stopped_hearing(gid)
        unheard = games.shared_now(gid)
        await _asked_again(games, seats, gid, tokens[0])
        return shared, found, due, unheard

    shared, found, due, unheard = asyncio.run(scenario())
    assert found is shared[1]
    assert due is None
    assert unheard is None


def test_a_decision_on_the_shared_game_changes_a_copy_and_decodes_no_document(valkey, monkeypatch):
    """Seat 0's decision shares the game it stored; seat 1's decision then builds on a copy of
    that game (``LoadedGame.copied``: the document is not decoded again), and the shared game
    stays exactly as it was: a reader holding it sees nothing of a decision not yet stored.
    What the copy commits is what a decision on the decoded form commits."""
    from referee.core import game as game_module
    from referee.core.documents import encode

    async def scenario():
        games, seats, gid, tokens, first = await _started(valkey)
        other = await seats.wait_turn(gid, tokens[1], 0)
        await seats.move_then_turn(gid, tokens[0], 0, [first["legal_moves"][0]], 0)
        stored, shared = games.memory.shared_reads[gid]
        before = (encode(shared.doc), encode(shared.state), shared.turn(0), shared.turn(1))
        decoded: list[bytes] = []
        decode_doc = game_module.decode_doc

        def counted(blob):
            decoded.append(blob)
            return decode_doc(blob)

        monkeypatch.setattr(game_module, "decode_doc", counted)
        copy = games.decoded(gid, stored)
        from_form = game_module.LoadedGame.read(stored.version, stored.blob, "0", time.time())
        made = len(decoded)
        monkeypatch.undo()
        assert copy is not shared and copy.doc.seats is not shared.doc.seats
        assert encode(copy.doc) == encode(from_form.doc) and copy.state == from_form.state
        answer = await seats.move(gid, tokens[1], 0, [other["legal_moves"][0]])
        after = (encode(shared.doc), encode(shared.state), shared.turn(0), shared.turn(1))
        await _asked_again(games, seats, gid, tokens[1])
        return made, before, after, answer

    made, before, after, answer = asyncio.run(scenario())
    assert made == 1, "only the form read to compare with was decoded"
    assert answer["accepted"]
    assert after == before, "a decision changed the game its readers share"
