"""The fan-out's part for forms' messages in memory, as the SQL stores do it
(autoresponse_rules.py): recipients left out where a form mails none, confirmations
queued within their limits, forward-only submissions queued for erasure."""

from __future__ import annotations

from datetime import datetime

from attrs import evolve

from intake.adapters import autoresponse_rules as rules
from intake.adapters.memory.tables import Tables
from intake.domain.deliveries import DestinationKind
from intake.domain.form_messages import FormMessages
from intake.domain.model import OutboxEvent
from intake.domain.triage import erased_payload
from intake.ports.submissions import ErasedBatch


def messages_of(tables: Tables, form_id: str) -> FormMessages | None:
    form = tables.forms.get(form_id)
    return None if form is None else form.messages


def mailed(tables: Tables, form_id: str) -> bool:
    return rules.mailed(messages_of(tables, form_id))


def queue_extras(
    tables: Tables, event: OutboxEvent, now: datetime, autoresponse_limit: int
) -> list[tuple[DestinationKind, str]]:
    """The confirmation `event` earns within the limits (its record written), and the
    forward-only erasure it queues."""
    messages = messages_of(tables, event.form_id)
    if messages is None:
        return []
    forms = {event.form_id: messages}
    for submission_id in rules.forwarded([event], forms):
        if submission_id in tables.submissions:  # an owner may have erased it meanwhile
            tables.forward_erasures.setdefault(submission_id, now)
    chosen = []
    since = rules.window_start(now)
    for item in rules.autoresponses([event], forms, autoresponse_limit):
        recent = [
            queued
            for queued in tables.autoresponses.values()
            if queued.form_id == item.form_id and queued.queued_at > since
        ]
        if len(recent) >= item.hourly_limit:
            continue
        if any(queued.address_hash == item.address_hash for queued in recent):
            continue
        tables.autoresponses.setdefault(
            item.autoresponse_id,
            rules.QueuedAutoresponse(item.form_id, item.event_id, item.address_hash, now),
        )
        chosen.append((DestinationKind.EMAIL, item.autoresponse_id))
    return chosen


def erase_forwarded(tables: Tables, limit: int) -> ErasedBatch:
    """As the SQL stores' (forward_statements.py): the queued submissions whose events
    are all fanned out and whose deliveries are all done, blanked, the rows kept."""
    ready = []
    for submission_id, _queued_at in sorted(tables.forward_erasures.items(), key=_queue_order):
        events = [r for r in tables.outbox.values() if r.event.submission_id == submission_id]
        if any(row.published_at is None for row in events):
            continue
        event_ids = {row.event.event_id for row in events}
        if any(
            d.event_id in event_ids and d.next_attempt_at is not None
            for d in tables.deliveries.values()
        ):
            continue
        ready.append(submission_id)
        if len(ready) == limit:
            break
    file_keys: list[str] = []
    for submission_id in ready:
        del tables.forward_erasures[submission_id]
        submission = tables.submissions.get(submission_id)
        if submission is None:
            continue
        for row in [r for r in tables.outbox.values() if r.event.submission_id == submission_id]:
            blank = erased_payload(row.event.payload)
            tables.outbox[row.event.event_id] = evolve(row, event=evolve(row.event, payload=blank))
        freed = sum(f.size for f in submission.files)
        workspace = submission.workspace_id
        tables.storage[workspace] = max(tables.storage.get(workspace, 0) - freed, 0)
        file_keys.extend(f.key for f in submission.files)
        tables.submissions[submission_id] = evolve(
            submission,
            data={},
            subject=None,
            reply_to=None,
            client_ip=None,
            files=(),
            spam_reasons=(),
        )
    return ErasedBatch(tuple(ready), tuple(file_keys))


def _queue_order(item: tuple[str, datetime]) -> tuple[datetime, str]:
    return item[1], item[0]


def forget_autoresponses(tables: Tables, workspace_id: str, address: str) -> int:
    """SubmissionRepository.forget_autoresponses."""
    digest = rules.address_hash(address)
    forms = {f.form_id for f in tables.forms.values() if f.workspace_id == workspace_id}
    forgotten = [
        autoresponse_id
        for autoresponse_id, queued in tables.autoresponses.items()
        if queued.address_hash == digest and queued.form_id in forms
    ]
    for autoresponse_id in forgotten:
        del tables.autoresponses[autoresponse_id]
    return len(forgotten)
