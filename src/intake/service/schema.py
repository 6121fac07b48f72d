"""The database schema: bringing it up to date (`intake migrate`, and `intake serve`
before its workers start), secrets an older version kept plain sealed with it."""

from __future__ import annotations

from attrs import frozen

from intake.ports.sealer import Sealer
from intake.ports.store import Store
from intake.service.sealing import SealingReport, SecretSealing


@frozen
class Schema:
    store: Store
    sealer: Sealer

    async def migrate(self) -> list[str]:
        """Applies the migrations the database lacks, in order, and names them; none when
        it is up to date. Raises StorageUnavailable while the database cannot answer."""
        return await self.store.migrate()

    async def seal_plain_secrets(self) -> SealingReport:
        """Seals the secrets an older version stored plain (service/sealing.py)."""
        return await SecretSealing(self.store, self.sealer).seal_plain()
