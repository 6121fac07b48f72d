from __future__ import annotations

from typing import Protocol


class IdSource(Protocol):
    """Randomness for identifiers and secrets; a seeded fake makes tests repeatable."""

    def random_bytes(self, n: int) -> bytes: ...
