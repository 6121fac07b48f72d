"""Sealing the stored secrets again: under a new key (`intake secrets rotate`), or for the
first time when an older version left them plain (`intake migrate`).

Each value is opened with whichever configured key sealed it, sealed under the current
key, and written back only if its row still holds what was read, in a transaction of its
own: a rotation stopped at any point leaves every value sealed under the old key or the
new one, both configured, so every secret stays readable, and a run again goes on.
"""

from __future__ import annotations

from attrs import define, field, frozen

from intake.domain.sealing import SEALED_PREFIX, sealed_key_id
from intake.ports.sealed_values import StoredValue
from intake.ports.sealer import Sealer
from intake.ports.store import Store

PAGE = 100
_SEALED_BYTES = SEALED_PREFIX.encode("ascii")


@define
class SealingReport:
    """What one run did: values sealed again, values already under the current key, and
    values that changed while it ran (written meanwhile under the current key)."""

    key_id: str
    resealed: int = 0
    current: int = 0
    changed: int = 0
    by_column: dict[str, int] = field(factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "key_id": self.key_id,
            "resealed": self.resealed,
            "current": self.current,
            "changed_meanwhile": self.changed,
            "by_column": dict(self.by_column),
        }


@frozen
class SecretSealing:
    store: Store
    sealer: Sealer

    async def rotate(self) -> SealingReport:
        """Seals every stored secret not under the current key (plain ones too) under it."""
        return await self._run(plain_only=False)

    async def seal_plain(self) -> SealingReport:
        """Seals the secrets an older version stored plain; sealed ones stay as they are."""
        return await self._run(plain_only=True)

    async def _run(self, *, plain_only: bool) -> SealingReport:
        report = SealingReport(self.sealer.key_id)
        for table, column in self.store.sealed.columns():
            after: str | None = None
            while page := await self.store.sealed.values(table, column, after, PAGE):
                for value in page:
                    await self._one(value, report, plain_only=plain_only)
                after = page[-1].place.row
        return report

    async def _one(self, value: StoredValue, report: SealingReport, *, plain_only: bool) -> None:
        stored = value.stored
        is_sealed = stored.startswith(_SEALED_BYTES)
        named = sealed_key_id(stored.decode("ascii")) if is_sealed else None
        if named == self.sealer.key_id or (plain_only and is_sealed):
            report.current += 1
            return
        # SealingError here (a key not configured): stop, nothing half-written.
        plaintext = self.sealer.open(stored.decode("ascii"), value.place) if is_sealed else stored
        if await self.store.sealed.replace(value, self.sealer.seal(plaintext, value.place)):
            report.resealed += 1
            name = f"{value.place.table}.{value.place.column}"
            report.by_column[name] = report.by_column.get(name, 0) + 1
        else:
            report.changed += 1
