from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from attrs import frozen

from intake.domain.sealing import SealedPlace


@frozen
class StoredValue:
    """A secret as its row holds it: sealed (`sealed:v1:...`), or plain when an older
    version wrote it. Bytes, whatever the column: a plain shared secret is not text."""

    place: SealedPlace
    stored: bytes


class SealedValueRepository(Protocol):
    """The stored secrets, for sealing them again under another key (`intake secrets
    rotate`) or sealing those an older version left plain (`intake migrate`)."""

    def columns(self) -> Sequence[tuple[str, str]]:
        """The (table, column) pairs this store seals; none for a store that keeps
        nothing at rest."""
        ...

    async def values(
        self, table: str, column: str, after: str | None, limit: int
    ) -> list[StoredValue]:
        """Up to `limit` stored values of the column, by row key, after the row `after`
        (from the first when None); rows without a value are skipped."""
        ...

    async def replace(self, value: StoredValue, sealed: str) -> bool:
        """Stores `sealed` in the value's place if the row still holds `value.stored`,
        in a transaction of its own; False (nothing written) when the row changed or
        went meanwhile."""
        ...
