"""Mutation score of the rules engines: how many small slips in a module its pure tests catch.

Needs cosmic-ray (`pip install 'cosmic-ray>=8.7'`, not in the project's extras: nothing else uses
it) besides the test extra. Run (not in CI; 15-25 minutes of CPU for the defaults, so nice it):
    nice -n 19 python benchmarks/mutation.py [--sample N] [--seed S] [--write-results]
    nice -n 19 python benchmarks/mutation.py --root ../plugin --package myplugin/rules \\
        --tests tests/test_rules.py          # the same run over a plug-in's package

Mutants are made by cosmic-ray's operators (comparison, arithmetic, unary and boolean operators,
numbers, True/False, and/or, break/continue, for-loops made empty, exceptions replaced, decorators
removed) plus two of this script's own that cosmic-ray lacks: a statement deleted (made `pass`)
and a returned value made None. Each mutant is written into a copy of the project in a temporary
directory (the checkout is never touched) and the tests are run there in a fresh interpreter,
stopping at the first failure, with a time limit: a mutant that hangs the tests counts as killed,
since the suite's per-test timeout fails it. Mutants that do not compile, and mutants inside a
function's parameter or return annotations (never evaluated under `from __future__ import
annotations`), are not made. A module's mutants are sampled (seeded) when there
are more than --sample of them. Mutants known to be equivalent (no test can tell them from the
original) are listed in EQUIVALENT (benchmarks/mutation_equivalent.py) with the reason, and
left out of the score.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from functools import cache
from importlib.metadata import version
from pathlib import Path

from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from cosmic_ray.operators.operator import Example, Operator
from cosmic_ray.plugins import get_operator, operator_names
from mutation_equivalent import EQUIVALENT  # benchmarks/, beside this script
from parso.python.tree import Keyword, ReturnStmt

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "README.md"
BEGIN = "<!-- mutation:begin (written by benchmarks/mutation.py --write-results) -->"
END = "<!-- mutation:end -->"

# the pure rules tests, quickest first: with -x a killed mutant stops at its first failure
PURE_TESTS = (
    "tests/test_dice.py",
    "tests/test_core.py",
    "tests/test_record.py",
    "tests/test_rules_pinned.py",
    "tests/test_chopta.py",
    "tests/test_choice_specials.py",
    "tests/test_choice.py",
    "tests/test_noninterference.py",
    "tests/test_plugins.py",
    "tests/test_view_shapes.py",  # the views' Structs: every view and record decodes strictly
    "tests/test_contract_committed.py",  # and the contract they make is the committed one
    "tests/test_properties.py",
)
MODULES = (
    "referee/games/_common.py",
    "referee/games/dice.py",
    "referee/rulesets/choice/engine.py",
    "referee/rulesets/choice/postal.py",
    "referee/rulesets/choice/rounds.py",
    "referee/rulesets/choice/sheet.py",
    "referee/rulesets/choice/views.py",
    "referee/rulesets/choice_specials/engine.py",
    "referee/rulesets/chopta/engine.py",
    "referee/rulesets/chopta/scoring.py",
    "referee/rulesets/chopta/state.py",
    "referee/rulesets/chopta/views.py",
    "referee/games/record.py",
)
# random values (VariableReplacer, VariableInserter) make mutants that differ from run to run
SKIPPED_OPERATORS = ("core/VariableReplacer", "core/VariableInserter")


_CACHE_BOUND = re.compile(r"@lru_cache\(maxsize= ?\d+\)")
#: a class attribute's annotation and its value (``name: ClassVar[...] = value``)
_CLASS_VAR = re.compile(r"(\w+): ClassVar\[.*\] = (.*)")


def equivalence(module: str, before: str, after: str) -> str | None:
    """Why a mutant is equivalent, or None: EQUIVALENT's entries, then the patterns below."""
    reason = EQUIVALENT.get((module, before, after))
    # a class attribute's annotation changed, its name and value not
    was, now = _CLASS_VAR.fullmatch(before), _CLASS_VAR.fullmatch(after)
    if reason is None and was and now and was.groups() == now.groups():
        reason = "an annotation, never evaluated (from __future__ import annotations)"
    # a Struct's instances tracked by the garbage collector or not: values that hold no cycle
    untracked = before.startswith("class ") and "gc=False" in before
    if reason is None and untracked and after == before.replace("gc=False", "gc=True", 1):
        reason = "a Struct of plain values, which form no cycle: tracked or not, the same"
    if reason is None and _CACHE_BOUND.fullmatch(before) and _CACHE_BOUND.fullmatch(after):
        reason = "a cache's bound changes memory and speed, never a result"
    # a decorator removed is recorded with the blank lines before it, each as " / "
    if reason is None and _CACHE_BOUND.fullmatch(before.strip(" /")) and not after.strip():
        reason = "a cache removed: the function gives the same results, only slower"
    return reason


class DeleteStatement(Operator):
    """A simple statement (an assignment, a call, a raise...) replaced by `pass`."""

    KINDS = frozenset(
        {"expr_stmt", "return_stmt", "raise_stmt", "del_stmt", "assert_stmt", "atom_expr"}
    )

    def mutation_positions(self, node):
        if node.type == "simple_stmt" and node.children[0].type in self.KINDS:
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        first = node.children[0]
        node.children = [Keyword("pass", first.start_pos, first.get_first_leaf().prefix)] + [
            child for child in node.children[1:] if child.type == "newline"
        ]
        return node

    @classmethod
    def examples(cls):
        return (Example("x = 1\n", "pass\n"),)


class ReturnNone(Operator):
    """`return value` made `return None`."""

    def mutation_positions(self, node):
        returns = isinstance(node, ReturnStmt) and len(node.children) == 2
        if returns and node.children[1].get_code().strip() != "None":
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        node.children[1] = Keyword("None", node.children[1].start_pos, " ")
        return node

    @classmethod
    def examples(cls):
        return (Example("def f():\n    return 1\n", "def f():\n    return None\n"),)


@cache
def operators() -> list[tuple[str, Operator]]:
    chosen = [
        (name, get_operator(name)())
        for name in operator_names()
        if name.startswith("core/") and name not in SKIPPED_OPERATORS
    ]
    return [*chosen, ("DeleteStatement", DeleteStatement()), ("ReturnNone", ReturnNone())]


@dataclass
class Mutant:
    module: str
    operator: str
    occurrence: int
    line: int
    before: str
    after: str
    outcome: str = ""  # killed, survived, timeout, equivalent
    seconds: float = 0.0

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.module, self.before, self.after)


def in_signature_annotation(node) -> bool:
    """Whether a node is part of a parameter's or a return annotation: with ``from __future__
    import annotations`` (every module here) those are strings never evaluated, so a mutant
    there is no mutant."""
    while node.parent is not None:
        parent = node.parent
        if parent.type == "funcdef" and node is parent.annotation:
            return True  # the return annotation
        if parent.type == "tfpdef" and node is parent.children[-1]:
            return True  # a parameter's: `name: annotation`
        node = parent
    return False


def positions(root: Path, module: str) -> list[tuple[str, int]]:
    """Every (operator, occurrence) that mutates one module: cheap, one parse."""
    source = (root / module).read_text()
    lazy = "from __future__ import annotations" in source
    nodes = list(ast_nodes(get_ast(source)))
    found = []
    for name, operator in operators():
        occurrence = 0
        for node in nodes:
            for _ in operator.mutation_positions(node):
                if not (lazy and in_signature_annotation(node)):
                    found.append((name, occurrence))
                occurrence += 1
    return found


def make_mutant(source: str, module: str, name: str, occurrence: int) -> tuple[Mutant, str] | None:
    """One mutant and its source, or None where the operator makes no change (or fails)."""
    operator = dict(operators())[name]
    try:
        mutated = mutate_code(source, operator, occurrence)
    except (AttributeError, IndexError):  # cosmic-ray's ExceptionReplacer on `except (A, B)`
        return None
    if mutated is None or mutated == source:
        return None
    try:
        compile(mutated, module, "exec")
    except SyntaxError:  # e.g. a keyword-only `*` made `-`: not a program, so not a mutant
        return None
    lines, changed = source.splitlines(), mutated.splitlines()
    matcher = difflib.SequenceMatcher(None, lines, changed, autojunk=False)
    _, i1, i2, j1, j2 = next(op for op in matcher.get_opcodes() if op[0] != "equal")
    before = " / ".join(x.strip() for x in lines[i1:i2])
    after = " / ".join(x.strip() for x in changed[j1:j2])
    return Mutant(module, name, occurrence, i1 + 1, before, after), mutated


def copy_project(root: Path, into: Path) -> None:
    ignore = shutil.ignore_patterns(
        ".git",
        "node_modules",
        "__pycache__",
        ".hypothesis",
        ".pytest_cache",
        "results",
        "clients",
        "openapi",
        "test-output",
        "data",  # an embedded Valkey's default folder: its socket cannot be copied
        "*.egg-info",
        ".venv",
    )
    shutil.copytree(root, into, ignore=ignore, dirs_exist_ok=True)
    contract = root / "openapi" / "openapi.json"  # the one file of it a test reads
    if contract.exists():
        (into / "openapi").mkdir(exist_ok=True)
        shutil.copy2(contract, into / "openapi" / "openapi.json")


def run_tests(copy: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    env = {
        **os.environ,
        "PYTHONPATH": str(copy),
        "PYTHONDONTWRITEBYTECODE": "1",  # a same-size mutant must never meet a stale .pyc
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the service tests' plugins cost seconds a run
    }
    shutil.rmtree(copy / ".hypothesis", ignore_errors=True)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        # one process, stopping at the first failure: not the suite's workers (its addopts
        # name xdist's options, which the plugins left out here would not know)
        "-o",
        "addopts=",
        "-p",
        "_hypothesis_pytestplugin",
        "--hypothesis-seed=0",
        "-p",
        "pytest_timeout",
        *tests,
    ]
    start = time.monotonic()
    try:
        done = subprocess.run(
            command, cwd=copy, env=env, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start
    seconds = time.monotonic() - start
    if done.returncode == 0:
        return "survived", seconds
    if done.returncode in (1, 2, 3, 4):  # failed; or the mutant broke an import (conftest's: 4)
        return "killed", seconds
    raise RuntimeError(f"pytest ended with {done.returncode}:\n{done.stdout.decode()[-2000:]}")


def score(mutants: list[Mutant]) -> dict:
    judged = [m for m in mutants if m.outcome != "equivalent"]
    killed = sum(m.outcome in ("killed", "timeout") for m in judged)
    return {
        "mutants": len(mutants),
        "equivalent": len(mutants) - len(judged),
        "killed": killed,
        "survived": len(judged) - killed,
        "score": round(100 * killed / len(judged), 1) if judged else None,
    }


def rescore(report: dict) -> dict:
    """A report's scores with the equivalent mutants as EQUIVALENT names them now."""
    mutants = [Mutant(**m) for m in report["mutants"]]
    for mutant in mutants:
        if equivalence(*mutant.key):
            mutant.outcome = "equivalent"
    for module, row in report["modules"].items():
        row.update(score([m for m in mutants if m.module == module]))
    return {**report, "mutants": [asdict(m) for m in mutants]}


def markdown(report: dict) -> str:
    out = [
        BEGIN,
        "## Mutation score of the rules engines (benchmarks/mutation.py)",
        "",
        f"Measured {report['date']}: cosmic-ray {report['cosmic_ray']} operators plus statement "
        f"deletion and return-None, {report['sample']} mutants sampled per module "
        f"(seed {report['seed']}), each against the pure rules tests "
        f"({', '.join(report['tests'])}) with a {report['timeout']:.0f} s limit per mutant. "
        "Mutants that do not compile and mutants inside parameter or return annotations are not "
        "made; a mutant that outlives the limit (an endless loop) counts as killed. "
        "The score is killed / (sampled - equivalent).",
        "",
        *([report["note"] + ".", ""] if report.get("note") else []),
        "| module | mutants in all | sampled | equivalent | killed | survived | score |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for module, row in report["modules"].items():
        out.append(
            f"| {module} | {row['total']} | {row['mutants']} | {row['equivalent']} | "
            f"{row['killed']} | {row['survived']} | {row['score']} % |"
        )
    out += ["", "Survivors (module:line, operator: before → after):", ""]
    survivors = [m for m in report["mutants"] if m["outcome"] == "survived"]
    out += [
        f"- {m['module']}:{m['line']} {m['operator']}: `{m['before']}` → `{m['after']}`"
        for m in survivors
    ] or ["- none"]
    out += [
        "",
        "Killed by the time limit (the tests outlived it; in the suite, the per-test timeout):",
        "",
    ]
    looping = [m for m in report["mutants"] if m["outcome"] == "timeout"]
    out += [
        f"- {m['module']}:{m['line']} {m['operator']}: `{m['before']}` → `{m['after']}`"
        for m in looping
    ] or ["- none"]
    out += ["", "Equivalent mutants met in the sample, with the reason:", ""]
    equivalent = [m for m in report["mutants"] if m["outcome"] == "equivalent"]
    out += [
        f"- {m['module']}:{m['line']} `{m['before']}` → `{m['after']}`: "
        f"{equivalence(m['module'], m['before'], m['after'])}"
        for m in equivalent
    ] or ["- none"]
    out += ["", END]
    return "\n".join(out)


def write_results(text: str, document: Path) -> None:
    current = document.read_text()
    if BEGIN in current:
        head, rest = current.split(BEGIN, 1)
        current = head + text + rest.split(END, 1)[1]
    else:
        current = current.rstrip("\n") + "\n\n" + text + "\n"
    document.write_text(current)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the project to copy and test")
    parser.add_argument("--modules", nargs="+", default=list(MODULES), help="relative to --root")
    parser.add_argument("--package", help="mutate every .py file in this folder instead")
    parser.add_argument("--tests", nargs="+", default=list(PURE_TESTS), help="relative to --root")
    parser.add_argument("--sample", type=int, default=60, help="mutants per module at most")
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--timeout", type=float, default=0, help="s per mutant (0: 5x baseline)")
    parser.add_argument("--json", type=Path, help="write every mutant's outcome here (JSON)")
    parser.add_argument("--write-results", action="store_true", help=f"update {RESULTS}")
    parser.add_argument(
        "--rescore", type=Path, help="no run: score a --json report again with EQUIVALENT as now"
    )
    args = parser.parse_args()
    if args.rescore:
        report = rescore(json.loads(args.rescore.read_text()))
        print(markdown(report))
        if args.write_results:
            write_results(markdown(report), RESULTS)
        return
    # stopped (kill PID): end the running tests and remove the copy, as Ctrl-C would
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    root = args.root.resolve()
    modules = args.modules
    if args.package:
        modules = sorted(
            str(p.relative_to(root))
            for p in (root / args.package).glob("*.py")
            if p.name != "__init__.py"
        )
    tests = [t for t in args.tests if (root / t).exists()]

    with tempfile.TemporaryDirectory(prefix="mutation-") as folder:
        copy = Path(folder)
        copy_project(root, copy)
        outcome, baseline = run_tests(copy, tests, timeout=600)
        if outcome != "survived":
            sys.exit(f"the tests fail on the unmutated code ({outcome})")
        timeout = args.timeout or max(30.0, 5 * baseline)
        print(f"baseline {baseline:.1f} s, {timeout:.0f} s per mutant", flush=True)
        rows, every = {}, []
        for module in modules:
            original = (copy / module).read_text()
            found = positions(copy, module)
            chosen = random.Random(f"{args.seed}:{module}").sample(found, len(found))
            sampled = []  # the first --sample of a seeded shuffle that make a change
            for name, occurrence in chosen:
                made = make_mutant(original, module, name, occurrence)
                if made is not None:
                    sampled.append(made)
                if len(sampled) == args.sample:
                    break
            sampled.sort(key=lambda pair: (pair[0].line, pair[0].operator, pair[0].occurrence))
            for mutant, mutated in sampled:
                if equivalence(*mutant.key):
                    mutant.outcome = "equivalent"
                else:
                    (copy / module).write_text(mutated)
                    try:
                        mutant.outcome, mutant.seconds = run_tests(copy, tests, timeout)
                    finally:
                        (copy / module).write_text(original)
                print(
                    f"{mutant.outcome:10} {module}:{mutant.line} {mutant.operator}: "
                    f"{mutant.before} -> {mutant.after}",
                    flush=True,
                )
            mutants = [m for m, _ in sampled]
            every += mutants
            rows[module] = {"total": len(found), **score(mutants)}
            print(module, rows[module], flush=True)

    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cosmic_ray": version("cosmic-ray"),
        "sample": args.sample,
        "seed": args.seed,
        "timeout": timeout,
        "tests": tests,
        "modules": rows,
        "mutants": [asdict(m) for m in every],
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(markdown(report))
    if args.write_results:
        write_results(markdown(report), RESULTS)


if __name__ == "__main__":
    main()
