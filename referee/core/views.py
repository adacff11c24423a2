"""What each party may see of a loaded game: a seat its turn and private view, anyone the
public view (or, while its dice group plays on, the sealed view), the record as far as it is
disclosed, and the last event. Only what the rules disclose leaves here: pools, undecided
rolls and undisclosed decisions stay in the state.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..games import Ruleset, final_seats
from .documents import GameDoc

__all__ = ["GameViews", "game_summary"]


class GameViews:
    """The views of a game (``LoadedGame``), from its document and rules state."""

    doc: GameDoc
    ruleset: Ruleset
    state: Any
    shared: bool
    public_view_cache: dict[str, Any] | None

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

    def public_view(self) -> dict[str, Any]:
        """What anyone may see of a game that is not sealed (``sealed_view`` otherwise): the
        board as of now, with each deciding seat's deadline."""
        doc = self.doc
        view = self.public_view_of(self.state, doc.status)
        if self.state is not None:
            deadlines = doc.deadlines
            for index, seat in enumerate(view["seats"]):
                deadline = deadlines[index] if index < len(deadlines) else None
                seat["deadline"] = deadline.at if deadline is not None else None
        return view

    def public_view_of(self, state: Any, status: str) -> dict[str, Any]:
        """The public view of this game at ``state`` (now, or a step of its replay)."""
        doc, ruleset = self.doc, self.ruleset
        engine = ruleset.view(state) if state is not None else {}
        seats = []
        for index, seat in enumerate(doc.seats):
            entry: dict[str, Any] = {
                "seat": index,
                "name": seat.name,
                "claimed": seat.name is not None,
            }
            if engine:
                entry.update(engine["seats"][index])
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
            view["chain"] = doc.chain.hex() if doc.chain else None
        return view

    def sealed_view(self) -> dict[str, Any]:
        """What anyone may see of a sealed game: who sits there and whether it is over."""
        doc = self.doc
        return {
            "id": doc.id,
            "ruleset": doc.ruleset,
            "options": doc.options,
            "status": doc.status,
            "commitment": doc.commitment,
            "deadline_s": doc.deadline_s,
            "seats": [
                {"seat": i, "name": s.name, "claimed": s.name is not None}
                for i, s in enumerate(doc.seats)
            ],
            "to_decide": [],
            "sealed": True,
        }

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

    def seat_view(self, seat: int) -> dict[str, Any]:
        """``ruleset.view(state, seat)``; its public part built once for a shared game."""
        ruleset, state = self.ruleset, self.state
        public = self.public_view_cache
        if public is None:
            public = ruleset.view(state)
            if self.shared:
                self.public_view_cache = public
        return {**public, "you": ruleset.seat_view(state, seat)}

    def record(self, decisions: list[bytes]) -> dict[str, Any]:
        """The game's record, holding exactly what its public view and events disclose: while
        it runs, the decisions anyone may see (``Ruleset.disclosed``) and no dice; the chain
        only where it covers no hidden decision."""
        doc, ruleset, state = self.doc, self.ruleset, self.state
        told = [msgspec.json.decode(d) for d in decisions]
        finished = doc.status == "finished"
        whole = True
        if not finished:
            shown = [ruleset.disclosed(state, s) if state else 0 for s in range(len(doc.seats))]
            kept = [d for d in told if d["seq"] < shown[d["seat"]]]
            whole = len(kept) == len(told)
            told = kept
        # while some decision is hidden, the chain as it was when all were disclosed
        chain = doc.chain if whole else doc.disclosed_chain
        return {
            "ruleset": doc.ruleset,
            "options": doc.options,
            "seats": [s.name or "" for s in doc.seats],
            "commitment": doc.commitment,
            "client_seeds": [s.client_seed for s in doc.seats if s.client_seed],
            "decisions": told,
            "dice": ruleset.dice_log(state) if finished else [],
            "totals": ruleset.totals(state) if finished else [],
            "ranking": ruleset.ranking(state) if finished else [],
            "final": final_seats(ruleset, state) if finished else [],
            "finished": finished,
            # while some decision is hidden, the chain as it was when all were disclosed
            "chain": chain.hex()
            if (chain := doc.chain if whole else doc.disclosed_chain)
            else None,
            "seed": doc.seed.hex() if finished else None,
        }


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
