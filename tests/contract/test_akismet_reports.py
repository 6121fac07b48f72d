"""Reports of triage to Akismet, in every store: queued in the triage's own transaction,
fanned out to the one `akismet` destination and to no owner's, claimed and retried as
any delivery, and dropped with an erasure."""

from __future__ import annotations

from datetime import timedelta

import pytest

from intake.adapters.delivery_rules import delivery_id
from intake.domain.deliveries import DeliveryState, DestinationKind
from intake.domain.model import EventType, OutboxEvent, Submission, SubmissionStatus
from intake.domain.spam.model import Label
from intake.domain.spam.opinion import AKISMET_DESTINATION, report_event
from intake.domain.triage import deletion_event, release_event
from intake.ports.store import Store
from intake.ports.triage import Erasure, Release
from tests.contract.builders import T0, endpoint, plan, recipient, seed, submission

pytestmark = pytest.mark.anyio

AT = T0 + timedelta(days=1)
LEASE = timedelta(minutes=2)
AKISMET = DestinationKind.AKISMET


def report_of(sub: Submission, label: Label, n: int = 1) -> OutboxEvent:
    return report_event(f"evt_report{n}", sub, label, AT)


def release_of(sub: Submission, report: OutboxEvent | None, n: int = 1) -> Release:
    return Release(
        sub.submission_id, release_event(f"evt_rel{n}", sub, None, AT), "2026-01", report=report
    )


async def events(store: Store, sub: Submission) -> list[OutboxEvent]:
    rows = await store.submissions.outbox(1000)
    return [r.event for r in rows if r.event.submission_id == sub.submission_id]


async def reports(store: Store, sub: Submission) -> list[OutboxEvent]:
    return [e for e in await events(store, sub) if e.event_type is EventType.AKISMET_REPORT]


async def stored(store: Store, status: SubmissionStatus = SubmissionStatus.ACCEPTED) -> Submission:
    await seed(store)
    # Owners' destinations that would take any event they may: none may get a report.
    await store.destinations.add_endpoint(endpoint("whk_all", include_flagged=True))
    await store.destinations.add_recipient(recipient("rcp_1"))
    sub = submission(1, status=status)
    await store.submissions.commit(plan(sub))
    # The submission's own event delivered first, so only a report is left to send.
    await store.deliveries.fan_out(AT, 100)
    for claimed in (await store.deliveries.claim_due(AT, LEASE, 10)).leased:
        await store.deliveries.record_success(claimed.delivery.delivery_id, AT)
    return sub


async def test_marking_spam_queues_its_report_with_it(store: Store) -> None:
    sub = await stored(store)
    report = report_of(sub, Label.SPAM)

    marked = await store.submissions.mark_spam(sub.submission_id, report=report)

    assert marked is not None
    assert marked.status is SubmissionStatus.SPAM
    [queued] = await reports(store, sub)
    assert queued.event_id == report.event_id
    assert queued.payload == report.payload
    assert queued.payload["label"] == "spam"


async def test_a_report_goes_to_akismet_alone_and_is_claimed_without_a_destination(
    store: Store,
) -> None:
    sub = await stored(store)
    report = report_of(sub, Label.SPAM)
    await store.submissions.mark_spam(sub.submission_id, report=report)

    assert await store.deliveries.fan_out(AT, 100) == 1
    [claimed] = (await store.deliveries.claim_due(AT, LEASE, 10)).leased

    assert claimed.delivery.delivery_id == delivery_id(report.event_id, AKISMET, "akismet")
    assert claimed.delivery.kind is AKISMET
    assert claimed.delivery.destination_id == AKISMET_DESTINATION
    assert claimed.event.event_type is EventType.AKISMET_REPORT
    assert (claimed.endpoint, claimed.recipient, claimed.chat) == (None, None, None)
    record = await store.deliveries.get_delivery(claimed.delivery.delivery_id)
    assert record is not None
    assert record.submission_id == sub.submission_id
    # Nothing for the owner's webhook (which takes flagged events) or recipient.
    kinds = [d.kind for d in await store.deliveries.list_deliveries(limit=100)]
    assert kinds.count(AKISMET) == 1
    assert len(kinds) == 3  # the submission.created's two, and the report


async def test_a_report_not_taken_is_tried_again_until_delivered(store: Store) -> None:
    sub = await stored(store)
    await store.submissions.mark_spam(sub.submission_id, report=report_of(sub, Label.SPAM))
    await store.deliveries.fan_out(AT, 100)
    [first] = (await store.deliveries.claim_due(AT, LEASE, 10)).leased
    later = AT + timedelta(seconds=5)

    await store.deliveries.record_failure(first.delivery.delivery_id, AT, "akismet down", later)
    assert (await store.deliveries.claim_due(AT, LEASE, 10)).leased == []
    [again] = (await store.deliveries.claim_due(later, LEASE, 10)).leased
    await store.deliveries.record_success(again.delivery.delivery_id, later)

    record = await store.deliveries.get_delivery(again.delivery.delivery_id)
    assert record is not None
    assert record.delivery.state is DeliveryState.DELIVERED
    assert record.delivery.attempts == 2


async def test_a_release_queues_its_report_even_when_nothing_else_is_queued(
    store: Store,
) -> None:
    # Accepted on arrival, marked as spam, released: its submission.created went out
    # once already, but Akismet is told of each decision.
    sub = await stored(store)
    await store.submissions.mark_spam(sub.submission_id, report=report_of(sub, Label.SPAM, 1))

    released = await store.submissions.release(release_of(sub, report_of(sub, Label.HAM, 2)))

    assert released is not None
    assert released.changed
    assert not released.queued
    assert [e.payload["label"] for e in await reports(store, sub)] == ["spam", "ham"]


async def test_a_release_that_changes_nothing_queues_no_report(store: Store) -> None:
    sub = await stored(store)

    released = await store.submissions.release(release_of(sub, report_of(sub, Label.HAM)))

    assert released is not None
    assert not released.changed
    assert await reports(store, sub) == []


async def test_a_spam_release_queues_both_events(store: Store) -> None:
    sub = await stored(store, SubmissionStatus.SPAM)

    released = await store.submissions.release(release_of(sub, report_of(sub, Label.HAM)))

    assert released is not None
    assert released.queued
    types = {e.event_type for e in await events(store, sub)}
    assert types == {EventType.FLAGGED, EventType.CREATED, EventType.AKISMET_REPORT}


async def test_an_unknown_submission_queues_no_report(store: Store) -> None:
    sub = await stored(store)
    ghost = submission(9)

    assert (
        await store.submissions.mark_spam(ghost.submission_id, report=report_of(ghost, Label.SPAM))
        is None
    )

    assert await reports(store, ghost) == []
    assert await reports(store, sub) == []


async def test_an_erasure_drops_a_report_not_yet_sent(store: Store) -> None:
    sub = await stored(store)
    await store.submissions.mark_spam(sub.submission_id, report=report_of(sub, Label.SPAM))
    await store.deliveries.fan_out(AT, 100)

    await store.submissions.erase(Erasure(sub.submission_id, deletion_event("evt_gone", sub, AT)))

    kinds = [d.kind for d in await store.deliveries.list_deliveries(limit=100)]
    assert AKISMET not in kinds
    assert DestinationKind.WEBHOOK in kinds  # what was delivered stays, as history
