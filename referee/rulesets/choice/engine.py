"""Sid Sackson's CHOICE: every seat evaluates the same shared roll, marks two sums and a fifth die.

Rules: RULES.md "CHOICE" and docs/RULES.md. The engine is shared with ``choice-specials``
(see :mod:`referee.rulesets.choice_specials`), which adds cards through the ``_card_*`` hooks.

Rolls are handed out in *postal rounds* (batches) of k rolls (option ``schedule``). Every active
seat decides each roll of the batch; its decisions stay hidden (``drafts``) until every active
seat has completed the batch, then all are revealed together and the next batch is rolled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from ...games._common import Scorer, check_seats, parse_options, places
from ...games.errors import RuleViolation
from ...games.shapes import ViewShapes
from .postal import reveal, roll_batch
from .rounds import (
    _round_move_set,
    apply_round,
    diagnose_round,
    normalize,
    roll_dice,
    round_moves,
    warm_rounds,
)
from .sheet import (
    ChoiceMove,
    ChoiceOptions,
    ChoiceScore,
    ChoiceState,
    FreeThrow,
    Mark,
    Pass,
    Sheet,
    score_marks,
)
from .views import (
    ChoiceBoard,
    ChoiceDecision,
    ChoiceGameView,
    ChoiceRecord,
    ChoiceRoll,
    ChoiceSeatSheet,
    ChoiceSeatView,
    ChoiceSheet,
    ChoiceYou,
    ViewParts,
    pack_sheet,
    sheet_shown,
)

__all__ = ["ChoiceRuleset"]

_NORMAL_MOVES = frozenset((Mark, FreeThrow))


class ChoiceRuleset:
    """``choice``: 1..64 seats share each roll; a seat is done at a fifth-die value's 8th mark."""

    id: ClassVar[str] = "choice"
    title: ClassVar[str] = "CHOICE (Sid Sackson)"
    min_seats: ClassVar[int] = 1
    max_seats: ClassVar[int] = 64
    end_marks: ClassVar[int] = 8
    cards: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type] = ChoiceOptions
    Move: ClassVar[Any] = ChoiceMove
    State: ClassVar[Any] = ChoiceState[ChoiceMove]
    #: house bots by name, each a function of a seed (the package sets them: ``bots.py``)
    bots: ClassVar[dict[str, Callable[[int | None], Any]]] = {}
    #: its score calculator (the package sets it: ``shapes.py``)
    scorer: ClassVar[Scorer | None] = None
    #: its views, as the engine returns them and the contract states them
    views: ClassVar[ViewShapes | None] = ViewShapes(
        ChoiceSeatView, ChoiceGameView, ChoiceDecision, ChoiceRecord
    )
    #: the parts its views are built of (the specials' hold cards and a plate too)
    _shapes: ClassVar[ViewParts] = ViewParts(ChoiceSheet, ChoiceSeatSheet, ChoiceYou, ChoiceBoard)
    #: its part of the pages, a JavaScript module (the package sets it: ``page.js``)
    page_script: ClassVar[Path | None] = None
    rules_help: ClassVar[Path | None] = None
    #: its rounds in the turn report (the package sets it: ``report.py``)
    report: ClassVar[Any] = None
    #: the turn report's rounds: the postal rounds (the view's ``batch``), each with its rolls
    round_field: ClassVar[str] = "batch"
    round_dealt: ClassVar[tuple[str, ...]] = ("first_roll", "rolls")

    def warm(self) -> None:
        """Fill the round caches before a server freezes its startup objects."""
        warm_rounds()

    # -- creation ------------------------------------------------------------------------------

    def options(self, raw: Any) -> ChoiceOptions:
        options: ChoiceOptions = parse_options(self.Options, raw)
        return options

    def create(self, options: Any, seats: int, key: bytes) -> ChoiceState[Any]:
        options = self.options(options)
        check_seats(seats, self.min_seats, self.max_seats, self.id)
        sheets = [Sheet([0] * 11, [], [], cards=list(self.cards)) for _ in range(seats)]
        state: ChoiceState[Any] = ChoiceState(
            self.id,
            options,
            key,
            0,
            0,
            [],
            sheets,
            [None] * seats,
            [0] * seats,
            [[] for _ in range(seats)],
            [0] * seats,
            [0] * seats,
        )
        state.rolls = roll_batch(state)
        return state

    # -- whose turn ----------------------------------------------------------------------------

    def _current(self, state: ChoiceState[Any], seat: int) -> Sheet:
        draft = state.drafts[seat]
        return draft if draft is not None else state.sheets[seat]

    def _complete(self, state: ChoiceState[Any], seat: int) -> bool:
        """Whether the seat has closed the round, or was done before it: public facts only.
        A draft sheet that completed inside the round does not close it (``Pass`` does)."""
        return state.sheets[seat].done or state.progress[seat] >= len(state.rolls)

    def to_decide(self, state: ChoiceState[Any]) -> list[int]:
        if state.finished:
            return []
        return [s for s in range(len(state.sheets)) if not self._complete(state, s)]

    def must_decide(self, state: ChoiceState[Any], seat: int) -> bool:
        return not state.finished and not self._complete(state, seat)

    def seq(self, state: ChoiceState[Any], seat: int) -> int:
        return state.seqs[seat]

    def public_seq(self, state: ChoiceState[Any], seat: int) -> int:
        """The postal rounds the seat has closed: a step inside a round changes nothing that
        another party sees, so neither a deadline nor an event moves with it."""
        return state.submitted[seat] if state.submitted else 0

    def finished(self, state: ChoiceState[Any]) -> bool:
        return state.finished

    def disclosed(self, state: ChoiceState[Any], seat: int) -> int:
        """How many of the seat's decisions anyone may see: those of the postal rounds already
        revealed (every decision, once the game is over)."""
        if state.finished:
            return state.seqs[seat]
        return state.revealed[seat] if state.revealed else 0

    # -- legal moves ---------------------------------------------------------------------------

    def legal_moves(self, state: ChoiceState[Any], seat: int) -> list[Any]:
        """Every legal decision on the seat's next roll, canonical order (first = default)."""
        self._check_seat(state, seat)
        sheet = self._current(state, seat)
        progress = state.progress[seat]
        if state.finished or state.sheets[seat].done or progress >= len(state.rolls):
            return []
        if sheet.done:  # completed inside the round: only closing it is left
            return [Pass()]
        dice = state.rolls[progress]
        moves: list[Any] = list(round_moves(dice, sheet.slots()))
        if sheet.cards:
            moves.extend(self._card_moves(sheet, dice))
        return moves

    def _card_moves(self, sheet: Sheet, dice: tuple[int, ...]) -> list[Any]:
        return []

    # -- deciding ------------------------------------------------------------------------------

    def _check_seat(self, state: ChoiceState[Any], seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < len(state.sheets):
            raise RuleViolation("no-such-seat", f"there is no seat {seat}", field="seat")

    def decide(
        self, state: ChoiceState[Any], seat: int, moves: Sequence[Any]
    ) -> list[dict[str, Any]]:
        """Apply a seat's decisions (one, or several of a postal round) all or nothing."""
        self._check_seat(state, seat)
        sheet = self._check_turn(state, seat)
        if len(moves) != 1 or type(moves[0]) not in _NORMAL_MOVES or sheet.done:
            return self._decide_many(state, seat, sheet, moves)
        # the common case, one normal move: validated before the sheet is copied
        progress = state.progress[seat]
        move = normalize(moves[0])
        dice = state.rolls[progress]
        self._validate(sheet, move, dice)
        reveals = progress + 1 == len(state.rolls) and self._others_complete(state, seat)
        if state.drafts[seat] is None and not reveals:
            sheet = sheet.clone()  # the committed sheet stays as it is until the reveal
        apply_round(sheet, move)
        self._check_end(sheet)
        return self._commit(state, seat, sheet, progress + 1, [move], 0, reveals or None)

    def timeout(self, state: ChoiceState[Any], seat: int) -> list[dict[str, Any]]:
        """The deadline passed: the seat's remaining rolls of the batch get the default move.

        After three timeouts in a row the seat is retired: its sheet is frozen and scored.
        """
        sheet, progress, defaults = self._defaults(state, seat)
        streak = state.timeouts[seat] + 1
        if streak >= 3 and not sheet.done:
            sheet.done = sheet.retired = True
        return self._commit(state, seat, sheet, progress, defaults, streak)

    def default_moves(self, state: ChoiceState[Any], seat: int) -> list[Any]:
        """What :meth:`timeout` would apply: the first legal move of each remaining roll."""
        return self._defaults(state, seat)[2]

    def _defaults(self, state: ChoiceState[Any], seat: int) -> tuple[Sheet, int, list[Any]]:
        self._check_seat(state, seat)
        sheet = self._check_turn(state, seat).clone()
        progress = state.progress[seat]
        defaults: list[Any] = []
        while progress < len(state.rolls):
            if sheet.done:  # completed inside the round by a step before: closed
                defaults.append(Pass())
                progress = len(state.rolls)
                break
            move = round_moves(state.rolls[progress], sheet.slots())[0]
            self._apply(sheet, move, state.rolls[progress])
            defaults.append(move)
            progress += 1
        return sheet, progress, defaults

    def _check_turn(self, state: ChoiceState[Any], seat: int) -> Sheet:
        """The seat's current sheet, if the seat has a roll to decide."""
        if state.finished:
            raise RuleViolation("game-over", "the game is over")
        if state.sheets[seat].done:
            raise RuleViolation("not-your-turn", f"seat {seat} has finished its game")
        if state.progress[seat] < len(state.rolls):
            return self._current(state, seat)
        raise RuleViolation(
            "not-your-turn",
            f"seat {seat} has decided every roll of this postal round; waiting for the other seats",
        )

    def _decide_many(
        self, state: ChoiceState[Any], seat: int, sheet: Sheet, moves: Sequence[Any]
    ) -> list[dict[str, Any]]:
        """Cards, extra rounds and postal batches: applied one by one to a copy of the sheet."""
        if not moves:
            raise RuleViolation("no-moves", "submit at least one move", field="moves")
        progress = state.progress[seat]
        sheet = sheet.clone()
        applied: list[Any] = []
        for index, raw in enumerate(moves):
            try:
                move = self.normalize(raw)
                if isinstance(move, Pass):
                    if not sheet.done:
                        raise RuleViolation(
                            "illegal-move",
                            "pass closes a postal round only once the seat's sheet is complete",
                        )
                    if progress >= len(state.rolls):
                        raise RuleViolation("batch-complete", "this postal round is closed already")
                    progress = len(state.rolls)
                elif sheet.done:
                    raise RuleViolation(
                        "player-finished",
                        "the seat finished its game with an earlier move; close this postal "
                        'round with {"type": "pass"}, if it is not closed yet',
                    )
                elif self._is_extra_round(move):
                    self._validate_extra_round(sheet, move)
                    self._apply(sheet, move, ())
                else:
                    if progress >= len(state.rolls):
                        raise RuleViolation(
                            "batch-complete",
                            f"this postal round has {len(state.rolls)} roll(s) and all are decided",
                        )
                    dice = state.rolls[progress]
                    self._validate(sheet, move, dice)
                    self._apply(sheet, move, dice)
                    progress += 1
            except RuleViolation as exc:
                if len(moves) > 1:
                    exc.field = f"moves[{index}]" + (f".{exc.field}" if exc.field else "")
                    exc.message = f"move {index}: {exc.message}"
                    exc.args = (exc.message,)
                raise
            applied.append(move)
        return self._commit(state, seat, sheet, progress, applied, 0)

    def _others_complete(self, state: ChoiceState[Any], seat: int) -> bool:
        """Whether every seat but ``seat`` has decided the batch or finished its game."""
        for other in range(len(state.sheets)):
            if other != seat and not self._complete(state, other):
                return False
        return True

    def _commit(
        self,
        state: ChoiceState[Any],
        seat: int,
        sheet: Sheet,
        progress: int,
        moves: list[Any],
        streak: int,
        reveals: bool | None = None,
    ) -> list[dict[str, Any]]:
        """Keep the seat's decisions hidden; ``reveals``: whether they complete the batch."""
        if progress >= len(state.rolls) > state.progress[seat]:  # the seat closes its round
            if not state.submitted:
                state.submitted = [0] * len(state.sheets)
            state.submitted[seat] += 1
        state.drafts[seat] = sheet
        state.progress[seat] = progress
        state.pending[seat] += moves
        state.seqs[seat] += 1
        state.timeouts[seat] = streak
        if reveals is None:
            reveals = self._complete(state, seat) and self._others_complete(state, seat)
        return reveal(state) if reveals else []

    # -- hooks the specials ruleset extends ------------------------------------------------

    def normalize(self, move: Any) -> Any:
        """The canonical form of a move, as :meth:`legal_moves` lists it."""
        return normalize(move)

    def _is_extra_round(self, move: Any) -> bool:
        return False

    def _validate_extra_round(self, sheet: Sheet, move: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def _validate(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> None:
        if isinstance(move, (Mark, FreeThrow)):
            if move in _round_move_set(dice, sheet.slots()):
                return
            diagnose_round(sheet, dice, move)
            raise RuleViolation("illegal-move", "the move is not legal on this roll")
        self._validate_card(sheet, move, dice)

    def _validate_card(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> NoReturn:
        raise RuleViolation(
            "unknown-move", f"{type(move).__name__} is not a move of {self.id}", field="type"
        )

    def _apply(self, sheet: Sheet, move: Any, dice: tuple[int, ...]) -> None:
        apply_round(sheet, move)
        self._check_end(sheet)

    def _check_end(self, sheet: Sheet) -> None:
        if sheet.fifth_counts and max(sheet.fifth_counts) >= self.end_marks:
            sheet.done = True

    # -- what players see ----------------------------------------------------------------------

    def scores(self, state: ChoiceState[Any]) -> list[ChoiceScore]:
        """Scores of the committed (public) sheets."""
        return [score_marks(sheet.marks) for sheet in state.sheets]

    def totals(self, state: ChoiceState[Any]) -> list[int]:
        return [score.total for score in self.scores(state)]

    def ranking(self, state: ChoiceState[Any]) -> list[int]:
        return places(self.totals(state))

    def _sheet_shown(self, sheet: Sheet) -> tuple[Any, ...]:
        return sheet_shown(pack_sheet(sheet), bool(self.cards))

    def view(self, state: ChoiceState[Any], seat: int | None = None) -> ChoiceBoard:
        """The board every seat sees (``views.seat_view``'s fields but ``you``), or with
        ``seat``, that seat's view: the board and its own hidden decisions and draft sheet."""
        seat_sheet = self._shapes.seat_sheet
        board: dict[str, Any] = {
            "options": state.options,
            "finished": state.finished,
            "batch": state.batch,
            "first_roll": state.first_roll,
            "rolls": [list(r) for r in state.rolls],
            "end_marks": self.end_marks,
            "seats": [
                seat_sheet(
                    *self._sheet_shown(sheet),
                    s,
                    state.finished or sheet.done or self._complete(state, s),
                )
                for s, sheet in enumerate(state.sheets)
            ],
        }
        if state.finished:
            board["ranking"] = self.ranking(state)
        if seat is None:
            public: ChoiceBoard = self._shapes.board(**board)
            return public
        shown: ChoiceBoard = self.views.seat_view(**board, you=self.seat_view(state, seat))  # type: ignore[union-attr]
        return shown

    def seat_view(self, state: ChoiceState[Any], seat: int) -> ChoiceYou:
        """What only ``seat`` sees: its hidden decisions and draft sheet (``view``'s "you")."""
        self._check_seat(state, seat)
        shapes = self._shapes
        you: ChoiceYou = shapes.you(
            seat,
            state.progress[seat],
            list(state.pending[seat]),
            shapes.sheet(*self._sheet_shown(self._current(state, seat))),
        )
        return you

    def dice_log(self, state: ChoiceState[Any]) -> list[ChoiceRoll]:
        """Every roll drawn so far, by game-wide index (public rolls, so no secret here)."""
        last = state.first_roll + len(state.rolls)
        return [ChoiceRoll(n, list(roll_dice(state.key, n))) for n in range(last)]
