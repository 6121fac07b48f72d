"""What the operator's probes and scrapes read of the store: whether it answers
(/readyz) and its figures at scrape time (/metrics, which metrics.py exposes)."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

from intake.domain.model import Plan
from intake.domain.quota import PlanTerms, ceiling, period
from intake.ports.clock import Clock
from intake.ports.deliveries import DeliveryCounts
from intake.ports.store import Store

# A workspace this far up its monthly ceiling counts as near it.
NEAR_CEILING = 0.8


@frozen
class Readiness:
    store: Store

    async def check(self) -> None:
        """Returns once the store answers; raises StorageUnavailable while it cannot."""
        await self.store.ping()


@frozen
class StoreFigures:
    backlog: int
    oldest_age_seconds: float
    deliveries: DeliveryCounts
    quota_used: int
    workspaces_near_ceiling: int
    workspaces_at_ceiling: int


async def store_figures(
    store: Store, clock: Clock, plans: Mapping[Plan, PlanTerms]
) -> StoreFigures:
    """The store's figures now, from four read-only queries, none of which grows with
    the submissions kept: the backlog and the delivery counts, and this month's quota
    use of the workspaces that have any (one row each). Raises StorageUnavailable while
    the store cannot answer."""
    now = clock.now()
    waiting, oldest = await store.deliveries.backlog(now)
    counts = await store.deliveries.counts()
    near = reached = used_total = 0
    for workspace, used in await store.workspaces.usage_in_period(period(now)):
        top = ceiling(workspace, plans)
        used_total += used
        if used >= top:
            reached += 1
        elif used >= NEAR_CEILING * top:
            near += 1
    return StoreFigures(
        backlog=waiting,
        oldest_age_seconds=max(0.0, (now - oldest).total_seconds()) if oldest else 0.0,
        deliveries=counts,
        quota_used=used_total,
        workspaces_near_ceiling=near,
        workspaces_at_ceiling=reached,
    )
