"""The read-only queries behind /metrics, in every store: where the kept events stand
(`deliveries.counts`) and every workspace's quota use in a month
(`workspaces.usage_in_period`)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from attrs import evolve

from intake.domain.model import Plan, SubmissionStatus
from intake.ports.deliveries import DeliveryCounts
from intake.ports.store import Store
from tests.contract.builders import (
    FORM_ID,
    PERIOD,
    T0,
    endpoint,
    event_for,
    form,
    plan,
    quota,
    recipient,
    seed,
    submission,
    workspace,
)

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
LEASE = timedelta(minutes=2)
OTHER_FORM = "frm_2"


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form(), form(OTHER_FORM, public_form_key="pk0form2"))
    return store


async def commit(store: Store, n: int, *, form_id: str = FORM_ID) -> str:
    sub = submission(n, form_id=form_id)
    await store.submissions.commit(plan(sub))
    return event_for(sub).event_id


async def test_an_empty_store_counts_nothing(seeded: Store) -> None:
    assert await seeded.deliveries.counts() == DeliveryCounts(0, 0, 0, 0)


async def test_committed_events_are_unpublished_until_fanned_out(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_a"))
    await seeded.destinations.add_recipient(recipient("rcp_a"))
    await commit(seeded, 1)
    await commit(seeded, 2)
    await commit(seeded, 3, form_id=OTHER_FORM)  # a form with no destinations

    assert await seeded.deliveries.counts() == DeliveryCounts(unpublished=3)

    await seeded.deliveries.fan_out(NOW, 1)  # the oldest: a webhook and a mail
    assert await seeded.deliveries.counts() == DeliveryCounts(unpublished=2, pending=2)

    await seeded.deliveries.fan_out(NOW, 100)  # the last one goes nowhere
    assert await seeded.deliveries.counts() == DeliveryCounts(pending=4)


async def test_deliveries_are_counted_by_the_state_each_result_leaves(seeded: Store) -> None:
    for endpoint_id in ("whk_a", "whk_b", "whk_c"):
        await seeded.destinations.add_endpoint(endpoint(endpoint_id))
    await commit(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    claimed = {
        c.delivery.destination_id: c.delivery.delivery_id
        for c in (await seeded.deliveries.claim_due(NOW, LEASE, 10)).leased
    }

    await seeded.deliveries.record_success(claimed["whk_a"], NOW)
    await seeded.deliveries.record_failure(claimed["whk_b"], NOW, "HTTP 500", None)
    await seeded.deliveries.record_failure(
        claimed["whk_c"], NOW, "HTTP 503", NOW + timedelta(seconds=5)
    )

    assert await seeded.deliveries.counts() == DeliveryCounts(pending=1, delivered=1, dead=1)
    # A leased delivery is still pending; the backlog agrees on what waits.
    assert (await seeded.deliveries.backlog(NOW))[0] == 1


async def test_a_revived_dead_delivery_counts_as_pending_again(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_a"))
    event_id = await commit(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    (claimed,) = (await seeded.deliveries.claim_due(NOW, LEASE, 10)).leased
    await seeded.deliveries.record_failure(claimed.delivery.delivery_id, NOW, "HTTP 500", None)
    assert await seeded.deliveries.counts() == DeliveryCounts(dead=1)

    await seeded.deliveries.retry_dead(event_id, NOW + timedelta(days=1))

    assert await seeded.deliveries.counts() == DeliveryCounts(pending=1)


async def test_purged_rows_are_no_longer_counted(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_a"))
    await commit(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    (claimed,) = (await seeded.deliveries.claim_due(NOW, LEASE, 10)).leased
    await seeded.deliveries.record_success(claimed.delivery.delivery_id, NOW)
    assert await seeded.deliveries.counts() == DeliveryCounts(delivered=1)

    await seeded.submissions.purge(NOW + timedelta(days=1), timedelta(0))

    assert await seeded.deliveries.counts() == DeliveryCounts()


async def test_usage_in_period_lists_each_workspace_with_its_count(store: Store) -> None:
    second = evolve(workspace("ws_2"), plan=Plan.FREE, monthly_limit=None, active=False)
    await store.workspaces.add(workspace("ws_1"))
    await store.workspaces.add(second)
    await store.workspaces.add(workspace("ws_3"))  # nothing counted: not listed
    await seed_forms(store)
    for n in range(3):
        await charge(store, n, "ws_1", PERIOD)
    await charge(store, 10, "ws_2", PERIOD)
    await charge(store, 20, "ws_3", "2025-12")  # another month

    assert await store.workspaces.usage_in_period(PERIOD) == [
        (workspace("ws_1"), 3),
        (second, 1),
    ]
    assert await store.workspaces.usage_in_period("2025-12") == [(workspace("ws_3"), 1)]
    assert await store.workspaces.usage_in_period("2026-02") == []


async def test_usage_in_period_leaves_out_what_used_no_quota(store: Store) -> None:
    await store.workspaces.add(workspace("ws_1"))
    await seed_forms(store)
    sub = submission(1, form_id="frm_ws_1", workspace_id="ws_1", status=SubmissionStatus.SPAM)
    await store.submissions.commit(plan(sub))  # spam uses no quota

    assert await store.workspaces.usage_in_period(PERIOD) == []


async def seed_forms(store: Store) -> None:
    for workspace_id in ("ws_1", "ws_2", "ws_3"):
        if await store.workspaces.get(workspace_id) is not None:
            await store.forms.add(
                form(f"frm_{workspace_id}", workspace_id, public_form_key=f"pk{workspace_id}")
            )


async def charge(store: Store, n: int, workspace_id: str, period: str) -> None:
    sub = submission(n, form_id=f"frm_{workspace_id}", workspace_id=workspace_id)
    await store.submissions.commit(plan(sub, charge=quota(100, workspace_id, period)))
