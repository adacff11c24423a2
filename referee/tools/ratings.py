"""``referee ratings --rebuild``: the league's lifetime ratings computed again from the settled
games, in the order they were rated (``LeagueService.rebuild``), on ``REDIS_URL`` or the
embedded Valkey of ``REFEREE_DATA_DIR``."""

from __future__ import annotations

import argparse
import asyncio
import sys

from ..service import Services
from ..settings import Settings
from ..store import open_store
from ..store.embedded import start_embedded

__all__ = ["main"]


def main(args: argparse.Namespace) -> int:
    """``referee ratings --rebuild``: every rating computed again from the settled games."""
    settings = Settings.from_env()
    embedded = None
    url = settings.redis_url
    if url is None:
        embedded = start_embedded(settings.data_dir)
        url = embedded.url

    async def rebuild() -> int:
        store = open_store(url, cluster=settings.redis_cluster, timeout_s=30)
        try:
            return await Services(store, settings).league.rebuild()
        finally:
            await store.aclose()

    try:
        count = asyncio.run(rebuild())
    finally:
        if embedded is not None:
            embedded.stop()
    print(f"rebuilt the ratings from {count} rated games", file=sys.stderr)
    return 0
