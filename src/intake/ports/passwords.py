from __future__ import annotations

from typing import Protocol


class PasswordHasher(Protocol):
    """A slow, salted password hash (argon2id). Async: the work runs off the event loop."""

    async def hash(self, password: str) -> str: ...

    async def verify(self, password_hash: str, password: str) -> bool:
        """True if the password matches; False for a wrong one or a hash it cannot read."""
        ...
