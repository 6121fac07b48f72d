from __future__ import annotations

from typing import Protocol


class SecretRepository(Protocol):
    """Secrets the processes of one deployment share, made once and kept in the store:
    the key that signs download links."""

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        """The secret stored under `name`; when there is none, stores `candidate` and
        returns it. Two processes racing agree on one value: the first stored wins."""
        ...
