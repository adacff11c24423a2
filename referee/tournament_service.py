"""Tournaments on the referee: entrants register, the referee creates each round's games when
the round before is over, and ``next_decision`` hands an entrant its next decision across all
of its games. No process owns a tournament: whoever touches it advances it, under a version
check, and only the holder of a short lock creates a round's games.

Fair play: the tables of a dice group are dealt the same dice and share no entrant; each game
of a group is sealed (``GameService.sealed``) until the whole group is over, and a table's
result counts in the view only then. No token is stored in clear: an entrant's seats answer
to the entrant's own token, whose hash the tournament and each of its games keep.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import secrets
import time
from typing import Any

import msgspec
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .games import GameError, get_ruleset
from .games import commitment as seed_commitment
from .games._common import check_seats
from .service import ApiError, GameService, holder_of, token_hash
from .tournaments import (
    GameResult,
    Standing,
    TournamentSpec,
    dice_groups,
    next_round,
    ranked,
    rate,
    spec_problem,
    total_rounds,
)

__all__ = ["TournamentService"]

MAX_RETRIES = 20


class Busy(ApiError):
    """The tournament changed under every try (503)."""

    def __init__(self) -> None:
        super().__init__(503, "busy", "the tournament changed too often; try again")


# Set the document if its version is the one read (creation: the empty version).
_SAVE = """
local v = redis.call('HGET', KEYS[1], 'v') or ''
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'blob', ARGV[3])
return 1
"""


class EntrantDoc(msgspec.Struct, array_like=True):
    name: str
    token_hash: bytes


class TableDoc(msgspec.Struct, array_like=True):
    """A game of a round: its entrants in seat order, its result once over, its dice group."""

    game_id: str
    entrants: list[int]
    # tokens of tables created before seats answered to entrant tokens (new tables: empty)
    seat_tokens: list[str]
    result: GameResult | None = None
    group: int = 0


class TournamentDoc(msgspec.Struct, array_like=True):
    id: str
    spec: TournamentSpec
    seed: bytes
    entrants: list[EntrantDoc] = []
    status: str = "registering"  # registering | running | finished
    rounds: list[list[TableDoc]] = []
    created: float = 0.0
    # secret, never given by anyone: names each table's game, so a round created again after
    # a crash finds the same games instead of leaving orphans
    table_key: bytes = b""
    # standings, unrounded (``tournaments.rate``): every round but the one in play, rated in
    # the write that moves on from it
    rated: list[Standing] = []


_decoder = msgspec.msgpack.Decoder(TournamentDoc)
_encoder = msgspec.msgpack.Encoder()


def _key(tournament_id: str) -> str:
    return f"{{tournament:{tournament_id}}}:doc"


class TournamentService:
    def __init__(self, games: GameService) -> None:
        self.games = games
        self.redis = games.store.redis
        self._save = self.redis.register_script(_SAVE)

    # -- storage -------------------------------------------------------------------------------

    async def _load(self, tournament_id: str) -> tuple[str, TournamentDoc]:
        version, blob = await self.redis.hmget(_key(tournament_id), ["v", "blob"])
        if blob is None:
            raise ApiError(404, "tournament-not-found", f"there is no tournament {tournament_id!r}")
        return version.decode(), _decoder.decode(blob)

    async def _store(self, version: str, doc: TournamentDoc) -> bool:
        saved = await self._save(
            keys=[_key(doc.id)], args=[version, str(int(version or 0) + 1), _encoder.encode(doc)]
        )
        return bool(saved)

    # -- creating and registering ----------------------------------------------------------

    async def create(self, spec: TournamentSpec) -> TournamentDoc:
        problem = spec_problem(spec)
        if problem is not None:
            raise ApiError(422, "invalid-tournament", problem[1], field=problem[0])
        try:
            ruleset = get_ruleset(spec.ruleset)
            ruleset.options(spec.options)
            check_seats(spec.table_size, ruleset.min_seats, ruleset.max_seats, ruleset.id)
        except GameError as exc:
            raise ApiError(422, exc.code, exc.message, field=exc.field) from None
        seed = bytes.fromhex(spec.seed) if spec.seed else secrets.token_bytes(32)
        doc = TournamentDoc(
            secrets.token_hex(8),
            spec,
            seed,
            created=time.time(),
            table_key=secrets.token_bytes(32),
        )
        await self._store("", doc)
        return doc

    async def register(self, tournament_id: str, name: str) -> tuple[int, str]:
        for _ in range(MAX_RETRIES):
            version, doc = await self._load(tournament_id)
            if doc.status != "registering":
                raise ApiError(409, "registration-closed", "the tournament has started")
            token = f"{doc.id}.{secrets.token_urlsafe(32)}"
            doc.entrants.append(EntrantDoc(name, token_hash(token)))
            if len(doc.entrants) == doc.spec.entrants:
                doc.status = "running"
            if await self._store(version, doc):
                if doc.status == "running":
                    await self.advance(doc.id)
                return len(doc.entrants) - 1, token
        raise Busy

    # -- advancing -------------------------------------------------------------------------

    async def advance(self, tournament_id: str) -> TournamentDoc:
        """Record finished games; once a round is over, rate it and create the next one
        (exactly once: under a lock, and a round created again finds the same games).

        While another request holds the lock, this one returns the tournament as it is: the
        next round comes from the holder, and a waiting entrant looks again."""
        holder = secrets.token_hex(8)  # this call's own mark on the round lock
        for _ in range(MAX_RETRIES):
            version, doc = await self._load(tournament_id)
            if doc.status != "running":
                return doc
            changed = False
            current = doc.rounds[-1] if doc.rounds else []
            open_tables = [table for table in current if table.result is None]
            games = await asyncio.gather(*(self.games.fresh(t.game_id) for t in open_tables))
            for table, game in zip(open_tables, games, strict=True):
                if game.doc.status == "finished":
                    table.result = GameResult(
                        len(doc.rounds) - 1,
                        table.entrants,
                        game.ruleset.totals(game.state),
                        game.ruleset.ranking(game.state),
                    )
                    changed = True
            if all(table.result is not None for table in current):
                round_ = len(doc.rounds)
                results = [t.result for r in doc.rounds for t in r if t.result is not None]
                tables = next_round(doc.spec, results, round_)
                over = not tables or round_ >= total_rounds(doc.spec)
                if over or await self._lock(f"{{tournament:{doc.id}}}:round:{round_}", holder):
                    # the round is over: rated in the write that moves on, so exactly once
                    done = [t.result for t in current if t.result is not None]
                    doc.rated = rate(len(doc.entrants), done, doc.rated)
                    if over:
                        doc.status = "finished"
                    else:
                        doc.rounds.append(await self._create_round(doc, round_, tables))
                    changed = True
                elif not changed or await self._store(version, doc):
                    return doc  # another request is creating the round
                else:
                    continue
            if not changed or await self._store(version, doc):
                return doc
        raise Busy

    async def _lock(self, key: str, holder: str) -> bool:
        """Take the round's lock, or find it already this call's (a try that lost its save
        takes the round again: creating it again finds the same games)."""
        if await self.redis.set(key, holder, nx=True, ex=30):
            return True
        return await self.redis.get(key) == holder.encode()

    async def _create_round(
        self, doc: TournamentDoc, round_: int, tables: list[list[int]]
    ) -> list[TableDoc]:
        """The round's games: one seed per dice group, each game told the others of its group
        (sealed until they are all over), each seat answering to its entrant's token."""
        groups = dice_groups(doc.spec, tables)
        ids = [self._table_id(doc, round_, table) for table in range(len(tables))]
        seeds = {
            group: hmac.digest(doc.seed, f"round/{round_}/group/{group}".encode(), "sha256")
            for group in set(groups)
        }
        made = await asyncio.gather(
            *(
                self.games.create(
                    doc.spec.ruleset,
                    doc.spec.options,
                    [{"name": doc.entrants[e].name} for e in entrants],
                    doc.spec.deadline_s,
                    seeds[groups[table]],
                    game_id=ids[table],
                    token_hashes=[doc.entrants[e].token_hash for e in entrants],
                    group=[
                        ids[other]
                        for other in range(len(tables))
                        if other != table and groups[other] == groups[table]
                    ],
                )
                for table, entrants in enumerate(tables)
            )
        )
        return [
            TableDoc(game.id, entrants, [], group=groups[table])
            for table, ((game, _), entrants) in enumerate(zip(made, tables, strict=True))
        ]

    @staticmethod
    def _table_id(doc: TournamentDoc, round_: int, table: int) -> str:
        """A table's game id: the same on every attempt at the round."""
        message = f"{doc.id}/{round_}/{table}/game".encode()
        return hmac.digest(doc.table_key, message, "sha256")[:8].hex()

    # -- views -----------------------------------------------------------------------------

    def view(self, doc: TournamentDoc) -> dict[str, Any]:
        """Rounds and tables, each table's result once its whole dice group is over, and the
        standings through the rounds that are over; the seed once the tournament is."""
        rounds = []
        for tables in doc.rounds:
            over = {
                t.group
                for t in tables
                if all(o.result is not None for o in tables if o.group == t.group)
            }
            rounds.append(
                [
                    {
                        "game_id": t.game_id,
                        "entrants": t.entrants,
                        "group": t.group,
                        "result": msgspec.to_builtins(t.result)
                        if t.result and t.group in over
                        else None,
                    }
                    for t in tables
                ]
            )
        rated = doc.rated or rate(len(doc.entrants), [])
        return {
            "id": doc.id,
            "status": doc.status,
            "spec": {k: v for k, v in msgspec.to_builtins(doc.spec).items() if k != "seed"},
            "commitment": seed_commitment(doc.seed),
            "seed": doc.seed.hex() if doc.status == "finished" else None,
            "entrants": [e.name for e in doc.entrants],
            "round": len(doc.rounds) - 1,
            "rounds": rounds,
            "standings": [
                {**msgspec.to_builtins(s), "name": doc.entrants[s.entrant].name}
                for s in ranked(rated)
            ],
        }

    async def get(self, tournament_id: str) -> dict[str, Any]:
        return self.view(await self.advance(tournament_id))

    def _entrant(self, doc: TournamentDoc, token: str) -> int:
        found = holder_of([e.token_hash for e in doc.entrants], token)
        if found < 0:
            raise ApiError(403, "forbidden", "this token holds no entry in this tournament")
        return found

    async def next_decision(self, token: str | None, wait_s: float) -> dict[str, Any]:
        """The entrant's next decision across all of its games (long-polled)."""
        if not token or "." not in token:
            raise ApiError(403, "forbidden", "send an entrant token as 'Authorization: Bearer'")
        tournament_id = token.split(".", 1)[0]
        stop = time.monotonic() + wait_s
        pause = 0.05
        while True:
            # only the entrant's own tables are read while it plays; the whole round is
            # looked at (advance) when none of them is in play
            _, doc = await self._load(tournament_id)
            entrant = self._entrant(doc, token)
            found = await self._own_tables(doc, entrant, token)
            if isinstance(found, dict):
                return found
            if not found:
                rounds = len(doc.rounds)
                with contextlib.suppress(Busy):  # others are moving it on: look again
                    doc = await self.advance(tournament_id)
                if doc.status == "finished":
                    return {"status": "finished", "tournament_id": doc.id}
                if len(doc.rounds) > rounds:
                    continue  # a new round: its tables are the entrant's next games
            remaining = stop - time.monotonic()
            if remaining <= 0:
                return {"status": "waiting", "tournament_id": doc.id}
            if found:
                # the entrant waits on opponents: the next event of one of its games (a
                # decision, or a deadline the sweepers resolve) wakes it, not a timer
                with contextlib.suppress(RedisTimeoutError, RedisConnectionError, TimeoutError):
                    await self.games.wait_for_commits(dict(found), min(remaining, 5.0))
                pause = 0.05
            else:
                # the entrant's tables are over: the round moves on when other tables
                # finish, so look again, less often the longer it takes
                await asyncio.sleep(min(pause, remaining))
                pause = min(pause * 2, 0.5)

    async def _own_tables(
        self, doc: TournamentDoc, entrant: int, token: str
    ) -> dict[str, Any] | list[tuple[str, str]]:
        """The entrant's turn if one of its games awaits it, else (game id, newest event id)
        of each of its games still in play in the current round."""
        in_play: list[tuple[str, str]] = []
        for table in doc.rounds[-1] if doc.rounds and doc.status == "running" else []:
            if table.result is not None or entrant not in table.entrants:
                continue
            seat = table.entrants.index(entrant)
            game = await self.games.fresh(table.game_id)
            turn = self.games.turn(game, seat)
            if turn["status"] == "your_turn":
                return {
                    "status": "your_turn",
                    "tournament_id": doc.id,
                    "game_id": table.game_id,
                    # the entrant's own token is its seats' token (older tables kept theirs)
                    "seat_token": table.seat_tokens[seat] if table.seat_tokens else token,
                    "turn": turn,
                }
            if game.doc.status != "finished":
                in_play.append((table.game_id, game.last_event_id))
        return in_play
