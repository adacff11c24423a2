"""The global sets split across slots (the deadlines' hints and the games' index): a game's
entries go to the part of its slot range, every part is swept and listed, merged, and the
single sets of older versions are still read."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from referee.service import GameService
from referee.store import GameKeys, GameStore
from referee.store.cluster import SLOTS, part_for, slot_of
from referee.store.games import DEADLINES, GAMES, OLD_DEADLINES, OLD_GAMES


def test_each_part_lives_in_its_own_range_of_slots():
    for parts in (DEADLINES, GAMES):
        assert len(parts) == 16
        ranges = [slot_of(part) * len(parts) // SLOTS for part in parts]
        assert ranges == list(range(16))
    # a game's part is the one of its own slot's range
    for game_id in ("0" * 16, "f" * 16, "0123456789abcdef"):
        doc = GameKeys(game_id).doc
        part = part_for(DEADLINES, doc)
        assert slot_of(part) * 16 // SLOTS == slot_of(doc) * 16 // SLOTS


def test_deadlines_are_hinted_in_parts_and_every_part_is_swept_with_the_old_set(tmp_path):
    """On a Valkey of its own: no other test's sweeper resolves these games first."""
    from referee.store.embedded import start_embedded

    valkey = start_embedded(tmp_path / "valkey", keep_alive=False)

    async def scenario():
        redis = Redis.from_url(valkey.url)
        games = GameService(GameStore(redis))
        made = []
        for _ in range(24):  # games in many parts
            game, _ = await games.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0.3)
            made.append(game.doc.id)
        versions = [(await games.store.load(g)).version for g in made]
        parts = {part_for(DEADLINES, GameKeys(g).doc) for g in made}
        hinted = [await redis.zscore(part_for(DEADLINES, GameKeys(g).doc), g) for g in made]
        # an older version's hint, in the single set
        old, _ = await games.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0.3)
        await games.store.forget_deadline(old.doc.id, time.time() + 60)
        await redis.zadd(OLD_DEADLINES, {old.doc.id: time.time() + 0.3})
        versions.append((await games.store.load(old.doc.id)).version)
        await asyncio.sleep(0.5)
        due = set(await games.store.due(time.time(), limit=1000))
        resolved = await games.sweep()
        after = [(await games.store.load(g)).version for g in [*made, old.doc.id]]
        timed_out = [a != b for a, b in zip(after, versions, strict=True)]
        left = await redis.zscore(OLD_DEADLINES, old.doc.id)
        await games.store.aclose()
        await redis.aclose()
        return made, old.doc.id, parts, hinted, due, resolved, timed_out, left

    try:
        made, old, parts, hinted, due, resolved, timed_out, left = asyncio.run(scenario())
    finally:
        valkey.stop()
    assert len(parts) > 4 and all(score is not None for score in hinted)
    assert {*made, old} <= due and resolved >= len(made) + 1
    assert all(timed_out), "a deadline in some part was not swept"
    assert left is None, "the old set's hint stays where it is swept for ever"


def test_a_listing_merges_every_part_and_the_old_index_newest_first_page_by_page(valkey):
    async def scenario():
        redis = Redis.from_url(valkey)
        games = GameService(GameStore(redis))
        made = []
        for _ in range(12):
            game, _ = await games.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
            made.append(game.doc.id)
        old, _ = await games.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0)
        await redis.zrem(part_for(GAMES, GameKeys(old.doc.id).doc), old.doc.id)
        await redis.zadd(OLD_GAMES, {old.doc.id: old.doc.created})
        seen, before = [], None
        while True:
            page, before = await games.store.listed(before, 5)
            seen += [(gid, created) for gid, created, _, _ in page]
            if before is None or len(seen) > 200:
                break
            before = float(before)
        await games.store.aclose()
        await redis.aclose()
        return made, old.doc.id, seen

    made, old, seen = asyncio.run(scenario())
    ids = [gid for gid, _ in seen]
    assert {*made, old} <= set(ids) and len(ids) == len(set(ids))
    times = [created for _, created in seen]
    assert times == sorted(times, reverse=True)
    parts = {part_for(GAMES, GameKeys(g).doc) for g in made}
    assert len(parts) > 4


def test_the_replicas_take_the_deadlines_parts_in_turn(tmp_path):
    """Two replicas sweep with a lease of 0.5 s: the first takes every part with a game due
    and reads it, the second, within the lease, reads nothing; once the lease has passed, the
    second takes its turn."""
    from referee.store.embedded import start_embedded

    valkey = start_embedded(tmp_path / "valkey", keep_alive=False)

    async def scenario():
        one, two = Redis.from_url(valkey.url), Redis.from_url(valkey.url)
        first, second = GameService(GameStore(one)), GameService(GameStore(two))
        made = []
        for _ in range(8):
            game, _ = await first.create("choice", {}, [{"name": "a"}, {"name": "b"}], 0.2)
            made.append(game.doc.id)
        await asyncio.sleep(0.3)
        now = time.time()
        taken = await first.store.due(now, lease_s=0.5)
        meanwhile = await second.store.due(now, lease_s=0.5)
        await asyncio.sleep(0.6)
        later = await second.store.due(now, lease_s=0.5)
        for games in (first, second):
            await games.store.aclose()
            await games.store.redis.aclose()
        return made, taken, meanwhile, later

    try:
        made, taken, meanwhile, later = asyncio.run(scenario())
    finally:
        valkey.stop()
    assert set(made) <= set(taken)
    assert meanwhile == []
    assert set(made) <= set(later)


def test_a_decision_leaves_the_hint_early_and_the_sweep_moves_it_on(tmp_path):
    """A game's deadline hint is written when the game comes to have a deadline, not moved by
    each decision (its first deadline only ever moves later, so the hint stays early enough);
    a sweep that finds it early and nothing due moves it to the game's first deadline; the
    deadline itself is still taken on time. On a Valkey of its own (no other sweeper)."""
    from referee.core.documents import first_deadline
    from referee.service.seats import Seats
    from referee.store.embedded import start_embedded

    valkey = start_embedded(tmp_path / "valkey", keep_alive=False)
    deadline_s = 2.0  # decisions at half of it, the early sweep within the other half

    async def scenario() -> dict[str, object]:
        redis = Redis.from_url(valkey.url)
        games = GameService(GameStore(redis))
        seats = Seats(games)
        try:
            game, tokens = await games.create(
                "choice", {}, [{"name": "a"}, {"name": "b"}], deadline_s
            )
            gid, part = game.doc.id, part_for(DEADLINES, GameKeys(game.doc.id).doc)
            found: dict[str, object] = {"made": await redis.zscore(part, gid)}
            await asyncio.sleep(deadline_s / 2)
            # every seat decides what it has to: each one's deadline moves on
            for token in tokens:
                turn = await seats.wait_turn(gid, token, 0)
                if turn["status"] == "your_turn":
                    await seats.move(gid, token, turn["seq"], [turn["legal_moves"][0]])
            found["after_decisions"] = await redis.zscore(part, gid)
            version = (await games.store.load(gid)).version
            await asyncio.sleep(found["made"] - time.time() + 0.05)  # the hint is due
            found["swept_early"] = await games.sweep()
            found["untouched"] = (await games.store.load(gid)).version == version
            found["moved_to"] = await redis.zscore(part, gid)
            found["first"] = first_deadline((await games.current(gid)).doc)
            await asyncio.sleep(found["first"] - time.time() + 0.05)  # now a deadline passed
            found["swept_due"] = await games.sweep()
            found["timed_out"] = (await games.store.load(gid)).version != version
            return found
        finally:
            await games.store.aclose()
            await redis.aclose()

    try:
        found = asyncio.run(scenario())
    finally:
        valkey.stop()
    assert found["after_decisions"] == found["made"], "a decision moved the hint"
    assert found["swept_early"] == 1 and found["untouched"], "an early hint took a decision"
    assert found["moved_to"] == found["first"] > found["made"]
    assert found["swept_due"] == 1 and found["timed_out"]


def test_a_hint_is_forgotten_only_if_it_is_still_the_one_found_due(valkey):
    """The sweep drops a hint it found due for a game with no deadline left, unless a commit
    meanwhile hinted a deadline the game has now."""

    async def scenario() -> list[float | None]:
        redis = Redis.from_url(valkey)
        store = GameStore(redis)
        gid = "f00d" * 4
        part = part_for(DEADLINES, GameKeys(gid).doc)
        try:
            now = time.time()
            await redis.zadd(part, {gid: now + 60})  # hinted after the sweep found it due
            await store.forget_deadline(gid, now)
            kept = await redis.zscore(part, gid)
            await store.forget_deadline(gid, now + 61)
            return [kept, await redis.zscore(part, gid)]
        finally:
            await store.aclose()
            await redis.aclose()

    kept, left = asyncio.run(scenario())
    assert kept is not None and left is None
