"""The ``referee`` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["main"]


def _verify(args: argparse.Namespace) -> int:
    from .games import verify

    report = verify(Path(args.record).read_bytes(), args.seed)
    if report.ok:
        print("ok: every die re-derived from the seed, every decision replayed, totals match")
        return 0
    for problem in report.problems:
        print(f"mismatch: {problem}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="referee", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="replay a finished game's record and check it")
    verify.add_argument("record", help="RECORD.json, as GET /v1/games/{id}/record returns it")
    verify.add_argument("--seed", help="the revealed seed (hex), if the record lacks it")
    verify.set_defaults(run=_verify)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
