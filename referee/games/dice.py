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

__all__ = ["commitment", "dice_key", "new_seed", "roll"]

_UNBIASED_LIMIT = 252  # 42 * 6: the largest multiple of 6 that fits in a byte


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


def roll(key: bytes, label: str, count: int) -> tuple[int, ...]:
    """``count`` dice (1..6) at position ``label``; die ``i`` depends only on key, label, i."""
    out: list[int] = []
    block = 0
    while True:
        for byte in hmac.digest(key, f"{label}/{block}".encode(), "sha256"):
            if byte < _UNBIASED_LIMIT:
                out.append(byte % 6 + 1)
                if len(out) == count:
                    return tuple(out)
        block += 1
