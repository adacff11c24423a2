"""``referee new-bot``: a starter bot in a new folder, in one language and one of the three
ways to connect (docs/CONNECTING.md), with its own test against a local referee.

The starters are the files of ``starters/`` (the stdin ones are ``examples/bots/``' too); the
test is ``starters/test_bot.py`` with the style and the bot's command filled in.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["LANGUAGES", "STYLES", "main", "write_starter"]

STARTERS = Path(__file__).parent / "starters"
STYLES = ("stdin", "poll", "webhook")

#: (language, style) -> (starter file -> its name in the folder, the bot's command there)
KINDS: dict[tuple[str, str], tuple[dict[str, str], list[str]]] = {
    ("python", "stdin"): ({"stdin.py": "bot.py"}, ["python3", "bot.py"]),
    ("python", "poll"): ({"poll.py": "bot.py"}, ["python3", "bot.py"]),
    ("python", "webhook"): ({"webhook.py": "bot.py"}, ["python3", "bot.py"]),
    ("node", "stdin"): ({"stdin.js": "bot.js"}, ["node", "bot.js"]),
    ("node", "poll"): ({"poll.js": "bot.js"}, ["node", "bot.js"]),
    ("node", "webhook"): ({"webhook.js": "bot.js"}, ["node", "bot.js"]),
    ("go", "stdin"): ({"stdin.go": "main.go", "go.mod": "go.mod"}, ["go", "run", "."]),
    ("shell", "stdin"): ({"stdin.sh": "bot.sh"}, ["sh", "bot.sh"]),
}
LANGUAGES = tuple(dict.fromkeys(language for language, _ in KINDS))

_HOW = {
    "stdin": "a program: one Turn JSON line in on stdin, one move line out on stdout. Play a "
    "seat with `referee bot --url URL --seat-token TOKEN --exec {command}` (or "
    "`--entrant-token` for every game of a tournament entrant).",
    "poll": "it asks the referee for its turn (long-polled) and posts its moves. Play a seat "
    "with `{command} URL SEAT_TOKEN`.",
    "webhook": "the referee calls it with each turn. Start it with `WEBHOOK_SECRET=whsec_... "
    "{command} PORT`, and name `http://HOST:PORT/` as a seat's webhook "
    '(`{{"webhook": {{"url": ...}}}}` in the seats of POST /v1/games; the secret comes back '
    "once, in the answer). The referee calls only globally routable addresses, unless its "
    "operator allows others (REFEREE_WEBHOOK_ALLOW).",
}


def write_starter(language: str, style: str, folder: Path) -> list[Path]:
    """Write the starter into ``folder`` (new, or empty); the files written."""
    if (language, style) not in KINDS:
        styles = [s for (lang, s) in KINDS if lang == language]
        raise ValueError(f"no {style} starter in {language}; there are: {', '.join(styles)}")
    if folder.exists() and any(folder.iterdir()):
        raise ValueError(f"{folder} is not empty")
    folder.mkdir(parents=True, exist_ok=True)
    files, command = KINDS[language, style]
    written = []
    for source, target in files.items():
        path = folder / target
        path.write_bytes((STARTERS / source).read_bytes())
        written.append(path)
    test = (STARTERS / "test_bot.py").read_text()
    test = test.replace("__STYLE__", style).replace('["__COMMAND__"]', repr(command))
    (folder / "test_bot.py").write_text(test)
    shown = " ".join(command)
    (folder / "README.md").write_text(
        f"# A {language} bot ({style})\n\n"
        f"{_HOW[style].format(command=repr(shown) if style == 'stdin' else shown)}\n\n"
        f"It plays `legal_moves[seq % len(legal_moves)]`: put your strategy in `choose`.\n\n"
        "Its test plays a game of every ruleset against a house bot on a local referee:\n\n"
        "    python -m pytest test_bot.py\n\n"
        "How the three ways to connect compare, and the security notes for webhook bots: the "
        "referee's docs/CONNECTING.md.\n"
    )
    return [*written, folder / "test_bot.py", folder / "README.md"]


def main(args: Any) -> int:
    try:
        written = write_starter(args.lang, args.style, Path(args.dir))
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    for path in written:
        print(path)
    print(f"test it: cd {args.dir} && python -m pytest test_bot.py", file=sys.stderr)
    return 0
