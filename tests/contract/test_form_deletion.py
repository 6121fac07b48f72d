"""A form's deletion, in every store: found by no lookup from the first moment, its
submissions erased as an owner's deletion erases each (one `submission.deleted` queued
for its webhook endpoints), and its row and destinations removed only once those events
are delivered; a deletion cut short is finished by `finish_form_deletions`."""

from __future__ import annotations

from datetime import timedelta

import pytest
from attrs import evolve

from intake.adapters.memory import FakeClock, SeededIdSource
from intake.domain.errors import ErrorCode
from intake.domain.model import EventType
from intake.ports.store import Store
from intake.ports.submissions import FormCheck, FormRefused, HoneypotHit
from intake.ports.workspaces import WorkspaceSetup
from intake.service.admin import NotFoundError, OwnerServices, owner_services
from tests.contract.builders import (
    FORM_ID,
    PERIOD,
    T0,
    WORKSPACE_ID,
    endpoint,
    form,
    plan,
    quota,
    recipient,
    seed,
    stored,
    submission,
    workspace,
)
from tests.contract.test_chat_destinations import chat

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
OTHER_FORM = "frm_2"


def services_of(store: Store) -> OwnerServices:
    return owner_services(store, FakeClock(NOW), SeededIdSource(7))


async def form_with_submissions(store: Store, count: int) -> None:
    await seed(store, form(), form(OTHER_FORM, WORKSPACE_ID, "pk_other"))
    for n in range(1, count + 1):
        await store.submissions.commit(plan(submission(n), charge=quota(1000)))
    await store.submissions.commit(plan(submission(count + 1, form_id=OTHER_FORM)))


async def deleted_events(store: Store) -> list[str]:
    return [
        row.event.submission_id
        for row in await store.submissions.outbox(1000)
        if row.event.event_type is EventType.DELETED
    ]


async def test_a_marked_form_is_found_by_no_lookup_and_is_disabled(store: Store) -> None:
    await seed(store, form(), form(OTHER_FORM, WORKSPACE_ID, "pk_other"))

    assert await store.forms.mark_deleted(FORM_ID, NOW)

    assert await store.forms.get(FORM_ID) is None
    assert [f.form_id for f in await store.forms.list()] == [OTHER_FORM]
    assert [f.form_id for f in await store.forms.list(WORKSPACE_ID)] == [OTHER_FORM]
    assert await store.forms.resolve_public_key(form().public_form_key) is None
    assert await store.forms.resolve_id(FORM_ID) is None
    usage = await store.workspaces.form_usage(WORKSPACE_ID, PERIOD)
    assert [u.form_id for u in usage] == [OTHER_FORM]
    counts = await store.workspaces.status_counts(WORKSPACE_ID, T0, NOW)
    assert [c.form_id for c in counts] == [OTHER_FORM]
    assert list(await store.forms.deleted("", 10)) == [FORM_ID]
    assert not await store.forms.mark_deleted(FORM_ID, NOW), "marked once only"


async def test_a_commit_to_a_marked_form_is_refused(store: Store) -> None:
    await seed(store)
    await store.forms.mark_deleted(FORM_ID, NOW)

    public = evolve(plan(submission(1)), check=FormCheck(FORM_ID, form().public_form_key))
    server = evolve(plan(submission(2)), check=FormCheck(FORM_ID))

    refused = await store.submissions.commit(public)
    assert isinstance(refused, FormRefused)
    assert refused.code is ErrorCode.FORM_NOT_FOUND, "its public key is gone"
    assert isinstance(await store.submissions.commit(server), FormRefused)
    assert await stored(store) == []


async def test_a_marked_form_is_removed_only_once_it_holds_no_submission(
    store: Store,
) -> None:
    await form_with_submissions(store, 1)
    await store.submissions.record_honeypot(HoneypotHit(FORM_ID, "2026-01-15", None))
    await store.forms.mark_deleted(FORM_ID, NOW)

    assert not await store.forms.remove_deleted(FORM_ID)
    assert not await store.forms.remove_deleted(OTHER_FORM), "a live form is never removed"

    services = services_of(store)
    first = await services.forms.finish_deletions()
    assert (first.erased, first.waiting) == (1, 1), "its submission.deleted not fanned out"
    await store.deliveries.fan_out(NOW, 100)  # to no one: the form has no destination
    second = await services.forms.finish_deletions()

    assert second.removed == 1
    assert list(await store.forms.deleted("", 10)) == []
    assert await stored(store) == []
    assert len(await stored(store, OTHER_FORM)) == 1


async def test_deleting_a_form_erases_its_submissions_and_waits_for_their_events(
    store: Store,
) -> None:
    await form_with_submissions(store, 3)
    await store.destinations.add_endpoint(endpoint())
    await store.destinations.add_recipient(recipient())
    services = services_of(store)

    done = await services.forms.delete(FORM_ID)

    assert (done.erased, done.removed, done.waiting) == (3, 0, 1)
    assert await stored(store) == []
    assert len(await deleted_events(store)) == 3
    with pytest.raises(NotFoundError):
        await services.forms.get(FORM_ID)
    with pytest.raises(NotFoundError):
        await services.forms.delete(FORM_ID)
    # Its endpoint stays until the events reach it.
    assert await store.forms.remove_deleted(FORM_ID) is False
    await store.deliveries.fan_out(NOW, 100)
    claim = await store.deliveries.claim_due(NOW, timedelta(minutes=1), 100)
    sent = {(d.event.event_type, d.delivery.kind.value) for d in claim.leased}
    assert (EventType.DELETED, "webhook") in sent
    assert (EventType.DELETED, "email") not in sent
    assert await store.forms.remove_deleted(FORM_ID) is False, "deliveries still pending"
    for leased in claim.leased:
        await store.deliveries.record_success(leased.delivery.delivery_id, NOW, 200)

    finished = await services.forms.finish_deletions()

    assert (finished.erased, finished.removed, finished.waiting) == (0, 1, 0)
    assert await store.destinations.list_endpoints(FORM_ID) == []
    assert await store.destinations.list_recipients(FORM_ID) == []
    assert list(await store.forms.deleted("", 10)) == []
    assert [f.form_id for f in await services.forms.all(WORKSPACE_ID)] == [OTHER_FORM]


async def test_a_deletion_cut_short_is_finished(store: Store) -> None:
    await form_with_submissions(store, 2)
    # As a crash after the mark: the submissions are still stored.
    await store.forms.mark_deleted(FORM_ID, NOW)

    services = services_of(store)
    finished = await services.forms.finish_deletions()
    await store.deliveries.fan_out(NOW, 100)
    again = await services.forms.finish_deletions()

    assert (finished.erased, again.removed) == (2, 1)
    assert await stored(store) == []


async def test_a_form_without_destinations_goes_once_its_events_are_fanned_out(
    store: Store,
) -> None:
    await form_with_submissions(store, 2)

    done = await services_of(store).forms.delete(FORM_ID)

    # Its submission.deleted events wait for their fan-out, which finds no destination.
    assert (done.erased, done.removed, done.waiting) == (2, 0, 1)
    await store.deliveries.fan_out(NOW, 100)
    assert await store.forms.remove_deleted(FORM_ID)
    assert list(await store.forms.deleted("", 10)) == []


async def test_a_duplicate_copies_the_settings_and_nothing_else(store: Store) -> None:
    await form_with_submissions(store, 1)
    await store.destinations.add_endpoint(endpoint())
    services = services_of(store)
    original = await services.forms.get(FORM_ID)

    copy = await services.forms.duplicate(FORM_ID)

    assert copy.form_id != FORM_ID
    assert copy.public_form_key != original.public_form_key
    assert copy.name == f"{original.name} (copy)"
    assert await services.forms.get(copy.form_id) == copy
    assert (copy.mode, copy.allowed_origins, copy.rules, copy.challenge) == (
        original.mode,
        original.allowed_origins,
        original.rules,
        original.challenge,
    )
    assert (copy.redirect_url, copy.spam_threshold, copy.messages) == (
        original.redirect_url,
        original.spam_threshold,
        original.messages,
    )
    assert await stored(store, copy.form_id) == []
    assert await store.destinations.list_endpoints(copy.form_id) == []


async def test_a_workspaces_setup_is_read_through_its_live_forms(store: Store) -> None:
    await store.workspaces.add(workspace())
    assert await store.workspaces.setup(WORKSPACE_ID) == WorkspaceSetup(False, False, False)
    await store.forms.add(form())
    assert await store.workspaces.setup(WORKSPACE_ID) == WorkspaceSetup(True, False, False)
    await store.submissions.commit(plan(submission(1)))
    assert await store.workspaces.setup(WORKSPACE_ID) == WorkspaceSetup(True, True, False)
    await store.destinations.add_recipient(recipient())
    assert await store.workspaces.setup(WORKSPACE_ID) == WorkspaceSetup(True, True, True)

    await store.forms.mark_deleted(FORM_ID, NOW)

    assert await store.workspaces.setup(WORKSPACE_ID) == WorkspaceSetup(False, False, False)
    assert await store.workspaces.setup("ws_other") == WorkspaceSetup(False, False, False)


@pytest.mark.parametrize("destination", ["webhook", "chat"])
async def test_a_webhook_or_a_chat_is_a_destination_of_the_setup(
    store: Store, destination: str
) -> None:
    await seed(store)
    if destination == "webhook":
        await store.destinations.add_endpoint(endpoint())
    else:
        await store.destinations.add_chat(chat())

    assert (await store.workspaces.setup(WORKSPACE_ID)).has_destination
