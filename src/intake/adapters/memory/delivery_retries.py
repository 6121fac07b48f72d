"""The in-memory store's retries of deliveries: one delivery, or every dead one to one
destination; the same rules as the SQL stores' (delivery_records.py)."""

from __future__ import annotations

from datetime import datetime

from attrs import evolve

from intake.adapters.memory.tables import Repository
from intake.domain.deliveries import Delivery, DeliveryState, DestinationKind


class InMemoryDeliveryRetries(Repository):
    async def retry_dead_to(self, kind: DestinationKind, destination_id: str, now: datetime) -> int:
        dead = [
            d.delivery_id
            for d in self._t.deliveries.values()
            if (d.kind, d.destination_id, d.state) == (kind, destination_id, DeliveryState.DEAD)
        ]
        for dead_id in dead:
            await self.retry_delivery(dead_id, now)
        return len(dead)

    async def retry_delivery(self, delivery_id: str, now: datetime) -> Delivery | None:
        tables = self._t
        delivery = tables.deliveries.get(delivery_id)
        if delivery is None or delivery.state is DeliveryState.DELIVERED:
            return delivery
        if delivery.state is DeliveryState.DEAD:
            tables.leases.pop(delivery_id, None)
            again = evolve(
                delivery, state=DeliveryState.PENDING, attempts=0, next_attempt_at=now, dead_at=None
            )
        else:
            again = evolve(delivery, next_attempt_at=now)
        tables.deliveries[delivery_id] = again
        tables.wakeup.ring()
        return again
