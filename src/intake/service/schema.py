"""The database schema: bringing it up to date (`intake migrate`, and `intake serve`
before its workers start)."""

from __future__ import annotations

from attrs import frozen

from intake.ports.store import Store


@frozen
class Schema:
    store: Store

    async def migrate(self) -> list[str]:
        """Applies the migrations the database lacks, in order, and names them; none when
        it is up to date. Raises StorageUnavailable while the database cannot answer."""
        return await self.store.migrate()
