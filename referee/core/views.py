"""What each party may see of a loaded game: a seat its turn and private view, anyone the
public view (or, while its dice group plays on, the sealed view), the record as far as it is
disclosed, and the last event. Only what the rules disclose leaves here: pools, undecided
rolls and undisclosed decisions stay in the state.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
from msgspec import UNSET

from ..games import Ruleset, final_seats
from ..games._common import plain
from ..games.shapes import own_views, public_seat
from .documents import GameDoc

__all__ = ["GameViews", "Shown", "game_summary"]

#: what a view or record is as the web layer gets it to encode: the ruleset's Struct (a
#: plug-in that declares no view shapes gives plain values)
Shown = msgspec.Struct | dict[str, Any]


class GameViews:
    """The views of a game (``LoadedGame``), from its document and rules state."""

    doc: GameDoc
    ruleset: Ruleset
    state: Any
    shared: bool
    public_view_cache: Any

    def game_over_event(self, *, sealed: bool | None = None) -> dict[str, Any]:
        """The last event of a game: totals, ranking, the record's chain, and the seed that
        proves the dice; the seed is withheld (null) while games dealt the same dice play on
        (``sealed``; by default, whenever the game has such a group)."""
        ruleset, state, doc = self.ruleset, self.state, self.doc
        if sealed is None:
            sealed = bool(doc.group)
        return {
            "type": "game_over",
            "totals": ruleset.totals(state),
            "ranking": ruleset.ranking(state),
            "chain": doc.chain.hex() if doc.chain else None,
            "seed": None if sealed else doc.seed.hex(),
        }

    def public_view(self) -> Shown:
        """What anyone may see of a game that is not sealed (``sealed_view`` otherwise): the
        board as of now, with each deciding seat's deadline."""
        return self.public_view_of(self.state, self.doc.status, deadlines=True)

    def public_view_of(self, state: Any, status: str, *, deadlines: bool = False) -> Shown:
        """The public view of this game at ``state`` (now, or a step of its replay): its
        ruleset's ``game_view`` Struct, composed of the engine's board (``view(state)``) and
        the seats' sittings; with ``deadlines``, each seat's (absent: none)."""
        doc, ruleset = self.doc, self.ruleset
        shapes = own_views(ruleset)
        if shapes is None:
            return self._plain_public_view(state, status, deadlines)
        sitting = public_seat(shapes.game_view)
        fields: dict[str, Any] = {}
        seats: list[Any] = []
        if state is None:
            fields["options"] = ruleset.options(doc.options)
            seats = _sittings(sitting, doc)
        else:
            board = msgspec.structs.asdict(ruleset.view(state))
            shown = board.pop("seats")
            # every board field of a public view is absent until it applies: one the board
            # holds as null (none now) is left out too, so none is both optional and nullable
            fields = {k: v for k, v in board.items() if v is not None and k != "finished"}
            at = doc.deadlines if deadlines else ()
            seat_at = _seat_position(sitting, shown[0].__class__) if shown else None
            for index, seat in enumerate(doc.seats):
                deadline = at[index] if index < len(at) else None
                due = deadline.at if deadline is not None else UNSET
                name = seat.name
                if seat_at is None:  # built by name
                    fields_of = msgspec.structs.asdict(shown[index])
                    seats.append(
                        sitting(name=name, claimed=name is not None, deadline=due, **fields_of)
                    )
                else:
                    board_seat = msgspec.structs.astuple(shown[index])
                    seats.append(
                        sitting(
                            board_seat[seat_at],
                            name,
                            name is not None,
                            due,
                            *board_seat[:seat_at],
                            *board_seat[seat_at + 1 :],
                        )
                    )
        if status == "finished":
            fields["seed"] = doc.seed.hex()
            if doc.chain:
                fields["chain"] = doc.chain.hex()
        made: Shown = shapes.game_view(
            id=doc.id,
            status=status,
            commitment=doc.commitment,
            deadline_s=doc.deadline_s,
            to_decide=ruleset.to_decide(state) if state is not None else [],
            sealed=False,
            seats=seats,
            **fields,
        )
        return made

    def _plain_public_view(self, state: Any, status: str, deadlines: bool) -> dict[str, Any]:
        """The public view of a ruleset whose views are not its own (a plug-in that declares
        none, or took another's): its engine's view as plain values, with the same fields."""
        doc, ruleset = self.doc, self.ruleset
        engine = plain(ruleset.view(state)) if state is not None else {}
        at = doc.deadlines if deadlines and state is not None else None
        seats = []
        for index, seat in enumerate(doc.seats):
            entry: dict[str, Any] = {
                "seat": index,
                "name": seat.name,
                "claimed": seat.name is not None,
            }
            if engine:
                entry.update(engine["seats"][index])
            deadline = at[index] if at is not None and index < len(at) else None
            if deadline is not None:
                entry["deadline"] = deadline.at
            seats.append(entry)
        view = {
            k: v for k, v in engine.items() if k not in ("seats", "ruleset", "finished", "options")
        }
        view.update(
            id=doc.id,
            ruleset=doc.ruleset,
            options=doc.options,
            status=status,
            commitment=doc.commitment,
            deadline_s=doc.deadline_s,
            seats=seats,
            to_decide=ruleset.to_decide(state) if state is not None else [],
            sealed=False,
        )
        if status == "finished":
            view["seed"] = doc.seed.hex()
            if doc.chain:
                view["chain"] = doc.chain.hex()
        return view

    def sealed_view(self) -> Shown:
        """What anyone may see of a sealed game: who sits there and whether it is over."""
        doc = self.doc
        shapes = own_views(self.ruleset)
        if shapes is None:
            return {
                **self._plain_public_view(None, doc.status, False),
                "to_decide": [],
                "sealed": True,
            }
        sitting = public_seat(shapes.game_view)
        made: Shown = shapes.game_view(
            id=doc.id,
            options=self.ruleset.options(doc.options),
            status=doc.status,
            commitment=doc.commitment,
            deadline_s=doc.deadline_s,
            seats=_sittings(sitting, doc),
            to_decide=[],
            sealed=True,
        )
        return made

    def turn_status(self, seat: int) -> str:
        ruleset, state = self.ruleset, self.state
        if state is None:
            return "waiting"
        if ruleset.finished(state):
            return "finished"
        return "your_turn" if ruleset.must_decide(state, seat) else "waiting"

    def turn(self, seat: int) -> dict[str, Any]:
        """What the seat must decide now (``legal_moves``, ``seq``, ``deadline``) and its view."""
        doc, ruleset, state = self.doc, self.ruleset, self.state
        if state is None:
            return {
                "ruleset": doc.ruleset,
                "status": "waiting",
                "game_status": doc.status,
                "seat": seat,
                "seq": 0,
                "legal_moves": [],
                "deadline": None,
                "view": None,
            }
        status = self.turn_status(seat)
        deciding = status == "your_turn"
        deadline = doc.deadlines[seat] if deciding and doc.deadlines else None
        return {
            "ruleset": doc.ruleset,
            "status": status,
            "game_status": doc.status,
            "seat": seat,
            "seq": ruleset.seq(state, seat),
            "legal_moves": ruleset.legal_moves(state, seat) if deciding else [],
            "deadline": deadline.at if deadline else None,
            "view": self.seat_view(seat),
        }

    def seat_view(self, seat: int) -> Shown:
        """``ruleset.view(state, seat)``: the engine's board with the seat's ``you``, the
        board built once for a shared game."""
        ruleset, state = self.ruleset, self.state
        public = self.public_view_cache
        if public is None:
            public = ruleset.view(state)
            if self.shared:
                self.public_view_cache = public
        you = ruleset.seat_view(state, seat)
        shapes = own_views(ruleset)
        if shapes is None:  # a plug-in's views as plain values
            return {**plain(public), "ruleset": ruleset.id, "you": plain(you)}
        made: Shown = shapes.seat_view(**msgspec.structs.asdict(public), you=you)
        return made

    def record(self, decisions: list[bytes]) -> Shown:
        """The game's record, holding exactly what its public view and events disclose: while
        it runs, the decisions anyone may see (``Ruleset.disclosed``) and no dice; the chain
        only where it covers no hidden decision. The decisions are sent as they were stored."""
        doc, ruleset, state = self.doc, self.ruleset, self.state
        finished = doc.status == "finished"
        whole = True
        told = decisions
        if not finished:
            shown = [ruleset.disclosed(state, s) if state else 0 for s in range(len(doc.seats))]
            told = [d for d in decisions if (at := _told_at(d)).seq < shown[at.seat]]
            whole = len(told) == len(decisions)
        # while some decision is hidden, the chain as it was when all were disclosed
        chain = doc.chain if whole else doc.disclosed_chain
        fields: dict[str, Any] = {
            "seats": [s.name or "" for s in doc.seats],
            "commitment": doc.commitment,
            "client_seeds": [s.client_seed for s in doc.seats if s.client_seed],
            "decisions": [msgspec.Raw(d) for d in told],
            "dice": ruleset.dice_log(state) if finished else [],
            "totals": ruleset.totals(state) if finished else [],
            "ranking": ruleset.ranking(state) if finished else [],
            "final": [],
            "finished": finished,
            "chain": chain.hex() if chain else None,
            "seed": doc.seed.hex() if finished else None,
        }
        shapes = own_views(ruleset)
        if shapes is None:  # a plug-in's record as plain values
            if finished:
                fields["final"] = final_seats(ruleset, state)
            return {"ruleset": doc.ruleset, "options": doc.options, **fields}
        if finished:
            fields["final"] = ruleset.view(state).seats
        options = state.options if state is not None else ruleset.options(doc.options)
        made: Shown = shapes.record(options=options, **fields)
        return made


def _sittings(sitting: type, doc: GameDoc) -> list[Any]:
    """Who sits where, and nothing more: a public view's seats before the game runs, or
    while it is sealed."""
    return [
        sitting(seat=i, name=s.name, claimed=s.name is not None) for i, s in enumerate(doc.seats)
    ]


@cache
def _seat_position(sitting: Any, board_seat: Any) -> int | None:
    """Where a board seat's ``seat`` is, if a public seat is built from positions: a sitting's
    four fields, then the board seat's others in their order (``games.shapes.Sitting``); None
    if it is built by name. By position it costs a third of the time, which a 64-seat game's
    public view notices."""
    own, shown = sitting.__struct_fields__, board_seat.__struct_fields__
    if sitting.__match_args__ != own or "seat" not in shown:
        return None
    at = shown.index("seat")
    return (
        at
        if own == ("seat", "name", "claimed", "deadline", *shown[:at], *shown[at + 1 :])
        else None
    )


class _ToldAt(msgspec.Struct):
    """Whose decision a stored one is, and its seq: what a running game's record is cut by."""

    seat: int
    seq: int


_told_at = msgspec.json.Decoder(_ToldAt).decode


def game_summary(doc: GameDoc) -> dict[str, Any]:
    """A game as a listing shows it: what even its sealed view shows (who sits where and
    whether it is over), and when it was created."""
    return {
        "id": doc.id,
        "ruleset": doc.ruleset,
        "status": doc.status,
        "seats": [s.name for s in doc.seats],
        "deadline_s": doc.deadline_s,
        "tournament": bool(doc.tournament or doc.group),
        "tournament_id": doc.tournament or None,
        "created": round(doc.created, 3),
    }
