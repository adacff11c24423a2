"""Answers compressed as the client accepts (``Accept-Encoding``), by Litestar's compression
middleware: brotli where the client takes it (browsers do over HTTPS), else gzip.

Left out: an event stream (a game's, or a tournament page's; each event is a few hundred
bytes, sent as it happens; a compressor would hold it back or spend more than it saves)
and the hot routes of a bot's loop (``/turn``, ``/moves``). Those are answered by
``serving.py`` before Litestar and never reach the middleware; the pattern keeps them
uncompressed also where they are served by Litestar (fast routes off), so that a bot's
decision costs no compressor's time. A creation answered there too (``hot``) is compressed
as the middleware would, with this configuration.
"""

from __future__ import annotations

from litestar.config.compression import CompressionConfig

__all__ = ["COMPRESSION"]

COMPRESSION = CompressionConfig(
    backend="brotli",
    brotli_gzip_fallback=True,
    brotli_quality=5,
    gzip_compress_level=6,
    minimum_size=1024,
    exclude=[r"^/v1/games/[^/]+/(events|turn|moves)$", r"^/tournaments/[^/]+/events$"],
)
