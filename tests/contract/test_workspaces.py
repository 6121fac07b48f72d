from __future__ import annotations

import pytest
from attrs import evolve

from intake.domain.model import Plan
from intake.ports.store import Store
from tests.contract.builders import PERIOD, WORKSPACE_ID, workspace

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio


async def test_an_added_workspace_reads_back_with_every_attribute(store: Store) -> None:
    await store.workspaces.add(workspace())

    assert await store.workspaces.get(WORKSPACE_ID) == workspace()


async def test_a_workspace_without_optional_attributes_reads_back(store: Store) -> None:
    bare = evolve(workspace(), monthly_limit=None, created_at=None, plan=Plan.FREE)
    await store.workspaces.add(bare)

    assert await store.workspaces.get(WORKSPACE_ID) == bare


async def test_an_unknown_workspace_is_none(store: Store) -> None:
    assert await store.workspaces.get("ws_missing") is None


async def test_an_update_saves_every_attribute(store: Store) -> None:
    await store.workspaces.add(workspace())
    changed = evolve(
        workspace(), name="Acme Ltd", plan=Plan.BUSINESS, monthly_limit=None, active=False
    )

    await store.workspaces.update(changed)

    assert await store.workspaces.get(WORKSPACE_ID) == changed


async def test_updating_an_unknown_workspace_stores_nothing(store: Store) -> None:
    await store.workspaces.update(workspace())

    assert await store.workspaces.get(WORKSPACE_ID) is None


async def test_workspaces_are_listed_by_id(store: Store) -> None:
    for workspace_id in ("ws_c", "ws_a", "ws_b"):
        await store.workspaces.add(workspace(workspace_id))

    listed = await store.workspaces.list()

    assert [w.workspace_id for w in listed] == ["ws_a", "ws_b", "ws_c"]
    assert listed[0] == workspace("ws_a")


async def test_no_workspaces_list_as_empty(store: Store) -> None:
    assert await store.workspaces.list() == []


async def test_usage_is_zero_before_any_submission(store: Store) -> None:
    await store.workspaces.add(workspace())

    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0
    assert await store.workspaces.usage("ws_missing", PERIOD) == 0
