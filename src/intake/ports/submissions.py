from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Protocol

from attrs import frozen

from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus


@frozen
class QuotaCharge:
    """Count one against the workspace's month, refusing the commit past the ceiling."""

    workspace_id: str
    period: str
    ceiling: int


@frozen
class CommitPlan:
    """Everything step 12 writes, in one transaction: all of it or none of it."""

    submission: Submission
    event: OutboxEvent
    idempotency: IdempotencyRecord | None
    quota: QuotaCharge | None


@frozen
class Committed:
    pass


@frozen
class QuotaReached:
    pass


@frozen
class IdempotencyTaken:
    """Another request committed with the same key first; nothing of this one was kept."""

    existing: IdempotencyRecord


CommitResult = Committed | QuotaReached | IdempotencyTaken


@frozen
class OutboxRow:
    event: OutboxEvent
    published_at: datetime | None = None


class SubmissionRepository(Protocol):
    async def commit(self, plan: CommitPlan) -> CommitResult:
        """Writes the submission, its outbox row, the idempotency record and the quota
        count atomically. Raises StorageUnavailable on a transient failure, leaving
        nothing behind."""
        ...

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        """Records an idempotency key alone, with no submission: a filled honeypot's
        look-alike success, so that its retry replays like a real one. Returns None when
        the key was free (or held by an expired record, now replaced), else the live
        record holding it, writing nothing."""
        ...

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None: ...

    async def get(self, submission_id: str) -> Submission | None: ...

    def iterate(
        self,
        form_id: str,
        status: SubmissionStatus | None = None,
        *,
        batch_size: int = 500,
    ) -> AsyncIterator[Submission]:
        """Every submission of a form, oldest first."""
        ...

    async def outbox(self, limit: int = 100) -> list[OutboxRow]: ...
