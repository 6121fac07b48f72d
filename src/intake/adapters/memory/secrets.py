"""Secrets a deployment shares (SecretRepository), in memory: each made once, then kept."""

from __future__ import annotations

from collections.abc import Sequence

from intake.adapters.memory.tables import Repository, Tables
from intake.adapters.sql_rows import check_secret
from intake.ports.sealed_values import StoredValue


class InMemorySealedValues:
    """Nothing is kept at rest in memory: there is nothing to seal."""

    def columns(self) -> Sequence[tuple[str, str]]:
        return ()

    async def values(
        self, table: str, column: str, after: str | None, limit: int
    ) -> list[StoredValue]:
        raise ValueError(f"{table}.{column} is not a sealed column")

    async def replace(self, value: StoredValue, sealed: str) -> bool:
        raise ValueError(f"{value.place} is not a sealed column")


class InMemorySecrets(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        check_secret(name, candidate)
        return self._t.secrets.setdefault(name, bytes(candidate))
