"""The in-memory commit: the submission, its outbox row, the idempotency record, the
quota count and the files' bytes, checked and written in one step; and the honeypot's
tallies, and the reads the property tests make of what was kept."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from datetime import datetime

from attrs import evolve

from intake.adapters.memory.tables import Repository, Tables, utc
from intake.adapters.sql_rows import existing_query_ids
from intake.adapters.submission_pages import each_submission
from intake.domain.errors import ErrorCode, StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.listing import ALL, SubmissionFilter, SubmissionPage, SubmissionQuery
from intake.domain.model import FormMode, Submission
from intake.ports.submissions import (
    CommitPlan,
    CommitResult,
    Committed,
    FormCheck,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
    IdempotencyTaken,
    OutboxRow,
    QuotaReached,
    StorageFull,
)


class InMemorySubmissions(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)
        # Failure injection: the next N commits raise StorageUnavailable.
        self.fail_commits = 0

    async def commit(self, plan: CommitPlan) -> CommitResult:
        submission = evolve(plan.submission, created_at=utc(plan.submission.created_at))
        event = evolve(plan.event, created_at=utc(plan.event.created_at))
        if plan.check is not None and (refused := self._form_refusal(plan.check)):
            return FormRefused(refused)
        record = plan.idempotency
        if record is not None:
            existing = self._t.idempotency.get((record.scope, record.key))
            if existing is not None and not existing.expired(record.created_at):
                return IdempotencyTaken(existing)
        quota = plan.quota
        used = 0
        if quota is not None:
            used = self._t.usage.get((quota.workspace_id, quota.period), 0)
            if used >= quota.ceiling:
                return QuotaReached()
        stored_bytes = self._t.storage.get(submission.workspace_id, 0) + plan.file_bytes
        if plan.file_bytes and plan.storage_limit is not None and stored_bytes > plan.storage_limit:
            return StorageFull()
        if self.fail_commits:
            # The injected failure strikes the writes, as the real stores' does: after
            # the transaction's checks have answered, before anything is kept.
            self.fail_commits -= 1
            raise StorageUnavailable("injected failure")
        if quota is not None:
            self._t.usage[(quota.workspace_id, quota.period)] = used + 1
        if plan.file_bytes:
            self._t.storage[submission.workspace_id] = stored_bytes
        if record is not None:
            self._t.idempotency[(record.scope, record.key)] = record
        self._t.submissions[submission.submission_id] = submission
        self._t.outbox[event.event_id] = OutboxRow(event)
        return Committed()

    def _form_refusal(self, check: FormCheck) -> ErrorCode | None:
        form = self._t.forms.get(check.form_id)
        if form is None:
            return check.refusal(None, FormMode.PUBLIC, accepting=False)
        workspace = self._t.workspaces.get(form.workspace_id)
        accepting = form.enabled and workspace is not None and workspace.active
        return check.refusal(form.public_form_key, form.mode, accepting=accepting)

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult:
        if hit.check is not None and (refused := self._form_refusal(hit.check)):
            return FormRefused(refused)
        if hit.idempotency is not None:
            holder = await self.claim_key(hit.idempotency)
            if holder is not None:
                return IdempotencyTaken(holder)
        tally = (hit.form_id, hit.day)
        self._t.honeypot_hits[tally] = self._t.honeypot_hits.get(tally, 0) + 1
        return Committed()

    async def honeypot_hits(self, form_id: str) -> dict[str, int]:
        hits = self._t.honeypot_hits.items()
        return {day: count for (form, day), count in sorted(hits) if form == form_id}

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        existing = self._t.idempotency.get((record.scope, record.key))
        if existing is not None and not existing.expired(record.created_at):
            return existing
        self._t.idempotency[(record.scope, record.key)] = record
        return None

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None:
        record = self._t.idempotency.get((scope, key))
        if record is None or record.created_at <= not_before:
            return None
        return record

    async def get(self, submission_id: str) -> Submission | None:
        return self._t.submissions.get(submission_id)

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        submissions = self._t.submissions
        return {i for i in existing_query_ids(submission_ids) if i in submissions}

    def iterate(
        self, form_id: str, chosen: SubmissionFilter = ALL, *, batch_size: int = 500
    ) -> AsyncIterator[Submission]:
        return each_submission(self.page, form_id, chosen, batch_size)

    async def page(self, query: SubmissionQuery) -> SubmissionPage:
        rows = sorted(
            (
                s
                for s in self._t.submissions.values()
                if s.form_id == query.form_id
                and query.follows(s.submission_id)
                and query.filter.matches(s)
            ),
            key=lambda s: s.submission_id,
            reverse=not query.oldest_first,
        )
        return SubmissionPage(tuple(rows[: query.limit]), more=len(rows) > query.limit)

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return sorted(self._t.outbox.values(), key=lambda r: r.event.event_id)[:limit]
