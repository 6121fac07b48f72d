from __future__ import annotations

import pytest
from attrs import evolve

from intake.domain.model import DEFAULT_SPAM_THRESHOLD, FormMode
from intake.ports.forms import FormContext
from intake.ports.store import Store
from tests.contract.builders import FORM_ID, WORKSPACE_ID, form, workspace

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio


async def test_an_added_form_reads_back_with_every_attribute(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.forms.add(form())

    assert await store.forms.get(FORM_ID) == form()


async def test_a_form_with_only_defaults_reads_back(store: Store) -> None:
    await store.workspaces.add(workspace())
    bare = evolve(
        form(),
        name="",
        mode=FormMode.PUBLIC,
        enabled=True,
        allowed_origins=(),
        rules=(),
        spam_threshold=DEFAULT_SPAM_THRESHOLD,
        challenge=None,
        redirect_url=None,
        created_at=None,
    )
    await store.forms.add(bare)

    assert await store.forms.get(FORM_ID) == bare


async def test_an_unknown_form_is_none(store: Store) -> None:
    assert await store.forms.get("frm_missing") is None


async def test_an_update_saves_every_attribute(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.forms.add(form())
    changed = evolve(
        form(),
        name="Support",
        mode=FormMode.PUBLIC,
        enabled=True,
        allowed_origins=("https://other.example",),
        rules=(),
        spam_threshold=7.0,
        challenge=None,
        redirect_url=None,
    )

    await store.forms.update(changed)

    assert await store.forms.get(FORM_ID) == changed


async def test_updating_an_unknown_form_stores_nothing(store: Store) -> None:
    await store.workspaces.add(workspace())

    await store.forms.update(form())

    assert await store.forms.get(FORM_ID) is None
    assert await store.forms.resolve_public_key(form().public_form_key) is None


async def test_forms_are_listed_by_id_for_every_workspace_or_for_one(store: Store) -> None:
    await store.workspaces.add(workspace("ws_a"))
    await store.workspaces.add(workspace("ws_b"))
    await store.forms.add(form("frm_3", "ws_a", "pk3"))
    await store.forms.add(form("frm_1", "ws_b", "pk1"))
    await store.forms.add(form("frm_2", "ws_a", "pk2"))

    everything = await store.forms.list()
    of_a = await store.forms.list("ws_a")

    assert [f.form_id for f in everything] == ["frm_1", "frm_2", "frm_3"]
    assert [f.form_id for f in of_a] == ["frm_2", "frm_3"]
    assert of_a[0] == form("frm_2", "ws_a", "pk2")
    assert await store.forms.list("ws_missing") == []


async def test_a_public_key_resolves_to_the_form_and_its_workspace(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.forms.add(form())

    context = await store.forms.resolve_public_key(form().public_form_key)

    assert context == FormContext(form(), workspace())


async def test_a_form_id_resolves_to_the_form_and_its_workspace(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.forms.add(form())

    assert await store.forms.resolve_id(FORM_ID) == FormContext(form(), workspace())


async def test_unknown_keys_and_ids_resolve_to_none(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.forms.add(form())

    assert await store.forms.resolve_public_key("pk-missing") is None
    assert await store.forms.resolve_public_key(FORM_ID) is None  # an id is not a key
    assert await store.forms.resolve_id("frm_missing") is None
    assert await store.forms.resolve_id(form().public_form_key) is None


async def test_a_rotated_public_key_no_longer_resolves_while_the_new_one_does(
    store: Store,
) -> None:
    await store.workspaces.add(workspace())
    await store.forms.add(form())
    rotated = evolve(form(), public_form_key="pk0rotated")

    await store.forms.update(rotated)

    assert await store.forms.resolve_public_key(form().public_form_key) is None
    assert await store.forms.resolve_public_key("pk0rotated") == FormContext(rotated, workspace())


async def test_a_resolved_form_carries_its_workspace_as_it_is_now(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.forms.add(form())
    suspended = evolve(workspace(), active=False)

    await store.workspaces.update(suspended)

    context = await store.forms.resolve_id(FORM_ID)
    assert context is not None
    assert context.workspace == suspended
    assert context.form.workspace_id == WORKSPACE_ID
