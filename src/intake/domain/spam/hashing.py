"""Tokens kept as keyed hashes: the statistics never hold a readable value. The key is the
instance's (SecretRepository, "spam-token-key"), shared by its processes, so that every
process counts a token under the same number; without it a hash says nothing of its word."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from functools import partial

try:  # the same hash in C, when it was built (domain/native); hashlib's is the reference
    from intake.domain.native.clues import token_hash as _native_hash
except ImportError:  # pragma: no cover - an install without a C compiler
    _native_hash = None  # type: ignore[assignment]

KEY_NAME = "spam-token-key"
KEY_BYTES = 32
# The words a form gets repeat: a process remembers the hashes of the last ones it saw,
# a cost of about 100 bytes each, so that a token is hashed once, not once per message.
_REMEMBERED = 50_000


class TokenHasher:
    """Keyed BLAKE2b, 64 bits, as signed integers (PostgreSQL's bigint)."""

    def __init__(self, key: bytes) -> None:
        if not 16 <= len(key) <= 64:
            raise ValueError("a token key is 16 to 64 bytes")
        self.key = key
        self._keyed = hashlib.blake2b(key=key, digest_size=8)
        self._known: dict[str, int] = {}
        self._hashed: Callable[[str], int] = (
            self.reference_hash if _native_hash is None else partial(_native_hash, key)
        )

    def reference_hash(self, token: str) -> int:
        """The hash itself, by hashlib (what the native one is checked against)."""
        state = self._keyed.copy()
        state.update(token.encode("utf-8", "surrogatepass"))
        return int.from_bytes(state.digest(), "little", signed=True)

    def hash(self, token: str) -> int:
        known = self._known.get(token)
        if known is not None:
            return known
        value = self._hashed(token)
        if len(self._known) >= _REMEMBERED:
            self._known.clear()
        self._known[token] = value
        return value

    def hash_all(self, tokens: Sequence[str]) -> list[int]:
        """Each token's hash, in order: the remembered ones looked up in one pass."""
        known = self._known.get
        hashed = self.hash
        return [h if (h := known(token)) is not None else hashed(token) for token in tokens]

    def hashes(self, tokens: Iterable[str]) -> tuple[int, ...]:
        """The distinct hashes of `tokens`, sorted: a lesson's form, and the order in which
        a store locks their rows."""
        return tuple(sorted({self.hash(token) for token in tokens}))
