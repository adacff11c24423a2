"""A bot that is a local program: one Turn JSON line in on its stdin, one move line out.

The protocol, as a program sees it:

- It is started once and kept running (for one game, or for every game of a tournament
  entrant); its stderr goes to a log file.
- For each decision it reads one line on stdin: the Turn JSON as ``GET /turn`` returns it
  (``status`` is ``your_turn``), and writes one line on stdout: a move, an element of the
  turn's ``legal_moves`` (JSON, on one line), then flushes.
- The first turn after the program starts may take up to ``first_move_s`` (10 s by default:
  time to load); every later turn up to ``move_s`` (2 s). Neither runs past the turn's
  ``deadline``, less a margin for the move to reach the referee.
- A program that answers late is killed and started again, and the turn gets the ruleset's
  default move (the first of ``legal_moves``); one that dies is started again and given the
  same turn while time remains; at most ``max_restarts`` restarts in all. A line that is not
  JSON gets the default move. When the game (or the tournament) is over
  its stdin is closed; it should exit.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import shlex
import statistics
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import msgspec

from ._models import Turn

__all__ = ["Program", "ProgramFailed", "run_program"]

log = logging.getLogger("referee_client")

#: what a move needs to reach the referee after the program answered, taken off its deadline
MARGIN_S = 0.3


class ProgramFailed(RuntimeError):
    """The program died or answered late more often than its restart limit allows."""


class Program:
    """A local program as a bot's ``choose``: each turn is written to its stdin as one JSON
    line and its answer read as one JSON line; a watchdog starts it again if it dies or is
    late, up to ``max_restarts`` times (then ``ProgramFailed``). ``times`` holds the seconds
    each answered move took."""

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        log_path: str | Path | None = None,
        first_move_s: float = 10.0,
        move_s: float = 2.0,
        max_restarts: int = 3,
        cwd: str | Path | None = None,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.first_move_s, self.move_s = first_move_s, move_s
        self.max_restarts, self.restarts = max_restarts, 0
        self.cwd = cwd
        self.times: list[float] = []
        self.defaults = 0  # turns given the default move (late, dead, or not JSON)
        self._log: IO[bytes] | int = (
            open(log_path, "ab") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115
        )
        self._process: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._fresh = True

    def _start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            cwd=self.cwd,
        )
        lines: queue.Queue[bytes | None] = queue.Queue()

        def read(out: IO[bytes]) -> None:
            for line in out:
                lines.put(line)
            lines.put(None)  # end of its output: it died or closed stdout

        threading.Thread(target=read, args=(process.stdout,), daemon=True).start()
        self._process, self._lines, self._fresh = process, lines, True
        return process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _restart(self, why: str) -> None:
        log.warning("the program %s; starting it again", why)
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None
        self.restarts += 1
        if self.restarts > self.max_restarts:
            raise ProgramFailed(f"the program {why}, after {self.max_restarts} restarts")

    def budget(self, turn: Turn) -> float:
        """Seconds the program has for this turn: its first or a later one's allowance, no
        later than the turn's deadline (less ``MARGIN_S``)."""
        allowed = self.first_move_s if self._fresh else self.move_s
        if turn.deadline is not None:
            allowed = min(allowed, turn.deadline - time.time() - MARGIN_S)
        return max(0.0, allowed)

    def choose(self, turn: Turn) -> Any:
        """The program's move for ``turn`` (its default, the first legal move, if it fails).
        A program found dead is started again and given the same turn, while time remains."""
        for attempt in (1, 2):
            process = self._process
            if process is None or process.poll() is not None:
                if process is not None:
                    self._restart(f"exited with {process.returncode}")
                process = self._start()
            budget = self.budget(turn)
            started = time.monotonic()
            try:
                assert process.stdin is not None
                process.stdin.write(msgspec.json.encode(turn) + b"\n")
                process.stdin.flush()
                line = self._lines.get(timeout=budget)
            except (BrokenPipeError, OSError):
                line = None
            except queue.Empty:
                self._restart(f"took longer than {budget:.2f} s at seq {turn.seq}")
                return self._default(turn)
            if line is None:
                self._restart(f"died at seq {turn.seq} (exit status {process.wait()})")
                if attempt == 1 and self.budget(turn) > 0:
                    continue  # a fresh start, the same turn
                return self._default(turn)
            self._fresh = False
            self.times.append(time.monotonic() - started)
            try:
                return msgspec.json.decode(line)
            except msgspec.DecodeError:
                log.error("the program answered %r at seq %s, not JSON", line[:200], turn.seq)
                return self._default(turn)
        return self._default(turn)  # not reached: the second attempt returns

    def _default(self, turn: Turn) -> Any:
        self.defaults += 1
        return turn.legal_moves[0] if turn.legal_moves else None

    def report(self) -> str:
        """One line: the moves answered, their time (mean, max), restarts and defaults."""
        if not self.times:
            return f"no moves answered; {self.restarts} restarts, {self.defaults} defaults"
        return (
            f"{len(self.times)} moves, {1000 * statistics.fmean(self.times):.1f} ms mean, "
            f"{1000 * max(self.times):.1f} ms max; {self.restarts} restarts, "
            f"{self.defaults} default moves"
        )

    def close(self) -> None:
        """Close the program's stdin (it should exit), then its log."""
        self._stop()
        if not isinstance(self._log, int):
            self._log.close()

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_program(
    url: str,
    token: str,
    command: str | Sequence[str],
    *,
    entrant: bool = False,
    **options: Any,
) -> Program:
    """Play a seat (a seat token) or every game of a tournament entrant (``entrant=True``,
    an entrant token) with a local program; returns it, closed, with its ``times``.
    ``options`` are ``Program``'s (``log_path``, ``first_move_s``, ``move_s``,
    ``max_restarts``, ``cwd``)."""
    from ._run import run_bot, run_entrant

    with Program(command, **options) as program:
        if entrant:
            run_entrant(url, token, program.choose)
        else:
            run_bot(url, token, program.choose)
    log.info("program %s: %s", program.argv[0], program.report())
    return program
