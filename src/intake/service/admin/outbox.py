"""The outbox as an operator sees it: its events and deliveries, and retrying dead ones."""

from __future__ import annotations

from attrs import frozen

from intake.domain.deliveries import Delivery
from intake.ports.submissions import OutboxRow
from intake.service.admin.base import AdminBase
from intake.service.admin.errors import AdminError, NotFoundError


@frozen
class Outbox:
    """The outbox as an operator sees it: events and their deliveries, as many as asked
    for, and how many there are in all: `total` deliveries (dead ones only, when only
    those were asked for) and `waiting` events not yet fanned out."""

    events: list[OutboxRow]
    deliveries: list[Delivery]
    total: int
    waiting: int


class OutboxAdmin(AdminBase):
    async def outbox(self, *, dead_only: bool = False, limit: int = 100) -> Outbox:
        """The deliveries (only the dead ones with `dead_only`) and, without it, the
        outbox rows as well."""
        deliveries = await self._store.deliveries.list_deliveries(dead_only=dead_only, limit=limit)
        events = [] if dead_only else await self._store.submissions.outbox(limit)
        counts = await self._store.deliveries.counts()
        total = counts.dead if dead_only else counts.pending + counts.delivered + counts.dead
        return Outbox(events, deliveries, total=total, waiting=counts.unpublished)

    async def retry(self, event_id: str) -> int:
        """Makes an event's dead deliveries due now; returns how many. An unknown event
        (or one purged) and an event with nothing dead are refused, each saying so."""
        count = await self._store.deliveries.retry_dead(event_id, self._clock.now())
        if count is None:
            raise NotFoundError(f"no event {event_id!r} in the outbox")
        if count == 0:
            raise AdminError(f"event {event_id!r} has no dead deliveries")
        return count
