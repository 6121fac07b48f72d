"""Uploads can be turned on only where there is a blob store to keep the files: the
owner-side service refuses, whichever entry point asks, and leaves the form as it was."""

from __future__ import annotations

import pytest
from attrs import evolve

from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.adapters.memory import FakeClock, InMemoryStore, SeededIdSource
from intake.domain.uploads import UploadPolicy
from intake.service.admin import (
    AdminError,
    FormChanges,
    OwnerServices,
    UploadChanges,
    owner_services,
)

pytestmark = pytest.mark.anyio

NO_STORE = "no blob store is configured"


def _services(*, blobs: bool) -> OwnerServices:
    clock = FakeClock()
    store = InMemoryBlobStore(clock=clock) if blobs else None
    return owner_services(InMemoryStore(), clock, SeededIdSource(), blobs=store)


@pytest.mark.parametrize(
    "changes",
    [UploadChanges(enabled=True), UploadChanges(max_files=3)],
    ids=["--uploads", "a limit"],
)
async def test_a_form_cannot_be_created_taking_files_without_a_store(
    changes: UploadChanges,
) -> None:
    services = _services(blobs=False)
    workspace = await services.workspaces.create("Acme")

    with pytest.raises(AdminError, match=NO_STORE) as refusal:
        await services.forms.create(workspace.workspace_id, uploads=changes)

    assert "INTAKE_BLOB_URL" in str(refusal.value)
    assert await services.forms.all(workspace.workspace_id) == []


@pytest.mark.parametrize(
    "changes",
    [UploadChanges(enabled=True), UploadChanges(allowed_types=("application/pdf",))],
    ids=["--uploads", "a type"],
)
async def test_uploads_cannot_be_turned_on_without_a_store(changes: UploadChanges) -> None:
    services = _services(blobs=False)
    workspace = await services.workspaces.create("Acme")
    form = await services.forms.create(workspace.workspace_id)

    with pytest.raises(AdminError, match=NO_STORE):
        await services.forms.update(form.form_id, FormChanges(name="Renamed", uploads=changes))

    assert await services.forms.get(form.form_id) == form


async def test_uploads_can_be_turned_off_without_a_store() -> None:
    store = InMemoryStore()
    services = owner_services(store, FakeClock(), SeededIdSource())
    workspace = await services.workspaces.create("Acme")
    form = await services.forms.create(workspace.workspace_id)
    # A form set to take files before a store was required for it.
    await store.forms.update(evolve(form, uploads=UploadPolicy()))

    renamed = await services.forms.update(form.form_id, FormChanges(name="Renamed"))
    off = await services.forms.update(
        form.form_id, FormChanges(uploads=UploadChanges(enabled=False))
    )

    assert renamed.name == "Renamed"
    assert off.uploads is None


async def test_with_a_store_uploads_are_turned_on_as_asked() -> None:
    services = _services(blobs=True)
    workspace = await services.workspaces.create("Acme")

    created = await services.forms.create(
        workspace.workspace_id, uploads=UploadChanges(enabled=True)
    )
    plain = await services.forms.create(workspace.workspace_id)
    updated = await services.forms.update(
        plain.form_id, FormChanges(uploads=UploadChanges(max_files=2))
    )

    assert created.uploads == UploadPolicy()
    assert updated.uploads is not None
    assert updated.uploads.max_files == 2
