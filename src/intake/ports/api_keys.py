from __future__ import annotations

from datetime import datetime
from typing import Protocol

from intake.domain.model import ApiKey


class ApiKeyRepository(Protocol):
    async def add(self, key: ApiKey) -> None: ...

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None: ...

    async def get(self, key_id: str) -> ApiKey | None: ...

    async def revoke(self, key_id: str, when: datetime) -> bool:
        """True if the key existed (revoking twice keeps the first time)."""
        ...

    async def list(self, workspace_id: str) -> list[ApiKey]: ...
