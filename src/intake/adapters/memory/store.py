"""A store in memory. Each method finishes without awaiting anything in between, so on
one event loop every call is atomic, as a transaction is in the real stores."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta

from attrs import evolve

from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import ApiKey, Form, Submission, SubmissionStatus, Workspace
from intake.ports.forms import FormContext
from intake.ports.submissions import (
    PURGE_BATCH_SIZE,
    CommitPlan,
    CommitResult,
    Committed,
    IdempotencyTaken,
    OutboxRow,
    PurgeCounts,
    PurgeCutoffs,
    QuotaReached,
)


class _Tables:
    def __init__(self) -> None:
        self.workspaces: dict[str, Workspace] = {}
        self.usage: dict[tuple[str, str], int] = {}
        self.forms: dict[str, Form] = {}
        self.form_by_key: dict[str, str] = {}
        self.keys: dict[str, ApiKey] = {}
        self.key_by_hash: dict[bytes, str] = {}
        self.submissions: dict[str, Submission] = {}
        self.outbox: dict[str, OutboxRow] = {}
        self.idempotency: dict[tuple[str, str], IdempotencyRecord] = {}


class InMemoryWorkspaces:
    def __init__(self, tables: _Tables) -> None:
        self._t = tables

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


class InMemoryForms:
    def __init__(self, tables: _Tables) -> None:
        self._t = tables

    async def add(self, form: Form) -> None:
        self._t.forms[form.form_id] = form
        self._t.form_by_key[form.public_form_key] = form.form_id

    async def get(self, form_id: str) -> Form | None:
        return self._t.forms.get(form_id)

    async def update(self, form: Form) -> None:
        old = self._t.forms.get(form.form_id)
        if old is None:
            return  # as an SQL UPDATE: an unknown id changes nothing
        if old.public_form_key != form.public_form_key:
            del self._t.form_by_key[old.public_form_key]
        self._t.forms[form.form_id] = form
        self._t.form_by_key[form.public_form_key] = form.form_id

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        forms = [f for f in self._t.forms.values() if workspace_id in (None, f.workspace_id)]
        return sorted(forms, key=lambda f: f.form_id)

    def _context(self, form_id: str | None) -> FormContext | None:
        form = self._t.forms.get(form_id) if form_id is not None else None
        if form is None:
            return None
        return FormContext(form, self._t.workspaces[form.workspace_id])

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return self._context(self._t.form_by_key.get(public_form_key))

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return self._context(form_id)


class InMemoryApiKeys:
    def __init__(self, tables: _Tables) -> None:
        self._t = tables

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


class InMemorySubmissions:
    def __init__(self, tables: _Tables) -> None:
        self._t = tables
        # Failure injection: the next N commits raise StorageUnavailable.
        self.fail_commits = 0

    async def commit(self, plan: CommitPlan) -> CommitResult:
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
        if self.fail_commits:
            # The injected failure strikes the writes, as the real stores' does: after
            # the transaction's checks have answered, before anything is kept.
            self.fail_commits -= 1
            raise StorageUnavailable("injected failure")
        if quota is not None:
            self._t.usage[(quota.workspace_id, quota.period)] = used + 1
        if record is not None:
            self._t.idempotency[(record.scope, record.key)] = record
        self._t.submissions[plan.submission.submission_id] = plan.submission
        self._t.outbox[plan.event.event_id] = OutboxRow(plan.event)
        return Committed()

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

    async def iterate(
        self,
        form_id: str,
        status: SubmissionStatus | None = None,
        *,
        batch_size: int = 500,
    ) -> AsyncIterator[Submission]:
        rows = sorted(
            (
                s
                for s in self._t.submissions.values()
                if s.form_id == form_id and status in (None, s.status)
            ),
            key=lambda s: s.submission_id,
        )
        for row in rows:
            yield row

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
            if row.published_at is not None and row.published_at <= cutoffs.outbox
        ]
        for key in expired:
            del self._t.idempotency[key]
        for event_id in published:
            del self._t.outbox[event_id]
        return PurgeCounts(idempotency=len(expired), outbox=len(published))


class InMemoryStore:
    def __init__(self) -> None:
        self._tables = _Tables()
        self.workspaces = InMemoryWorkspaces(self._tables)
        self.forms = InMemoryForms(self._tables)
        self.api_keys = InMemoryApiKeys(self._tables)
        self.submissions = InMemorySubmissions(self._tables)
        self.closed = False

    async def migrate(self) -> list[str]:
        return []

    async def ping(self) -> None:
        if self.closed:
            raise StorageUnavailable("closed")

    async def close(self) -> None:
        self.closed = True

    # For tests: what is stored, without going through a port.
    def count_submissions(self) -> int:
        return len(self._tables.submissions)

    def count_outbox(self) -> int:
        return len(self._tables.outbox)

    def outbox_for(self, submission_id: str) -> list[OutboxRow]:
        return [r for r in self._tables.outbox.values() if r.event.submission_id == submission_id]
