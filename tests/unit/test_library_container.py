"""A program composes the library's container itself and overrides its providers with
the fakes before it starts (`container.store.override(...)`): the submission goes
through the real pipeline into the given store at the given clock's time, and what was
given is neither opened nor closed by the container."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from intake.adapters.memory import FakeChallengeVerifier, FakeClock, InMemoryStore
from intake.config import Settings
from intake.entrypoints.library import Intake
from intake.library_runtime import LibraryContainer
from intake.ports.store_opening import StoreOpening

pytestmark = pytest.mark.anyio

MOMENT = datetime(2030, 5, 1, 9, 30, tzinfo=UTC)


async def test_overridden_providers_are_what_the_library_runs_on() -> None:
    store, clock = InMemoryStore(), FakeClock(MOMENT)
    container = LibraryContainer(settings=Settings(), opening=StoreOpening.PREPARE)
    container.store.override(store)
    container.clock.override(clock)
    container.challenge.override(FakeChallengeVerifier())

    async with Intake.running(container) as intake:
        assert intake.runtime.store is store
        workspace = await intake.workspaces.create("Acme")
        form = await intake.forms.create(workspace.workspace_id)
        result = await intake.submit(form.public_form_key, {"message": "hello"})
        assert result.submission_id is not None
        submission = await intake.submissions.get(result.submission_id)

    assert submission.created_at == MOMENT
    assert not store.closed  # given, so left open: whoever made it closes it
    assert (await store.submissions.get(result.submission_id)) is not None
    await store.close()
