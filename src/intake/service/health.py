"""What the operator's probes and scrapes read of the store: whether it answers
(/readyz) and its figures at scrape time (/metrics)."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

from intake.domain.model import Plan
from intake.domain.quota import PlanTerms
from intake.metrics import StoreFigures, read_store_figures
from intake.ports.clock import Clock
from intake.ports.store import Store


@frozen
class Readiness:
    store: Store

    async def check(self) -> None:
        """Returns once the store answers; raises StorageUnavailable while it cannot."""
        await self.store.ping()


async def store_figures(
    store: Store, clock: Clock, plans: Mapping[Plan, PlanTerms]
) -> StoreFigures:
    """The store's figures now; raises StorageUnavailable while it cannot answer."""
    return await read_store_figures(store, clock.now(), plans)
