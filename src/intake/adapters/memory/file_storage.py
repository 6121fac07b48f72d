"""The erasing of old spam and unverified submissions, and of a form's submissions past
its retention, in memory, that gives their files' bytes back to the workspace's storage
(as sqlite/file_storage.py and sqlite/privacy.py); the cutting of full client addresses;
and an erasure's search by address."""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime
from itertools import islice, takewhile

from attrs import evolve

from intake.adapters.memory.tables import Tables
from intake.domain.deliveries import DeliveryState
from intake.domain.listing import search_text
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.privacy import client_network_address
from intake.ports.submissions import ErasedBatch, TruncatedBatch

# What spam retention erases (erase_flagged).
_FLAGGED = frozenset({SubmissionStatus.SPAM, SubmissionStatus.UNVERIFIED})


def erase_flagged(tables: Tables, cutoff: datetime, limit: int) -> ErasedBatch:
    """One batch (SubmissionRepository.erase_flagged), `cutoff` already in UTC."""
    return _erase_oldest(tables, lambda s: s.status in _FLAGGED, cutoff, limit)


def erase_expired(tables: Tables, form_id: str, cutoff: datetime, limit: int) -> ErasedBatch:
    """One batch (SubmissionRepository.erase_expired), `cutoff` already in UTC; their
    idempotency records go too."""
    batch = _erase_oldest(tables, lambda s: s.form_id == form_id, cutoff, limit)
    gone = set(batch.submission_ids)
    for key in [k for k, r in tables.idempotency.items() if r.submission_id in gone]:
        del tables.idempotency[key]
    return batch


def _erase_oldest(
    tables: Tables, chosen: Callable[[Submission], bool], cutoff: datetime, limit: int
) -> ErasedBatch:
    flagged = sorted(
        (
            s
            for s in tables.submissions.values()
            if chosen(s) and s.created_at <= cutoff and _delivered(tables, s)
        ),
        key=lambda s: (s.created_at, s.submission_id),
    )[:limit]
    gone = {s.submission_id for s in flagged}
    events = {i for i, row in tables.outbox.items() if row.event.submission_id in gone}
    for event_id in events:
        del tables.outbox[event_id]
    for each in [d for d in tables.deliveries.values() if d.event_id in events]:
        del tables.deliveries[each.delivery_id]
        tables.leases.pop(each.delivery_id, None)
        tables.attempts.pop(each.delivery_id, None)
    for sub in flagged:
        del tables.submissions[sub.submission_id]
        freed = sum(f.size for f in sub.files)
        used = tables.storage.get(sub.workspace_id, 0)
        tables.storage[sub.workspace_id] = max(used - freed, 0)
    return ErasedBatch(
        tuple(s.submission_id for s in flagged),
        tuple(f.key for s in flagged for f in s.files),
    )


def _delivered(tables: Tables, submission: Submission) -> bool:
    """Every outbox row of the submission published, and none of their deliveries
    pending or dead."""
    rows = [r for r in tables.outbox.values() if r.event.submission_id == submission.submission_id]
    events = {r.event.event_id for r in rows}
    return all(r.published_at is not None for r in rows) and not any(
        d.event_id in events and d.state is not DeliveryState.DELIVERED
        for d in tables.deliveries.values()
    )


def truncate_client_ips(tables: Tables, cutoff: datetime, limit: int) -> TruncatedBatch:
    """One batch (SubmissionRepository.truncate_client_ips), `cutoff` already in UTC."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    after = tables.client_ips_swept_through
    ahead = islice(sorted(i for i in tables.submissions if i > after), limit)
    due = list(takewhile(lambda i: tables.submissions[i].created_at <= cutoff, ahead))
    truncated = 0
    for submission_id in due:
        sub = tables.submissions[submission_id]
        network = None if sub.client_ip is None else client_network_address(sub.client_ip)
        if network != sub.client_ip:
            tables.submissions[submission_id] = evolve(sub, client_ip=network)
            truncated += 1
    if due:
        tables.client_ips_swept_through = due[-1]
    return TruncatedBatch(seen=len(due), truncated=truncated)


def with_address(tables: Tables, workspace_id: str, spellings: Collection[str]) -> list[Submission]:
    """The candidates of an erasure (SubmissionRepository.with_address)."""
    wanted = [text.lower() for text in spellings]
    if not wanted:
        return []
    found = [
        s
        for s in tables.submissions.values()
        if s.workspace_id == workspace_id
        and (
            (s.reply_to or "").lower() in wanted
            or any(text in search_text(s.data) for text in wanted)
        )
    ]
    return sorted(found, key=lambda s: (s.created_at, s.submission_id))
