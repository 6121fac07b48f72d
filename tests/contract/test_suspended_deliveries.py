"""A suspended workspace sends nothing, in every store: its deliveries are neither
claimed nor parked, but held pending with no attempt counted, and go once it is active
again; another workspace's go meanwhile."""

from __future__ import annotations

from datetime import timedelta

import pytest
from attrs import evolve

from intake.domain.deliveries import DeliveryState
from intake.ports.store import Store
from tests.contract.builders import (
    T0,
    endpoint,
    form,
    plan,
    seed,
    submission,
    workspace,
)

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
LEASE = timedelta(minutes=2)
OTHER_WORKSPACE = "ws_other"
OTHER_FORM = "frm_other"


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form())
    await store.workspaces.add(workspace(OTHER_WORKSPACE, name="Other"))
    await store.forms.add(
        form(OTHER_FORM, workspace_id=OTHER_WORKSPACE, public_form_key="pk0other")
    )
    await store.destinations.add_endpoint(endpoint("whk_mine"))
    await store.destinations.add_endpoint(endpoint("whk_other", form_id=OTHER_FORM))
    await store.submissions.commit(plan(submission(1)))
    other = submission(2, form_id=OTHER_FORM, workspace_id=OTHER_WORKSPACE)
    await store.submissions.commit(plan(other))
    await store.deliveries.fan_out(NOW, 100)
    return store


async def _suspend(store: Store, active: bool) -> None:
    found = await store.workspaces.get(form().workspace_id)
    assert found is not None
    await store.workspaces.update(evolve(found, active=active))


async def test_a_suspended_workspaces_deliveries_are_held_and_go_once_it_is_active(
    seeded: Store,
) -> None:
    await _suspend(seeded, active=False)

    held = await seeded.deliveries.claim_due(NOW, LEASE, 10)

    assert [c.delivery.destination_id for c in held.leased] == ["whk_other"]
    assert held.parked == 0
    mine = [d for d in await seeded.deliveries.list_deliveries() if d.destination_id == "whk_mine"]
    assert [(d.state, d.attempts) for d in mine] == [(DeliveryState.PENDING, 0)]

    await _suspend(seeded, active=True)
    resumed = await seeded.deliveries.claim_due(NOW + LEASE * 2, LEASE, 10)

    assert "whk_mine" in [c.delivery.destination_id for c in resumed.leased]
