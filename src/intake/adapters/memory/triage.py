"""An owner's triage in memory (SubmissionRepository.release, .mark_spam, .erase): each
runs without an `await`, so it is atomic on its event loop, as a transaction is; the
order's lesson is taught in it (memory/spam.py)."""

from __future__ import annotations

from attrs import evolve

from intake.adapters.memory.spam import teach
from intake.adapters.memory.tables import Tables, utc
from intake.domain.deliveries import DeliveryState
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.spam.model import Label, Lesson
from intake.domain.triage import erased_payload
from intake.ports.submissions import OutboxRow
from intake.ports.triage import Erased, Erasure, Release, Released


def release(tables: Tables, order: Release) -> Released | None:
    submission = tables.submissions.get(order.submission_id)
    if submission is None:
        return None
    if order.lesson is not None:  # taught even when accepted already: idempotent
        teach(tables, submission, order.lesson, Label.HAM)
    if submission.status is SubmissionStatus.ACCEPTED:
        return Released(submission, changed=False)
    accepted = evolve(submission, status=SubmissionStatus.ACCEPTED)
    tables.submissions[submission.submission_id] = accepted
    _queue(tables, order.report)
    if submission.submission_id in tables.charged:  # accepted once before: queued then
        return Released(accepted, changed=True)
    tables.charged[submission.submission_id] = order.period
    usage_key = (submission.workspace_id, order.period)
    tables.usage[usage_key] = tables.usage.get(usage_key, 0) + 1
    event = evolve(order.event, created_at=utc(order.event.created_at))
    tables.outbox[event.event_id] = OutboxRow(event)
    tables.wakeup.ring()
    return Released(accepted, changed=True, queued=True)


def mark_spam(
    tables: Tables,
    submission_id: str,
    lesson: Lesson | None,
    report: OutboxEvent | None = None,
) -> Submission | None:
    submission = tables.submissions.get(submission_id)
    if submission is None:
        return None
    if lesson is not None:
        teach(tables, submission, lesson, Label.SPAM)
    marked = evolve(submission, status=SubmissionStatus.SPAM)
    tables.submissions[submission_id] = marked
    _queue(tables, report)
    return marked


def _queue(tables: Tables, event: OutboxEvent | None) -> None:
    if event is not None:
        queued = evolve(event, created_at=utc(event.created_at))
        tables.outbox[queued.event_id] = OutboxRow(queued)
        tables.wakeup.ring()


def erase(tables: Tables, order: Erasure) -> Erased | None:
    submission = tables.submissions.get(order.submission_id)
    if submission is None:
        return None
    if order.lesson is not None:
        teach(tables, submission, order.lesson, None)
    del tables.submissions[order.submission_id]
    tables.taught.pop(order.submission_id, None)
    tables.charged.pop(submission.submission_id, None)
    events = set()
    for event_id, row in list(tables.outbox.items()):
        if row.event.submission_id == submission.submission_id:
            events.add(event_id)
            blank = evolve(row.event, payload=erased_payload(row.event.payload))
            tables.outbox[event_id] = evolve(row, event=blank)
    undelivered = [
        d
        for d in tables.deliveries.values()
        if d.event_id in events and d.state is not DeliveryState.DELIVERED
    ]
    for delivery in undelivered:
        del tables.deliveries[delivery.delivery_id]
        tables.leases.pop(delivery.delivery_id, None)
        tables.attempts.pop(delivery.delivery_id, None)
    for key in [k for k, r in tables.idempotency.items() if r.submission_id == order.submission_id]:
        del tables.idempotency[key]
    freed = sum(f.size for f in submission.files)
    if freed:
        used = tables.storage.get(submission.workspace_id, 0)
        tables.storage[submission.workspace_id] = max(used - freed, 0)
    event = evolve(order.event, created_at=utc(order.event.created_at))
    tables.outbox[event.event_id] = OutboxRow(event)
    tables.wakeup.ring()
    return Erased(tuple(f.key for f in submission.files))
