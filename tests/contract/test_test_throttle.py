"""Tests to one destination are throttled in every store: one a minute and five an hour,
counted in the queuing transaction, so tests at the same moment never pass together;
the refusal says how long to wait and queues nothing."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from intake.domain.deliveries import DestinationKind, mail_test_event, webhook_test_event
from intake.domain.destination_limits import SendThrottled
from intake.ports.store import Store
from tests.contract.builders import (
    T0,
    WORKSPACE_ID,
    endpoint,
    form,
    recipient,
    seed,
)

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
WEBHOOK = DestinationKind.WEBHOOK


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form())
    await store.destinations.add_endpoint(endpoint("whk_1"))
    await store.destinations.add_endpoint(endpoint("whk_2"))
    await store.destinations.add_recipient(recipient())
    return store


_count = 0


async def _test(store: Store, at: datetime, endpoint_id: str = "whk_1") -> None:
    global _count  # noqa: PLW0603 - each event a new id
    _count += 1
    event = webhook_test_event(f"evt_t{_count}", endpoint(endpoint_id), WORKSPACE_ID, at)
    await store.deliveries.queue_direct(event, WEBHOOK, endpoint_id, at, throttled=True)


async def _queued(store: Store) -> int:
    return len(await store.deliveries.list_deliveries(limit=1000))


async def test_a_second_test_within_the_minute_waits_for_it(seeded: Store) -> None:
    await _test(seeded, NOW)

    with pytest.raises(SendThrottled) as refused:
        await _test(seeded, NOW + timedelta(seconds=20))

    assert refused.value.retry_after == 40
    assert await _queued(seeded) == 1
    await _test(seeded, NOW + timedelta(seconds=60))
    assert await _queued(seeded) == 2


async def test_five_an_hour_then_the_sixth_waits_for_the_first_to_leave(seeded: Store) -> None:
    for minute in range(5):
        await _test(seeded, NOW + timedelta(minutes=minute * 2))

    with pytest.raises(SendThrottled) as refused:
        await _test(seeded, NOW + timedelta(minutes=10))

    assert refused.value.retry_after == 50 * 60
    await _test(seeded, NOW + timedelta(minutes=60, seconds=1))
    assert await _queued(seeded) == 6


async def test_each_destination_has_its_own_and_unthrottled_queues_are_not_held(
    seeded: Store,
) -> None:
    await _test(seeded, NOW)
    await _test(seeded, NOW, endpoint_id="whk_2")
    mailed = recipient()
    for n in range(3):  # queued unthrottled: not held, whatever came before
        event = mail_test_event(f"evt_m{n}", mailed, WORKSPACE_ID, NOW)
        await seeded.deliveries.queue_direct(event, DestinationKind.EMAIL, mailed.recipient_id, NOW)

    assert await _queued(seeded) == 5


async def test_tests_at_the_same_moment_let_one_through(seeded: Store) -> None:
    outcomes = await asyncio.gather(*(_test(seeded, NOW) for _ in range(5)), return_exceptions=True)

    assert sorted(type(each).__name__ for each in outcomes) == [
        "NoneType",
        *["SendThrottled"] * 4,
    ]
    assert await _queued(seeded) == 1
