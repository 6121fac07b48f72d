"""Retrying every dead delivery to one destination, in every store: the dead ones to it
pending again, due now and counted afresh; its pending and delivered ones, and every
other destination's, as they were."""

from __future__ import annotations

from datetime import timedelta

import pytest

from intake.domain.deliveries import DeliveryState, DestinationKind
from intake.ports.store import Store
from tests.contract.builders import T0, endpoint, event_for, form, plan, seed, submission

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
LEASE = timedelta(minutes=2)
WEBHOOK = DestinationKind.WEBHOOK


async def _states(store: Store, endpoint_id: str) -> dict[str, tuple[object, ...]]:
    """Each delivery to the endpoint by its submission's event: state, attempts, when due."""
    records = await store.deliveries.endpoint_deliveries(endpoint_id, limit=100)
    return {
        r.delivery.event_id: (r.delivery.state, r.delivery.attempts, r.delivery.next_attempt_at)
        for r in records
    }


async def test_every_dead_delivery_to_one_destination_and_nothing_else_is_retried(
    store: Store,
) -> None:
    await seed(store, form())
    await store.destinations.add_endpoint(endpoint("whk_1"))
    await store.destinations.add_endpoint(endpoint("whk_2"))
    events = []
    for n in (1, 2, 3, 4):
        sub = submission(n)
        await store.submissions.commit(plan(sub))
        events.append(event_for(sub).event_id)
    await store.deliveries.fan_out(NOW, 100)
    soon = NOW + timedelta(minutes=5)
    for claimed in (await store.deliveries.claim_due(NOW, LEASE, 100)).leased:
        delivery = claimed.delivery
        if delivery.destination_id == "whk_1" and delivery.event_id == events[2]:
            await store.deliveries.record_success(delivery.delivery_id, NOW, 200)
        elif delivery.destination_id == "whk_1" and delivery.event_id == events[3]:
            await store.deliveries.record_failure(delivery.delivery_id, NOW, "HTTP 503", soon)
        else:
            await store.deliveries.record_failure(delivery.delivery_id, NOW, "HTTP 500", None)
    other_before = await _states(store, "whk_2")
    later = NOW + timedelta(days=1)

    assert await store.deliveries.retry_dead_to(WEBHOOK, "whk_1", later) == 2

    pending, delivered, dead = DeliveryState.PENDING, DeliveryState.DELIVERED, DeliveryState.DEAD
    assert await _states(store, "whk_1") == {
        events[0]: (pending, 0, later),
        events[1]: (pending, 0, later),
        events[2]: (delivered, 1, None),
        events[3]: (pending, 1, soon),
    }
    assert other_before == await _states(store, "whk_2")
    assert {state for state, _, _ in other_before.values()} == {dead}
    due = (await store.deliveries.claim_due(later, LEASE, 100)).leased
    assert {(c.delivery.destination_id, c.event.event_id) for c in due} == {
        ("whk_1", events[0]),
        ("whk_1", events[1]),
        ("whk_1", events[3]),
    }
    assert await store.deliveries.retry_dead_to(WEBHOOK, "whk_1", later) == 0  # none dead
    assert await store.deliveries.retry_dead_to(DestinationKind.EMAIL, "whk_2", later) == 0
    assert await store.deliveries.retry_dead_to(WEBHOOK, "whk_nope", later) == 0
