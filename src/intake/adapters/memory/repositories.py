"""The in-memory repositories of workspaces, forms, API keys and submissions (with the
outbox rows, idempotency records and honeypot tallies a commit keeps)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from datetime import datetime, timedelta

from attrs import evolve

from intake.adapters.memory import (
    file_storage,
    form_messages,
    form_removal,
    triage,
    workspace_setup,
)
from intake.adapters.memory.tables import Repository, Tables, utc
from intake.adapters.sql_rows import existing_query_ids
from intake.adapters.submission_pages import each_submission
from intake.domain.deliveries import DeliveryState
from intake.domain.errors import ErrorCode, StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.listing import (
    ALL,
    SubmissionFilter,
    SubmissionPage,
    SubmissionQuery,
    count_by_status,
)
from intake.domain.model import (
    ApiKey,
    Form,
    FormMode,
    OutboxEvent,
    Submission,
    SubmissionStatus,
    Workspace,
)
from intake.domain.quota import period as quota_period
from intake.domain.spam.model import Lesson
from intake.ports.forms import FormContext
from intake.ports.submissions import (
    PURGE_BATCH_SIZE,
    CommitPlan,
    CommitResult,
    Committed,
    ErasedBatch,
    FormCheck,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
    IdempotencyTaken,
    OutboxRow,
    PurgeCounts,
    PurgeCutoffs,
    QuotaReached,
    StorageFull,
    TruncatedBatch,
)
from intake.ports.triage import Erased, Erasure, Release, Released
from intake.ports.workspaces import FormStatusCounts, FormUsage, WorkspaceSetup

# FormStatusCounts' fields, in order.
COUNTED = (SubmissionStatus.ACCEPTED, SubmissionStatus.SPAM, SubmissionStatus.UNVERIFIED)


def live_form_ids(tables: Tables, workspace_id: str) -> list[str]:
    """The workspace's forms, in order, but those deleted."""
    return sorted(
        f.form_id
        for f in tables.forms.values()
        if f.workspace_id == workspace_id and f.form_id not in tables.deleted_forms
    )


class InMemoryWorkspaces(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)

    async def add(self, workspace: Workspace) -> None:
        self._t.workspaces[workspace.workspace_id] = workspace

    async def get(self, workspace_id: str) -> Workspace | None:
        return self._t.workspaces.get(workspace_id)

    async def update(self, workspace: Workspace) -> None:
        # As an SQL UPDATE: an unknown id changes nothing (it is not an insert).
        if workspace.workspace_id in self._t.workspaces:
            self._t.workspaces[workspace.workspace_id] = workspace

    async def list(self) -> list[Workspace]:
        return sorted(self._t.workspaces.values(), key=lambda w: w.workspace_id)

    async def usage(self, workspace_id: str, period: str) -> int:
        return self._t.usage.get((workspace_id, period), 0)

    async def storage_used(self, workspace_id: str) -> int:
        return self._t.storage.get(workspace_id, 0)

    async def setup(self, workspace_id: str) -> WorkspaceSetup:
        return workspace_setup.setup(self._t, workspace_id)

    async def form_usage(self, workspace_id: str, period: str) -> Sequence[FormUsage]:
        tables = self._t
        forms = live_form_ids(tables, workspace_id)
        used = dict.fromkeys(forms, 0)
        for submission_id, charged in tables.charged.items():
            submission = tables.submissions.get(submission_id)
            if charged == period and submission is not None and submission.form_id in used:
                used[submission.form_id] += 1
        hits = dict.fromkeys(forms, 0)
        for (form_id, day), count in tables.honeypot_hits.items():
            if form_id in hits and day.startswith(period + "-"):
                hits[form_id] += count
        return [FormUsage(form_id, used[form_id], hits[form_id]) for form_id in forms]

    async def status_counts(
        self, workspace_id: str, since: datetime, until: datetime
    ) -> Sequence[FormStatusCounts]:
        tables = self._t
        forms = live_form_ids(tables, workspace_id)
        counts = {form_id: dict.fromkeys(COUNTED, 0) for form_id in forms}
        for submission in tables.submissions.values():
            by_status = counts.get(submission.form_id)
            if by_status is None or not utc(since) <= utc(submission.created_at) < utc(until):
                continue
            if submission.status in by_status:
                by_status[submission.status] += 1
        return [
            FormStatusCounts(form_id, *(counts[form_id][status] for status in COUNTED))
            for form_id in forms
        ]

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        tables = self._t
        return [
            (tables.workspaces[workspace_id], count)
            for (workspace_id, period_of_count), count in sorted(tables.usage.items())
            if period_of_count == period and count > 0 and workspace_id in tables.workspaces
        ]


class InMemoryForms(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)

    async def add(self, form: Form) -> None:
        self._t.forms[form.form_id] = form
        self._t.form_by_key[form.public_form_key] = form.form_id

    async def get(self, form_id: str) -> Form | None:
        return None if form_id in self._t.deleted_forms else self._t.forms.get(form_id)

    async def update(self, form: Form) -> None:
        old = self._t.forms.get(form.form_id)
        if old is None:
            return  # as an SQL UPDATE: an unknown id changes nothing
        if old.public_form_key != form.public_form_key:
            del self._t.form_by_key[old.public_form_key]
        self._t.forms[form.form_id] = form
        self._t.form_by_key[form.public_form_key] = form.form_id

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        forms = [
            f
            for f in self._t.forms.values()
            if workspace_id in (None, f.workspace_id) and f.form_id not in self._t.deleted_forms
        ]
        return sorted(forms, key=lambda f: f.form_id)

    def _context(self, form_id: str | None) -> FormContext | None:
        if form_id is None or form_id in self._t.deleted_forms:
            return None
        form = self._t.forms.get(form_id)
        if form is None:
            return None
        return FormContext(form, self._t.workspaces[form.workspace_id])

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return self._context(self._t.form_by_key.get(public_form_key))

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return self._context(form_id)

    async def mark_deleted(self, form_id: str, at: datetime) -> bool:
        return form_removal.mark_deleted(self._t, form_id, at)

    async def deleted(self, after: str, limit: int) -> Sequence[str]:
        return form_removal.deleted(self._t, after, limit)

    async def remove_deleted(self, form_id: str) -> bool:
        return form_removal.remove_deleted(self._t, form_id)


class InMemoryApiKeys(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)

    async def add(self, key: ApiKey) -> None:
        self._t.keys[key.key_id] = key
        self._t.key_by_hash[key.key_hash] = key.key_id

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        key_id = self._t.key_by_hash.get(key_hash)
        return self._t.keys.get(key_id) if key_id is not None else None

    async def get(self, key_id: str) -> ApiKey | None:
        return self._t.keys.get(key_id)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        key = self._t.keys.get(key_id)
        if key is None:
            return False
        if key.revoked_at is None:
            self._t.keys[key_id] = evolve(key, revoked_at=when)
        return True

    async def list(self, workspace_id: str) -> list[ApiKey]:
        keys = [k for k in self._t.keys.values() if k.workspace_id == workspace_id]
        return sorted(keys, key=lambda k: (k.created_at, k.key_id))


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
        if submission.status.uses_quota:  # as the SQL stores' charged_period default
            self._t.charged[submission.submission_id] = quota_period(submission.created_at)
        self._t.outbox[event.event_id] = OutboxRow(event)
        self._t.wakeup.ring()
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

    async def status_counts(
        self, form_id: str, chosen: SubmissionFilter, limit: int
    ) -> dict[SubmissionStatus, int]:
        return count_by_status(self._t.submissions.values(), form_id, chosen, limit)

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return sorted(self._t.outbox.values(), key=lambda r: r.event.event_id)[:limit]

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        # No lock to hold here: one pass, atomic like every method of this store.
        cutoffs = PurgeCutoffs.at(now, outbox_retention, batch_size)
        expired = [k for k, r in self._t.idempotency.items() if r.created_at <= cutoffs.idempotency]
        published = [
            event_id
            for event_id, row in self._t.outbox.items()
            if row.published_at is not None
            and row.published_at <= cutoffs.outbox
            and not self._deliveries_kept(event_id, cutoffs.outbox)
        ]
        for key in expired:
            del self._t.idempotency[key]
        for event_id in published:
            del self._t.outbox[event_id]
        # A row's deliveries go with it, as the SQL stores' ON DELETE CASCADE does.
        gone = set(published)
        for each in [d for d in self._t.deliveries.values() if d.event_id in gone]:
            del self._t.deliveries[each.delivery_id]
            self._t.leases.pop(each.delivery_id, None)
            self._t.attempts.pop(each.delivery_id, None)
        answered = [
            autoresponse_id
            for autoresponse_id, record in self._t.autoresponses.items()
            if record.queued_at <= cutoffs.autoresponses
        ]
        for autoresponse_id in answered:
            del self._t.autoresponses[autoresponse_id]
        return PurgeCounts(
            idempotency=len(expired), outbox=len(published), autoresponses=len(answered)
        )

    async def erase_forwarded(self, limit: int) -> ErasedBatch:
        return form_messages.erase_forwarded(self._t, limit)

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        cutoff = utc(created_before)
        return file_storage.erase_flagged(self._t, cutoff, limit)

    async def erase_expired(
        self, form_id: str, created_before: datetime, limit: int
    ) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return file_storage.erase_expired(self._t, form_id, utc(created_before), limit)

    async def truncate_client_ips(self, created_before: datetime, limit: int) -> TruncatedBatch:
        return file_storage.truncate_client_ips(self._t, utc(created_before), limit)

    async def with_address(self, workspace_id: str, spellings: Collection[str]) -> list[Submission]:
        return file_storage.with_address(self._t, workspace_id, spellings)

    async def forget_autoresponses(self, workspace_id: str, address: str) -> int:
        return form_messages.forget_autoresponses(self._t, workspace_id, address)

    async def release(self, release: Release) -> Released | None:
        return triage.release(self._t, release)

    async def mark_spam(
        self,
        submission_id: str,
        lesson: Lesson | None = None,
        *,
        report: OutboxEvent | None = None,
    ) -> Submission | None:
        return triage.mark_spam(self._t, submission_id, lesson, report)

    async def erase(self, erasure: Erasure) -> Erased | None:
        return triage.erase(self._t, erasure)

    def _deliveries_kept(self, event_id: str, cutoff: datetime) -> bool:
        """A delivery still to be made, or parked as dead after the cutoff, keeps its
        event's row (and so itself): a purge never drops undelivered work unseen."""
        return any(
            d.event_id == event_id
            and (
                d.state is DeliveryState.PENDING
                or (d.state is DeliveryState.DEAD and d.dead_at is not None and d.dead_at > cutoff)
            )
            for d in self._t.deliveries.values()
        )
