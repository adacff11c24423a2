"""The mutants of ``benchmarks/mutation.py`` that no test can tell from the original, with
the reason for each: left out of the score. Apart from the script (which needs cosmic-ray),
so that a test can check that each one still names a line of its module
(tests/test_mutation_equivalent.py): a line rewritten since would make its mutants count as
survivors, with no hint why."""

from __future__ import annotations

__all__ = ["EQUIVALENT"]

# (module, original line, mutated line) -> why no test can tell the mutant from the original
_CANONICAL = "if p[0] <= p[1] and q[0] <= q[1] and p <= q:"
_PROGRESS = (
    "a seat's progress never passes its postal round's rolls (more moves are refused: "
    "batch-complete), so >= is ==; and ints this small are cached, so `is` is =="
)
_PROTOCOL = "a declaration of the Ruleset Protocol: nothing reads it at run time"
EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("referee/games/_common.py", "return raw", "pass"): (
        "msgspec.convert returns a Struct of the target type as it is: the early return only "
        "saves the call"
    ),
    **{
        ("referee/games/_common.py", f"{name}: ClassVar[{kind}]", "pass"): _PROTOCOL
        for name, kind in (
            ("id", "str"),
            ("title", "str"),
            ("min_seats", "int"),
            ("max_seats", "int"),
            ("Options", "type"),
            ("Move", "Any"),
            ("State", "type"),
        )
    },
    **{
        (
            "referee/rulesets/choice/rounds.py",
            _CANONICAL,
            _CANONICAL.replace(part, part.replace("<=", op), 1),
        ): (
            "a stricter test before normalize's early return: the full path gives the same "
            "canonical move"
        )
        for part in ("p[0] <= p[1]", "q[0] <= q[1]", "p <= q")
        for op in ("==", "<", "is")
    },
    **{
        ("referee/rulesets/choice/engine.py", line, line.replace(">= len", f"{op} len")): _PROGRESS
        for line in (
            "return state.sheets[seat].done or state.progress[seat] >= len(state.rolls)",
            "if state.finished or state.sheets[seat].done or progress >= len(state.rolls):",
        )
        for op in ("==", "is")
    },
    ("referee/rulesets/choice/engine.py", "if len(moves) > 1:", "if len(moves) != 1:"): (
        "an empty list of moves is refused (no-moves) before the loop, so there are never 0"
    ),
    (
        "referee/rulesets/choice_specials/engine.py",
        "if (move.fifth is None) == (move.set_aside is None):",
        "if (move.fifth is None) is (move.set_aside is None):",
    ): "both sides are bools, and True and False are singletons: `is` is ==",
    (
        "referee/games/record.py",
        'return [_json.encode(e) for e in events if e.get("type") != "timeout"]',
        'return [_json.encode(e) for e in events if e.get("type") is not "timeout"]',
    ): (
        "an event's type is one of the engines' own string literals, which CPython interns: "
        "`is not` is !="
    ),
    **{
        (module, line, "pass"): (
            "dead code: the diagnosis before it raises a more precise rule for every move "
            "outside the legal set (tests/test_rules_pinned.py, UNREACHABLE)"
        )
        for module, line in (
            (
                "referee/rulesets/choice/engine.py",
                'raise RuleViolation("illegal-move", "the move is not legal on this roll")',
            ),
            (
                "referee/rulesets/choice_specials/engine.py",
                'raise RuleViolation("illegal-move", "the extra round\'s move is not legal")',
            ),
            (
                "referee/rulesets/choice_specials/engine.py",
                'raise RuleViolation("illegal-move", f"this {card} move is not legal on '
                'this roll")',
            ),
        )
    },
    (
        "referee/rulesets/chopta/scoring.py",
        "lo6, hi6 = max(0, n - y2), min(y5, c6)",
        "lo6, hi6 = max( -1, n - y2), min(y5, c6)",
    ): "y2 is at most n, so n - y2 is never below 0: max(-1, x) is max(0, x)",
    (
        "referee/rulesets/chopta/scoring.py",
        "lo1, hi1 = max(0, n - y5), min(y2, c1)",
        "lo1, hi1 = max( -1, n - y5), min(y2, c1)",
    ): "y5 is at most n, so n - y5 is never below 0: max(-1, x) is max(0, x)",
    **{
        ("referee/rulesets/choice/engine.py", line, line.replace(">= len", f"{op} len", 1)): (
            _PROGRESS
        )
        for line in (
            "if state.finished or state.sheets[seat].done or progress >= len(state.rolls):",
            "if progress >= len(state.rolls) > state.progress[seat]:  # the seat closes its round",
        )
        for op in ("==", "is")
    },
    **{
        (
            "referee/rulesets/choice/engine.py",
            "reveals = progress + 1 == len(state.rolls) and self._others_complete(state, seat)",
            after,
        ): (
            "the one-move path's early guess at a reveal: a guess of False only costs a copy "
            "of the sheet, and _commit works the reveal out again (it is never wrongly True)"
        )
        for after in (
            "reveals = progress - 1 == len(state.rolls) and self._others_complete(state, seat)",
            "reveals = progress + 1 is len(state.rolls) and self._others_complete(state, seat)",
        )
    },
    (
        "referee/rulesets/choice/engine.py",
        "if len(moves) != 1 or type(moves[0]) not in _NORMAL_MOVES or sheet.done:",
        "if len(moves) != 1 or type(moves[ -1]) not in _NORMAL_MOVES or sheet.done:",
    ): "only read when there is exactly one move: moves[0] is moves[-1]",
    (
        "referee/rulesets/choice/sheet.py",
        "SumScore(s, n, _sum_points(s, n)) for s, n in zip(range(2, 13), counts, strict=True)",
        "SumScore(s, n, _sum_points(s, n)) for s, n in zip(range(2, 13), counts, strict=False)",
    ): "a sheet always holds 11 sums' marks: zip's strictness never has a length to refuse",
    (
        "referee/rulesets/choice_specials/engine.py",
        "assert single is not None  # exactly one of the two is set: checked just above",
        "pass  # exactly one of the two is set: checked just above",
    ): "the type checker's narrowing: the test just above refuses both or neither set",
    (
        "referee/rulesets/choice_specials/engine.py",
        "if move.set_aside is not None and not free:",
        "if move.set_aside is not None or not free:",
    ): (
        "the diagnosis runs only for an FdH the legal list lacks: with a fifth die (no "
        "set_aside) that passed the checks above, no such FdH exists, so `or` adds no case"
    ),
    (
        "referee/rulesets/chopta/engine.py",
        "if state.timeouts[seat] >= 3:",
        "if state.timeouts[seat] == 3:",
    ): "a seat retired at its third timeout in a row stays retired: past 3 the test only "
    "sets what is set already",
    **{
        (
            "referee/rulesets/choice/postal.py",
            "if size == 1:  # the common schedule",
            f"if size {test}:  # the common schedule",
        ): (
            "a shortcut for a postal round of one roll: without it, the general list gives the "
            "same one roll; and a schedule's values are at least 1 (ChoiceOptions), so "
            "`< 1` and `== 0` never take it and `<= 1` and `is 1` take it as `== 1` does"
        )
        for test in ("== 0", "< 1", "<= 1", "is 1")
    },
    (
        "referee/rulesets/chopta/state.py",
        "return [v for v in range(1, 7) for _ in range(counts[v])]",
        "return [v for v in range( 0, 7) for _ in range(counts[v])]",
    ): "a count's index 0 stays 0 (a die is 1 to 6): counting from it adds no die",
    (
        "referee/rulesets/choice/sheet.py",
        "minus = -sum(x.points for x in sums if x.points < 0)",
        "minus = -sum(x.points for x in sums if x.points < 1)",
    ): "points are whole numbers: `< 1` adds the rows that score 0 to the sum, which adds 0",
    (
        "referee/rulesets/chopta/engine.py",
        "if opponent == seat:",
        "if opponent is seat:",
    ): "seat numbers are 0 to 7, and CPython caches ints this small: `is` is ==",
    (
        "referee/rulesets/choice/rounds.py",
        "return (p, q) if p <= q else (q, p)  # type: ignore[return-value]",
        "return (p, q) if p < q else (q, p)  # type: ignore[return-value]",
    ): "two equal pairs: (q, p) is (p, q)",
    (
        "referee/rulesets/choice/rounds.py",
        "if len(sheet.fifth_values) < 3:",
        "if len(sheet.fifth_values) != 3:",
    ): "a sheet holds at most three fifth-die values (a fourth is refused): < 3 is != 3",
    ("referee/games/dice.py", "if len(_PADS) >= 4096:", "if len(_PADS) == 4096:"): (
        "the pad cache grows by one key at a time, so it reaches 4096 before it could pass it"
    ),
}
