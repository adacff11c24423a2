"""A tournament as it is stored, and what the referee decides of it with no I/O: its
creation, a round's tables (their games' ids, dice groups and seeds), each table's result,
and the view anyone may see.

Fair play: the tables of a dice group are dealt the same dice and share no entrant; each game
of a group is sealed until the whole group is over, and a table's result counts in the view
only then. No token is stored in clear: an entrant's seats answer to the entrant's own token,
whose hash the tournament and each of its games keep.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any, NamedTuple

import msgspec

from ..games import GameError, get_ruleset
from ..games import commitment as seed_commitment
from ..games._common import check_seats
from .documents import holder_of
from .game import LoadedGame
from .pairing import GameResult, Standing, TournamentSpec, dice_groups, ranked, rate, spec_problem
from .refusals import Refusal, from_rules

__all__ = [
    "EntrantDoc",
    "TableDoc",
    "TableGame",
    "TournamentDoc",
    "decode_tournament",
    "encode_tournament",
    "entrant_of",
    "new_tournament",
    "round_games",
    "summary",
    "table_result",
    "tournament_view",
]


class EntrantDoc(msgspec.Struct, array_like=True):
    """An entrant: its name and the hash of its token (its seats answer to the token)."""

    name: str
    token_hash: bytes
    # the bot account that entered (its key), if one did (``core.league``)
    bot: str = ""
    # the version of that bot's account its token follows (a rotation or revoke rekeys it:
    # ``service.tournaments.rekey_entrant``; the later version wins)
    keyed: int = 0
    # the organizer of that bot (``core.league.is_organizer``), if one: a rated tournament
    # takes one bot of each organizer
    organizer: str = ""


class TableDoc(msgspec.Struct, array_like=True):
    """A game of a round: its entrants in seat order, its result once over, its dice group."""

    game_id: str
    entrants: list[int]
    # tokens of tables created before seats answered to entrant tokens (new tables: empty)
    seat_tokens: list[str]
    result: GameResult | None = None
    group: int = 0


class TournamentDoc(msgspec.Struct, array_like=True):
    """A tournament: its spec and seed, entrants, rounds of tables, and standings so far."""

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
    # standings, unrounded (``pairing.rate``): every round but the one in play, rated in
    # the write that moves on from it
    rated: list[Standing] = []
    # who created it, as its live tournaments are counted (``service.limits``; "" for none)
    owner: str = ""
    # SHA-256 of the code an entrant must give to register ("" for none)
    invite: bytes = b""
    # each entrant's rating (by entrant, as the standings round it) after each rated round,
    # appended in the write that rates the round
    ratings: list[list[float]] = []
    # the organizer marked it rated: its entrants are bot accounts, and each of its games
    # updates their lifetime ratings (``service.league``)
    league_rated: bool = False


decode_tournament = msgspec.msgpack.Decoder(TournamentDoc).decode
encode_tournament = msgspec.msgpack.Encoder().encode


class TableGame(NamedTuple):
    """A game a round needs: its id, seats, dice group (its number, its seed, and the other
    games dealt the same dice)."""

    game_id: str
    names: list[str]
    token_hashes: list[bytes]
    dice_group: int
    seed: bytes
    group: list[str]


def new_tournament(spec: TournamentSpec, now: float) -> TournamentDoc:
    """A tournament open for registration; its spec checked against the ruleset."""
    problem = spec_problem(spec)
    if problem is not None:
        raise Refusal("invalid-tournament", problem[1], field=problem[0])
    try:
        ruleset = get_ruleset(spec.ruleset)
        ruleset.options(spec.options)
        check_seats(spec.table_size, ruleset.min_seats, ruleset.max_seats, ruleset.id)
    except GameError as exc:
        raise from_rules(exc) from None
    seed = bytes.fromhex(spec.seed) if spec.seed else secrets.token_bytes(32)
    return TournamentDoc(
        secrets.token_hex(8), spec, seed, created=now, table_key=secrets.token_bytes(32)
    )


def entrant_of(doc: TournamentDoc, token: str) -> int:
    """The entrant an entrant token belongs to."""
    found = holder_of([e.token_hash for e in doc.entrants], token)
    if found < 0:
        raise Refusal("forbidden", "this token holds no entry in this tournament")
    return found


def _table_id(doc: TournamentDoc, round_: int, table: int) -> str:
    """A table's game id: the same on every attempt at the round."""
    message = f"{doc.id}/{round_}/{table}/game".encode()
    return hmac.digest(doc.table_key, message, "sha256")[:8].hex()


def round_games(doc: TournamentDoc, round_: int, tables: list[list[int]]) -> list[TableGame]:
    """The games of round ``round_``: one seed per dice group, HMAC(tournament seed,
    ``round/r/group/g``), each game told the others of its group (sealed until they are all
    over), each seat answering to its entrant's token."""
    groups = dice_groups(doc.spec, tables)
    ids = [_table_id(doc, round_, table) for table in range(len(tables))]
    seeds = {
        group: hmac.digest(doc.seed, f"round/{round_}/group/{group}".encode(), "sha256")
        for group in set(groups)
    }
    return [
        TableGame(
            ids[table],
            [doc.entrants[e].name for e in entrants],
            [doc.entrants[e].token_hash for e in entrants],
            groups[table],
            seeds[groups[table]],
            [
                ids[other]
                for other in range(len(tables))
                if other != table and groups[other] == groups[table]
            ],
        )
        for table, entrants in enumerate(tables)
    ]


def table_result(round_: int, table: TableDoc, game: LoadedGame) -> GameResult | None:
    """A table's result, once its game is over."""
    if game.doc.status != "finished":
        return None
    return GameResult(
        round_, table.entrants, game.ruleset.totals(game.state), game.ruleset.ranking(game.state)
    )


def summary(doc: TournamentDoc, created: float) -> dict[str, Any]:
    """A tournament as a listing shows it: what anyone may see, without its rounds."""
    spec = doc.spec
    return {
        "id": doc.id,
        "ruleset": spec.ruleset,
        "status": doc.status,
        "format": spec.format,
        "entrants": len(doc.entrants),
        "seats": spec.entrants,
        "invite_only": bool(doc.invite),
        "created": round(created, 3),
    }


def tournament_view(doc: TournamentDoc) -> dict[str, Any]:
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
        "ruleset": doc.spec.ruleset,
        "status": doc.status,
        "spec": {k: v for k, v in msgspec.to_builtins(doc.spec).items() if k != "seed"},
        "commitment": seed_commitment(doc.seed),
        "seed": doc.seed.hex() if doc.status == "finished" else None,
        "entrants": [e.name for e in doc.entrants],
        "round": len(doc.rounds) - 1,
        "rounds": rounds,
        "standings": [
            {**msgspec.to_builtins(s), "name": doc.entrants[s.entrant].name} for s in ranked(rated)
        ],
        "ratings": doc.ratings,
    }
