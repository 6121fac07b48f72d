"""The erasing of old spam and unverified submissions, in memory, that gives their
files' bytes back to the workspace's storage (as sqlite/file_storage.py)."""

from __future__ import annotations

from datetime import datetime

from intake.adapters.memory.tables import Tables
from intake.domain.deliveries import DeliveryState
from intake.domain.model import Submission, SubmissionStatus
from intake.ports.submissions import ErasedBatch

# What spam retention erases (erase_flagged).
_FLAGGED = frozenset({SubmissionStatus.SPAM, SubmissionStatus.UNVERIFIED})


def erase_flagged(tables: Tables, cutoff: datetime, limit: int) -> ErasedBatch:
    """One batch (SubmissionRepository.erase_flagged), `cutoff` already in UTC."""
    flagged = sorted(
        (
            s
            for s in tables.submissions.values()
            if s.status in _FLAGGED and s.created_at <= cutoff and _delivered(tables, s)
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
