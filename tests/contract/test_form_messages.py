"""What a form mails and keeps, in every store: the fan-out leaves out the recipients of
a form that mails none, queues a confirmation to the submitter within one per address
per hour and the form's hourly ceiling (exact, even with relays fanning out at once on
PostgreSQL), and queues forward-only submissions, which are erased, metadata kept, once
every delivery is done."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from attrs import evolve

from intake.adapters.memory import FakeClock
from intake.adapters.postgres import PostgresStore
from intake.domain.deliveries import DeliveryState, DestinationKind
from intake.domain.form_messages import FormMessages, is_autoresponse
from intake.domain.model import Form, SubmissionStatus
from intake.domain.triage import deletion_event, release_event
from intake.ports.store import Store
from intake.ports.submissions import PurgeCounts
from intake.ports.triage import Erasure, Release
from intake.service.purge import Purge, Retention
from tests.contract.builders import (
    PERIOD,
    T0,
    endpoint,
    form,
    plan,
    quota,
    recipient,
    seed,
    stored,
    submission,
)
from tests.contract.conftest import PostgresBackend

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
LEASE = timedelta(minutes=2)
VICTIM = "victim@example.com"
WEEK = timedelta(days=7)
MICROSECOND = timedelta(microseconds=1)


def with_messages(**settings: object) -> Form:
    return evolve(form(), messages=FormMessages(**settings))  # type: ignore[arg-type]


async def commit(
    store: Store,
    n: int,
    *,
    email: str,
    status: SubmissionStatus = SubmissionStatus.ACCEPTED,
    files: int = 0,
) -> str:
    sub = evolve(
        submission(n, status=status, files=files),
        data={"email": email, "message": f"hello {n}"},
        reply_to=email,
        spam_reasons=("links:1", f"token:hello {n}"),  # may quote its words
    )
    await store.submissions.commit(plan(sub, charge=quota(1000)))
    return sub.submission_id


async def confirmations(store: Store) -> list[str]:
    """The confirmation deliveries leased now, by event."""
    claim = await store.deliveries.claim_due(NOW + timedelta(days=30), LEASE, 1000)
    return sorted(
        item.event.event_id
        for item in claim.leased
        if item.delivery.kind is DestinationKind.EMAIL
        and is_autoresponse(item.delivery.destination_id)
    )


async def sent_confirmations(store: Store) -> list[str]:
    """Every confirmation delivery, whatever its state."""
    deliveries = await store.deliveries.list_deliveries(limit=1000)
    return [d.delivery_id for d in deliveries if is_autoresponse(d.destination_id)]


async def fan_out_all(store: Store, now: object = NOW, limit: int = 100) -> None:
    while await store.deliveries.fan_out(now, 1000, limit) == 1000:  # type: ignore[arg-type]
        pass


async def test_a_form_that_mails_no_notification_fans_out_to_its_webhooks_only(
    store: Store,
) -> None:
    await seed(store, with_messages(mail_notifications=False))
    await store.destinations.add_endpoint(endpoint())
    await store.destinations.add_recipient(recipient())
    await commit(store, 1, email="ada@example.com")

    await fan_out_all(store)

    deliveries = await store.deliveries.list_deliveries()
    assert [d.kind for d in deliveries] == [DestinationKind.WEBHOOK]


async def test_a_hundred_submissions_naming_one_address_earn_it_one_confirmation_an_hour(
    store: Store,
) -> None:
    await seed(store, with_messages(autoresponse=True))
    for n in range(1, 101):
        await commit(store, n, email=VICTIM)

    await fan_out_all(store)
    assert len(await confirmations(store)) == 1

    # Within the hour: still one. Past it: one more.
    await commit(store, 101, email=VICTIM.upper())
    await fan_out_all(store, NOW + timedelta(minutes=59))
    await commit(store, 102, email=VICTIM)
    await fan_out_all(store, NOW + timedelta(minutes=61))
    deliveries = await store.deliveries.list_deliveries(limit=1000)
    sent = [d for d in deliveries if is_autoresponse(d.destination_id)]
    assert len(sent) == 2


async def test_tags_on_one_address_earn_it_no_more_confirmations(store: Store) -> None:
    await seed(store, with_messages(autoresponse=True))
    await commit(store, 1, email="victim@example.com")
    await commit(store, 2, email="victim+1@example.com")
    await commit(store, 3, email="Victim+Second.Try@Example.com")
    # Another mailbox, and one whose local part is only a tag: each its own.
    await commit(store, 4, email="victim2@example.com")
    await commit(store, 5, email="+victim@example.com")

    await fan_out_all(store)

    assert len(await sent_confirmations(store)) == 3


async def test_gmails_spellings_of_one_inbox_earn_it_one_confirmation(store: Store) -> None:
    await seed(store, with_messages(autoresponse=True))
    spellings = [
        "victim@gmail.com",
        "v.i.c.t.i.m@gmail.com",
        "Vic.Tim@GoogleMail.com",
        "victim+1@googlemail.com",
        "v.ictim+x@gmail.com",
        "vi.ctim@gmail.com",
    ]
    for n, address in enumerate(spellings, start=1):
        await commit(store, n, email=address)
    # Dots count elsewhere: two mailboxes at another provider.
    await commit(store, 7, email="vic.tim@example.com")
    await commit(store, 8, email="victim@example.com")

    await fan_out_all(store)

    assert len(await sent_confirmations(store)) == 3


async def test_purge_deletes_the_autoresponders_records_after_two_hours_not_before(
    store: Store,
) -> None:
    await seed(store, with_messages(autoresponse=True))
    await commit(store, 1, email=VICTIM)
    await commit(store, 2, email="other@example.com")
    await fan_out_all(store)  # two confirmations, two records queued at NOW

    assert (await store.submissions.purge(NOW + timedelta(hours=2) - MICROSECOND, WEEK)) == (
        PurgeCounts(idempotency=0, outbox=0, autoresponses=0)
    )
    # Kept, they still hold the address to its one confirmation an hour.
    await commit(store, 3, email=VICTIM)
    await fan_out_all(store, NOW + timedelta(minutes=59))
    assert len(await sent_confirmations(store)) == 2

    counts = await store.submissions.purge(NOW + timedelta(hours=2), WEEK)
    assert counts.autoresponses == 2
    assert (await store.submissions.purge(NOW + timedelta(hours=3), WEEK)).autoresponses == 0
    # The confirmations themselves are deliveries, not records: they stay.
    assert len(await sent_confirmations(store)) == 2


async def test_spam_unverified_and_a_form_without_the_autoresponder_earn_none(
    store: Store,
) -> None:
    await seed(store, with_messages(autoresponse=True), form("frm_2", public_form_key="pk2"))
    await commit(store, 1, email="a@example.com", status=SubmissionStatus.SPAM)
    await commit(store, 2, email="b@example.com", status=SubmissionStatus.UNVERIFIED)
    other = evolve(submission(3, form_id="frm_2"), data={"email": "c@example.com"})
    await store.submissions.commit(plan(other))
    # An address that is not one: nothing to answer.
    await commit(store, 4, email="not an address")

    await fan_out_all(store)

    assert await confirmations(store) == []


async def test_a_released_spam_submission_earns_no_confirmation(store: Store) -> None:
    # The owner answers a submission they released, not a machine, days later.
    await seed(store, with_messages(autoresponse=True))
    spam = evolve(
        submission(1, status=SubmissionStatus.SPAM), data={"email": VICTIM}, reply_to=VICTIM
    )
    await store.submissions.commit(plan(spam))
    await fan_out_all(store)
    event = release_event("evt_release1", spam, None, NOW + timedelta(days=2))
    released = await store.submissions.release(Release(spam.submission_id, event, "2026-01"))
    assert released is not None

    await fan_out_all(store, NOW + timedelta(days=2))

    assert await confirmations(store) == []


async def test_the_form_sends_no_more_than_its_hourly_limit(store: Store) -> None:
    await seed(store, with_messages(autoresponse=True, autoresponse_hourly_limit=5))
    for n in range(1, 21):
        await commit(store, n, email=f"person{n}@example.com")

    await fan_out_all(store)

    assert len(await confirmations(store)) == 5


async def test_the_default_limit_applies_to_a_form_without_its_own(store: Store) -> None:
    await seed(store, with_messages(autoresponse=True))
    for n in range(1, 6):
        await commit(store, n, email=f"person{n}@example.com")

    await fan_out_all(store, limit=3)

    assert len(await confirmations(store)) == 3


async def test_a_confirmation_is_claimed_and_not_parked(store: Store) -> None:
    await seed(store, with_messages(autoresponse=True))
    await commit(store, 1, email=VICTIM)
    await fan_out_all(store)

    claim = await store.deliveries.claim_due(NOW, LEASE, 10)

    assert claim.parked == 0
    (item,) = claim.leased
    assert is_autoresponse(item.delivery.destination_id)
    assert item.recipient is None
    assert item.event.payload["reply_to"] == VICTIM


async def test_forward_only_erases_data_and_files_once_every_delivery_is_done(
    store: Store,
) -> None:
    await seed(store, with_messages(forward_only=True))
    await store.destinations.add_endpoint(endpoint())
    await store.destinations.add_endpoint(endpoint("whk_2"))
    submission_id = await commit(store, 1, email=VICTIM, files=2)
    used_before = await store.workspaces.usage(form().workspace_id, PERIOD)
    await fan_out_all(store)

    # Nothing is erased while a delivery is pending.
    assert (await store.submissions.erase_forwarded(10)).submission_ids == ()
    first, second = (await store.deliveries.claim_due(NOW, LEASE, 10)).leased
    await store.deliveries.record_success(first.delivery.delivery_id, NOW)
    assert (await store.submissions.erase_forwarded(10)).submission_ids == ()
    # Dead counts as done.
    await store.deliveries.record_failure(second.delivery.delivery_id, NOW, "gone", None)

    erased = await store.submissions.erase_forwarded(10)

    assert erased.submission_ids == (submission_id,)
    assert len(erased.file_keys) == 2
    (kept,) = await stored(store)
    assert kept.submission_id == submission_id
    assert kept.status is SubmissionStatus.ACCEPTED
    assert (kept.data, kept.files, kept.subject, kept.reply_to) == ({}, (), None, None)
    assert kept.spam_reasons == ()
    assert kept.created_at == submission(1).created_at
    assert await store.workspaces.usage(form().workspace_id, PERIOD) == used_before
    (row,) = await store.submissions.outbox()
    assert row.event.payload["data"] == {}
    assert row.event.payload["reply_to"] is None
    assert row.event.payload["files"] == []
    # Once: the queue is empty.
    assert (await store.submissions.erase_forwarded(10)).submission_ids == ()


async def test_a_forward_only_submission_erased_before_its_fan_out_stops_no_fan_out(
    store: Store,
) -> None:
    await seed(store, with_messages(forward_only=True, autoresponse=True))
    await store.destinations.add_endpoint(endpoint())
    submission_id = await commit(store, 1, email=VICTIM)
    erased = await store.submissions.erase(
        Erasure(submission_id, deletion_event("evt_deleted", submission(1), NOW))
    )
    assert erased is not None

    await fan_out_all(store)

    assert await store.deliveries.backlog(NOW) == (2, NOW)
    assert await confirmations(store) == []
    assert (await store.submissions.erase_forwarded(10)).submission_ids == ()


async def test_a_form_that_is_not_forward_only_keeps_everything(store: Store) -> None:
    await seed(store)
    await store.destinations.add_endpoint(endpoint())
    await commit(store, 1, email=VICTIM)
    await fan_out_all(store)
    (item,) = (await store.deliveries.claim_due(NOW, LEASE, 10)).leased
    await store.deliveries.record_success(item.delivery.delivery_id, NOW)

    assert (await store.submissions.erase_forwarded(10)).submission_ids == ()
    (kept,) = await stored(store)
    assert kept.data == {"email": VICTIM, "message": "hello 1"}


# PostgreSQL: relays fanning out at once


@pytest.fixture
def pg_backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def relays(pg_backend: PostgresBackend) -> AsyncIterator[list[PostgresStore]]:
    opened = [await pg_backend.open_postgres() for _ in range(2)]
    try:
        yield opened
    finally:
        for each in opened:
            await each.close()


@pytest.mark.services
async def test_the_ceiling_holds_with_two_relays_fanning_out_at_once(
    relays: list[PostgresStore],
) -> None:
    first, second = relays
    await seed(first, with_messages(autoresponse=True, autoresponse_hourly_limit=7))
    for n in range(1, 41):
        await commit(first, n, email=f"person{n % 30}@example.com")

    async def relay(store: PostgresStore) -> None:
        # One row per fan-out: the two interleave row by row.
        taken = 1
        while taken == 1:
            taken = await store.deliveries.fan_out(NOW, 1)

    await asyncio.gather(relay(first), relay(second), relay(first), relay(second))

    deliveries = await first.deliveries.list_deliveries(limit=1000)
    sent = [d for d in deliveries if is_autoresponse(d.destination_id)]
    assert len(sent) == 7
    assert {d.state for d in sent} == {DeliveryState.PENDING}


async def test_purge_erases_what_a_relay_that_stopped_after_delivering_left(
    store: Store,
) -> None:
    await seed(store, with_messages(forward_only=True))
    await store.destinations.add_endpoint(endpoint())
    await commit(store, 1, email=VICTIM)
    await fan_out_all(store)
    (item,) = (await store.deliveries.claim_due(NOW, LEASE, 10)).leased
    # The relay recorded the delivery, then stopped before its erasure.
    await store.deliveries.record_success(item.delivery.delivery_id, NOW)

    purged = await Purge(store.submissions, store.forms, None, FakeClock(NOW)).run(
        Retention(
            outbox=timedelta(days=7),
            flagged=timedelta(0),
            upload_grace=timedelta(hours=1),
            client_ip_full=timedelta(hours=24),
        )
    )

    assert purged.forwarded == 1
    (kept,) = await stored(store)
    assert kept.data == {}


async def test_an_erasure_forgets_the_autoresponders_records_of_its_address_only(
    store: Store,
) -> None:
    other_workspace_form = form("frm_2", workspace_id="ws_2", public_form_key="pk2")
    elsewhere = evolve(other_workspace_form, messages=FormMessages(autoresponse=True))
    await seed(store, with_messages(autoresponse=True), elsewhere)
    await commit(store, 1, email=VICTIM)
    await commit(store, 2, email="other@example.com")
    theirs = evolve(
        submission(3, form_id="frm_2", workspace_id="ws_2"),
        data={"email": VICTIM},
        reply_to=VICTIM,
    )
    await store.submissions.commit(plan(theirs, charge=quota(1000, workspace_id="ws_2")))
    await fan_out_all(store)  # three confirmations, three records

    forgotten = await store.submissions.forget_autoresponses("ws_1", " Victim+tag@Example.com ")

    assert forgotten == 1
    assert await store.submissions.forget_autoresponses("ws_1", VICTIM) == 0
    # The other address and the other workspace's record still count their hour...
    await commit(store, 4, email="other@example.com")
    await store.submissions.commit(
        plan(
            evolve(theirs, submission_id=submission(5).submission_id),
            charge=quota(1000, workspace_id="ws_2"),
        )
    )
    # ...and the forgotten address is answered again, as one never seen.
    await commit(store, 6, email=VICTIM)
    await fan_out_all(store, NOW + timedelta(minutes=10))
    assert len(await sent_confirmations(store)) == 4
    assert (await store.submissions.purge(NOW + timedelta(hours=3), WEEK)).autoresponses == 3
