"""Uploads can be turned on only where there is a blob store to keep the files: the
owner-side service refuses, whichever entry point asks, and leaves the form as it was."""

from __future__ import annotations

import pytest
from attrs import evolve

from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.adapters.memory import FakeClock, InMemoryStore, SeededIdSource
from intake.domain.uploads import UploadPolicy
from intake.service.admin import Admin, AdminError, FormChanges, UploadChanges

pytestmark = pytest.mark.anyio

NO_STORE = "no blob store is configured"


def _admin(*, blobs: bool) -> Admin:
    clock = FakeClock()
    store = InMemoryBlobStore(clock=clock) if blobs else None
    return Admin(InMemoryStore(), clock, SeededIdSource(), blobs=store)


@pytest.mark.parametrize(
    "changes",
    [UploadChanges(enabled=True), UploadChanges(max_files=3)],
    ids=["--uploads", "a limit"],
)
async def test_a_form_cannot_be_created_taking_files_without_a_store(
    changes: UploadChanges,
) -> None:
    admin = _admin(blobs=False)
    workspace = await admin.create_workspace("Acme")

    with pytest.raises(AdminError, match=NO_STORE) as refusal:
        await admin.create_form(workspace.workspace_id, uploads=changes)

    assert "INTAKE_BLOB_URL" in str(refusal.value)
    assert await admin.forms(workspace.workspace_id) == []


@pytest.mark.parametrize(
    "changes",
    [UploadChanges(enabled=True), UploadChanges(allowed_types=("application/pdf",))],
    ids=["--uploads", "a type"],
)
async def test_uploads_cannot_be_turned_on_without_a_store(changes: UploadChanges) -> None:
    admin = _admin(blobs=False)
    workspace = await admin.create_workspace("Acme")
    form = await admin.create_form(workspace.workspace_id)

    with pytest.raises(AdminError, match=NO_STORE):
        await admin.update_form(form.form_id, FormChanges(name="Renamed", uploads=changes))

    assert await admin.form(form.form_id) == form


async def test_uploads_can_be_turned_off_without_a_store() -> None:
    store = InMemoryStore()
    admin = Admin(store, FakeClock(), SeededIdSource())
    workspace = await admin.create_workspace("Acme")
    form = await admin.create_form(workspace.workspace_id)
    # A form set to take files before a store was required for it.
    await store.forms.update(evolve(form, uploads=UploadPolicy()))

    renamed = await admin.update_form(form.form_id, FormChanges(name="Renamed"))
    off = await admin.update_form(form.form_id, FormChanges(uploads=UploadChanges(enabled=False)))

    assert renamed.name == "Renamed"
    assert off.uploads is None


async def test_with_a_store_uploads_are_turned_on_as_asked() -> None:
    admin = _admin(blobs=True)
    workspace = await admin.create_workspace("Acme")

    created = await admin.create_form(workspace.workspace_id, uploads=UploadChanges(enabled=True))
    plain = await admin.create_form(workspace.workspace_id)
    updated = await admin.update_form(
        plain.form_id, FormChanges(uploads=UploadChanges(max_files=2))
    )

    assert created.uploads == UploadPolicy()
    assert updated.uploads is not None
    assert updated.uploads.max_files == 2
