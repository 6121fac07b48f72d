"""Secrets a deployment shares (SecretRepository), in memory: each made once, then kept."""

from __future__ import annotations

from intake.adapters.memory.tables import Repository, Tables
from intake.adapters.sql_rows import check_secret


class InMemorySecrets(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        check_secret(name, candidate)
        return self._t.secrets.setdefault(name, bytes(candidate))
