"""Dice anyone can re-derive once the seed is revealed.

Each die is a pure function of the game's dice key and its position (a label such as
``roll/7`` plus the die's index), drawn from HMAC-SHA256 output by rejection sampling:
bytes >= 252 are skipped, so ``byte % 6`` has no modulo bias.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import Any

__all__ = ["commitment", "dice_key", "faces", "new_seed", "roll"]

_UNBIASED_LIMIT = 252  # 42 * 6: the largest multiple of 6 that fits in a byte
_FACE = bytes(byte % 6 + 1 for byte in range(256))  # byte -> face
_BIASED = bytes(range(_UNBIASED_LIMIT, 256))  # bytes dropped by rejection sampling


def new_seed() -> bytes:
    """A fresh 32-byte secret seed for a game."""
    return secrets.token_bytes(32)


def commitment(seed: bytes) -> str:
    """SHA-256 hex of the seed: published at creation, checked when the seed is revealed."""
    return hashlib.sha256(seed).hexdigest()


def dice_key(seed: bytes, client_seeds: Sequence[str] = ()) -> bytes:
    """Mix the server seed with the seats' optional client seeds into the dice key.

    The server commits to ``seed`` before any client seed is known, so neither side alone
    can steer the dice. Without client seeds the key is the seed itself.
    """
    if not client_seeds:
        return seed
    message = b"client-seeds\x00" + b"\x00".join(s.encode() for s in client_seeds)
    return hmac.digest(seed, message, "sha256")


_PADS: dict[bytes, tuple[Any, Any]] = {}
_IPAD = bytes(b ^ 0x36 for b in range(256))  # byte -> byte XOR ipad, for bytes.translate
_OPAD = bytes(b ^ 0x5C for b in range(256))


def _pads(key: bytes) -> tuple[Any, Any]:
    """HMAC-SHA256's keyed inner and outer hashes, prepared once per key (RFC 2104)."""
    pads = _PADS.get(key)
    if pads is None:
        block = (hashlib.sha256(key).digest() if len(key) > 64 else key).ljust(64, b"\0")
        pads = (hashlib.sha256(block.translate(_IPAD)), hashlib.sha256(block.translate(_OPAD)))
        if len(_PADS) >= 4096:
            _PADS.clear()
        _PADS[key] = pads
    return pads


def roll(key: bytes, label: str, count: int) -> tuple[int, ...]:
    """``count`` dice (1..6) at position ``label``; die ``i`` depends only on key, label, i.

    Block ``j`` of the stream is HMAC-SHA256(key, "<label>/<j>").
    """
    return tuple(faces(key, label, count))


def faces(key: bytes, label: str, count: int) -> bytes:
    """:func:`roll` as bytes, one face per byte."""
    inner_pad, outer_pad = _PADS.get(key) or _pads(key)
    out = b""
    block = 0
    while len(out) < count:
        inner = inner_pad.copy()
        inner.update(f"{label}/{block}".encode())
        outer = outer_pad.copy()
        outer.update(inner.digest())
        out += outer.digest().translate(_FACE, _BIASED)
        block += 1
    return out[:count]
