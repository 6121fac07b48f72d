"""A delivery's record, in every store: each attempt kept with its outcome (and only
when the outcome changed the delivery), an owner's reads of deliveries (one submission's,
one endpoint's a page at a time), removal of an endpoint dropping what it had not
received, a test event queued to one endpoint or one mail recipient only, and the retry
of one delivery."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from intake.adapters.delivery_rules import delivery_id
from intake.adapters.postgres import PostgresStore
from intake.adapters.sqlite import SqliteStore
from intake.domain.deliveries import (
    AttemptOutcome,
    DeliveryAttempt,
    DeliveryPosition,
    DeliveryState,
    DestinationKind,
    mail_test_event,
    webhook_test_event,
)
from intake.domain.model import EventType
from intake.ports.store import Store
from intake.ports.submissions import PurgeCounts
from tests.contract.builders import (
    FORM_ID,
    T0,
    WORKSPACE_ID,
    endpoint,
    event_for,
    form,
    plan,
    recipient,
    seed,
    submission,
)

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
LEASE = timedelta(minutes=2)
WEBHOOK = DestinationKind.WEBHOOK
EMAIL = DestinationKind.EMAIL


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form())
    await store.destinations.add_endpoint(endpoint("whk_1"))
    return store


async def committed(store: Store, n: int) -> str:
    sub = submission(n)
    await store.submissions.commit(plan(sub))
    return event_for(sub).event_id


async def claimed_id(store: Store, at: timedelta = timedelta(0)) -> str:
    [claimed] = (await store.deliveries.claim_due(NOW + at, LEASE, 10)).leased
    return claimed.delivery.delivery_id


async def attempt_rows(store: Store) -> int:
    """How many attempts the store keeps in all, read under the port."""
    if isinstance(store, SqliteStore):

        def count(conn: sqlite3.Connection) -> int:
            return int(conn.execute("SELECT count(*) FROM delivery_attempts").fetchone()[0])

        return await store._worker.run(count)
    if isinstance(store, PostgresStore):
        row = await store._db.fetch_one("SELECT count(*) AS n FROM delivery_attempts")
        assert row is not None
        return int(row["n"])
    raise TypeError(f"no way to count the attempts of {store!r}")


# Attempts


async def test_each_attempt_is_kept_with_its_outcome_status_and_error(seeded: Store) -> None:
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    first = await claimed_id(seeded)
    retry_at = NOW + timedelta(seconds=5)
    await seeded.deliveries.record_failure(first, NOW, "HTTP 503", retry_at, 503)
    await seeded.deliveries.record_failure(
        await claimed_id(seeded, timedelta(seconds=5)), retry_at, "timed out", retry_at
    )
    done = retry_at + timedelta(seconds=1)
    await seeded.deliveries.record_success(first, done, 204)

    record = await seeded.deliveries.get_delivery(first)

    assert record is not None
    assert record.attempts == (
        DeliveryAttempt(first, NOW, AttemptOutcome.FAILED, 503, "HTTP 503"),
        DeliveryAttempt(first, retry_at, AttemptOutcome.FAILED, None, "timed out"),
        DeliveryAttempt(first, done, AttemptOutcome.DELIVERED, 204, None),
    )
    assert record.delivery.attempts == 3
    assert (record.event_type, record.form_id, record.workspace_id) == (
        EventType.CREATED,
        FORM_ID,
        WORKSPACE_ID,
    )


async def test_a_report_that_changes_nothing_keeps_no_attempt(seeded: Store) -> None:
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    first = await claimed_id(seeded)
    await seeded.deliveries.record_success(first, NOW, 200)

    # A second success, and a late failure of a relay whose lease ran out.
    await seeded.deliveries.record_success(first, NOW + LEASE, 200)
    await seeded.deliveries.record_failure(first, NOW + LEASE, "timed out", None)
    await seeded.deliveries.record_failure("dlv_nope", NOW, "x", None)

    record = await seeded.deliveries.get_delivery(first)
    assert record is not None
    assert [a.outcome for a in record.attempts] == [AttemptOutcome.DELIVERED]
    assert await attempt_rows(seeded) == 1


async def test_parking_by_the_claim_keeps_no_attempt(seeded: Store) -> None:
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    await seeded.destinations.disable_endpoint("whk_1", NOW)

    claim = await seeded.deliveries.claim_due(NOW, LEASE, 10)

    assert claim.parked == 1
    assert await attempt_rows(seeded) == 0


async def test_a_kept_error_is_cut_as_last_error_is(seeded: Store) -> None:
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    first = await claimed_id(seeded)

    await seeded.deliveries.record_failure(first, NOW, "x\x00" + "y" * 1_000, None, 500)

    record = await seeded.deliveries.get_delivery(first)
    assert record is not None
    [attempt] = record.attempts
    assert attempt.error == record.delivery.last_error
    assert attempt.error is not None
    assert len(attempt.error) == 500
    assert "\x00" not in attempt.error


async def test_a_purge_deletes_attempts_with_their_deliveries(seeded: Store) -> None:
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    await seeded.deliveries.record_success(await claimed_id(seeded), NOW, 200)
    week = timedelta(days=7)

    counts = await seeded.submissions.purge(NOW + 2 * week, week)

    assert counts == PurgeCounts(idempotency=0, outbox=1)
    assert await attempt_rows(seeded) == 0


# Removal of an endpoint


async def test_removing_an_endpoint_drops_what_it_had_not_received(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_2"))
    for n in (1, 2, 3):
        await committed(seeded, n)
    await seeded.deliveries.fan_out(NOW, 100)
    mine = [r.delivery.delivery_id for r in await seeded.deliveries.endpoint_deliveries("whk_1")]
    delivered, dead, _pending = sorted(mine)
    await seeded.deliveries.claim_due(NOW, LEASE, 100)
    await seeded.deliveries.record_success(delivered, NOW, 200)
    await seeded.deliveries.record_failure(dead, NOW, "HTTP 500", None, 500)

    assert await seeded.destinations.remove_endpoint("whk_1") is True

    left = await seeded.deliveries.list_deliveries(limit=100)
    assert {d.delivery_id for d in left if d.destination_id == "whk_1"} == {delivered}
    assert len([d for d in left if d.destination_id == "whk_2"]) == 3
    assert await attempt_rows(seeded) == 1  # the delivered one's
    assert (await seeded.deliveries.claim_due(NOW, LEASE, 100)).parked == 0


# Reads


async def test_a_submissions_deliveries_are_read_with_their_attempts(seeded: Store) -> None:
    await seeded.destinations.add_recipient(recipient())
    event_id = await committed(seeded, 1)
    await committed(seeded, 2)
    await seeded.deliveries.fan_out(NOW, 100)
    hook = delivery_id(event_id, WEBHOOK, "whk_1")
    await seeded.deliveries.claim_due(NOW, LEASE, 100)
    await seeded.deliveries.record_success(hook, NOW, 200)

    records = await seeded.deliveries.submission_deliveries(submission(1).submission_id)

    assert {(r.delivery.kind, r.delivery.destination_id) for r in records} == {
        (WEBHOOK, "whk_1"),
        (EMAIL, "rcp_1"),
    }
    assert all(r.delivery.event_id == event_id for r in records)
    [webhook] = [r for r in records if r.delivery.kind is WEBHOOK]
    assert [a.status_code for a in webhook.attempts] == [200]
    assert await seeded.deliveries.submission_deliveries("sub_none") == []


async def test_an_endpoints_deliveries_page_newest_first_by_state(seeded: Store) -> None:
    for n in (1, 2, 3, 4, 5):
        await committed(seeded, n)
        await seeded.deliveries.fan_out(NOW + timedelta(seconds=n), 100)
    everything = await seeded.deliveries.endpoint_deliveries("whk_1", limit=100)
    assert [r.delivery.created_at for r in everything] == [
        NOW + timedelta(seconds=n) for n in (5, 4, 3, 2, 1)
    ]
    newest = everything[0].delivery
    await seeded.deliveries.claim_due(NOW + timedelta(seconds=9), LEASE, 100)
    await seeded.deliveries.record_success(newest.delivery_id, NOW, 200)

    first = await seeded.deliveries.endpoint_deliveries("whk_1", limit=2)
    last = first[-1].delivery
    after = DeliveryPosition(last.created_at, last.delivery_id)
    rest = await seeded.deliveries.endpoint_deliveries("whk_1", after=after, limit=10)
    pending = await seeded.deliveries.endpoint_deliveries(
        "whk_1", state=DeliveryState.PENDING, limit=10
    )
    delivered = await seeded.deliveries.endpoint_deliveries(
        "whk_1", state=DeliveryState.DELIVERED, limit=10
    )

    assert [r.delivery.delivery_id for r in first + rest] == [
        r.delivery.delivery_id for r in everything
    ]
    assert len(rest) == 3
    assert [r.delivery.delivery_id for r in delivered] == [newest.delivery_id]
    assert len(pending) == 4
    assert await seeded.deliveries.endpoint_deliveries("whk_nope") == []


# A test event to one endpoint


async def test_a_test_event_goes_to_its_endpoint_only(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_2", include_flagged=True))
    await seeded.destinations.add_recipient(recipient())
    hook = endpoint("whk_1")
    event = webhook_test_event("evt_test1", hook, WORKSPACE_ID, NOW)

    queued = await seeded.deliveries.queue_direct(event, WEBHOOK, "whk_1", NOW)
    fanned = await seeded.deliveries.fan_out(NOW, 100)
    claim = await seeded.deliveries.claim_due(NOW, LEASE, 10)

    assert fanned == 0  # published already: no fan-out takes it
    assert (queued.destination_id, queued.state, queued.next_attempt_at) == (
        "whk_1",
        DeliveryState.PENDING,
        NOW,
    )
    [claimed] = claim.leased
    assert claimed.delivery.delivery_id == queued.delivery_id
    assert claimed.endpoint == hook
    assert claimed.event.event_type is EventType.WEBHOOK_TEST
    assert claimed.event.payload == event.payload
    record = await seeded.deliveries.get_delivery(queued.delivery_id)
    assert record is not None
    assert (record.event_type, record.submission_id, record.workspace_id) == (
        EventType.WEBHOOK_TEST,
        "",
        WORKSPACE_ID,
    )


async def test_a_test_mail_goes_to_its_recipient_only(seeded: Store) -> None:
    mailed = recipient()
    await seeded.destinations.add_recipient(mailed)
    await seeded.destinations.add_recipient(recipient("rcp_2"))
    event = mail_test_event("evt_mail1", mailed, WORKSPACE_ID, NOW)

    queued = await seeded.deliveries.queue_direct(event, EMAIL, mailed.recipient_id, NOW)
    fanned = await seeded.deliveries.fan_out(NOW, 100)
    claim = await seeded.deliveries.claim_due(NOW, LEASE, 10)

    assert fanned == 0  # published already: no fan-out takes it
    assert (queued.kind, queued.destination_id, queued.state, queued.next_attempt_at) == (
        EMAIL,
        mailed.recipient_id,
        DeliveryState.PENDING,
        NOW,
    )
    assert queued.delivery_id == delivery_id("evt_mail1", EMAIL, mailed.recipient_id)
    [claimed] = claim.leased
    assert claimed.delivery.delivery_id == queued.delivery_id
    assert (claimed.recipient, claimed.endpoint) == (mailed, None)
    assert claimed.event.event_type is EventType.MAIL_TEST
    assert claimed.event.payload == event.payload
    record = await seeded.deliveries.get_delivery(queued.delivery_id)
    assert record is not None
    assert (record.event_type, record.submission_id, record.delivery.kind) == (
        EventType.MAIL_TEST,
        "",
        EMAIL,
    )
    assert await seeded.deliveries.endpoint_deliveries("whk_1") == []


# Retrying one delivery


async def test_retrying_a_dead_delivery_makes_it_due_now_counted_afresh(seeded: Store) -> None:
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    first = await claimed_id(seeded)
    await seeded.deliveries.record_failure(first, NOW, "HTTP 500", None, 500)
    later = NOW + timedelta(hours=3)

    retried = await seeded.deliveries.retry_delivery(first, later)

    assert retried is not None
    assert (retried.state, retried.attempts, retried.next_attempt_at, retried.dead_at) == (
        DeliveryState.PENDING,
        0,
        later,
        None,
    )
    [claimed] = (await seeded.deliveries.claim_due(later, LEASE, 10)).leased
    assert claimed.delivery.delivery_id == first


async def test_retrying_a_pending_delivery_makes_it_due_now(seeded: Store) -> None:
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    first = await claimed_id(seeded)
    await seeded.deliveries.record_failure(first, NOW, "HTTP 503", NOW + timedelta(hours=2))

    retried = await seeded.deliveries.retry_delivery(first, NOW + timedelta(minutes=1))

    assert retried is not None
    assert (retried.state, retried.attempts, retried.next_attempt_at) == (
        DeliveryState.PENDING,
        1,
        NOW + timedelta(minutes=1),
    )


async def test_retrying_a_delivered_or_unknown_delivery_changes_nothing(seeded: Store) -> None:
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    first = await claimed_id(seeded)
    await seeded.deliveries.record_success(first, NOW, 200)
    before = await seeded.deliveries.get_delivery(first)
    assert before is not None

    retried = await seeded.deliveries.retry_delivery(first, NOW + LEASE)

    assert retried == before.delivery
    assert await seeded.deliveries.get_delivery(first) == before
    assert await seeded.deliveries.retry_delivery("dlv_nope", NOW) is None


async def test_a_recipient_is_read_by_its_id(seeded: Store) -> None:
    await seeded.destinations.add_recipient(recipient())

    assert await seeded.destinations.get_recipient("rcp_1") == recipient()
    assert await seeded.destinations.get_recipient("rcp_nope") is None
