"""The repositories over one SQLite connection. Each method sends one function to the
worker thread; the function holds all the SQL of the operation."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Collection, Sequence
from datetime import datetime, timedelta

from intake.adapters.delivery import Wakeup
from intake.adapters.sql_rows import existing_query_ids
from intake.adapters.sqlite import file_storage
from intake.adapters.sqlite import mapping as m
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.mapping import ROWS
from intake.adapters.sqlite.worker import Worker
from intake.domain.errors import ErrorCode
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import ApiKey, Form, FormMode, Submission, SubmissionStatus, Workspace
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
    QuotaCharge,
    QuotaReached,
    StorageFull,
)

# The SQL is written out in full, with named parameters matching `mapping`'s params.

# Workspaces

_INSERT_WORKSPACE = """
    INSERT INTO workspaces (
        workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    ) VALUES (
        :workspace_id, :name, :plan, :monthly_limit, :active, :created_at, :storage_limit
    )
"""
_UPDATE_WORKSPACE = """
    UPDATE workspaces
    SET name = :name, plan = :plan, monthly_limit = :monthly_limit, active = :active,
        created_at = :created_at, storage_limit = :storage_limit
    WHERE workspace_id = :workspace_id
"""
_GET_WORKSPACE = """
    SELECT workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    FROM workspaces WHERE workspace_id = ?
"""
_LIST_WORKSPACES = """
    SELECT workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    FROM workspaces ORDER BY workspace_id
"""
_USAGE = "SELECT count FROM monthly_usage WHERE workspace_id = ? AND period = ?"
_USAGE_IN_PERIOD = """
    SELECT w.workspace_id, w.name, w.plan, w.monthly_limit, w.active, w.created_at,
        w.storage_limit, u.count
    FROM monthly_usage AS u JOIN workspaces AS w ON w.workspace_id = u.workspace_id
    WHERE u.period = ? AND u.count > 0
    ORDER BY w.workspace_id
"""


def _add_workspace(conn: sqlite3.Connection, workspace: Workspace) -> None:
    conn.execute(_INSERT_WORKSPACE, ROWS.workspace_params(workspace))


def _get_workspace(conn: sqlite3.Connection, workspace_id: str) -> Workspace | None:
    row = conn.execute(_GET_WORKSPACE, (workspace_id,)).fetchone()
    return None if row is None else ROWS.workspace_from_row(row)


def _update_workspace(conn: sqlite3.Connection, workspace: Workspace) -> None:
    conn.execute(_UPDATE_WORKSPACE, ROWS.workspace_params(workspace))


def _list_workspaces(conn: sqlite3.Connection) -> list[Workspace]:
    return [ROWS.workspace_from_row(row) for row in conn.execute(_LIST_WORKSPACES)]


def _usage(conn: sqlite3.Connection, workspace_id: str, period: str) -> int:
    row = conn.execute(_USAGE, (workspace_id, period)).fetchone()
    return 0 if row is None else int(row["count"])


def _usage_in_period(conn: sqlite3.Connection, period: str) -> list[tuple[Workspace, int]]:
    return [
        (ROWS.workspace_from_row(row), int(row["count"]))
        for row in conn.execute(_USAGE_IN_PERIOD, (period,))
    ]


class SqliteWorkspaces:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def add(self, workspace: Workspace) -> None:
        await self._worker.run(_add_workspace, workspace)

    async def get(self, workspace_id: str) -> Workspace | None:
        return await self._worker.run(_get_workspace, workspace_id)

    async def update(self, workspace: Workspace) -> None:
        await self._worker.run(_update_workspace, workspace)

    async def list(self) -> list[Workspace]:
        return await self._worker.run(_list_workspaces)

    async def usage(self, workspace_id: str, period: str) -> int:
        return await self._worker.run(_usage, workspace_id, period)

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        return await self._worker.run(_usage_in_period, period)

    async def storage_used(self, workspace_id: str) -> int:
        return await self._worker.run(file_storage.storage_used, workspace_id)


# Forms

_INSERT_FORM = """
    INSERT INTO forms (
        form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at,
        uploads
    ) VALUES (
        :form_id, :workspace_id, :public_form_key, :name, :mode, :enabled, :allowed_origins,
        :rules, :spam_threshold, :challenge_provider, :challenge_secret, :redirect_url,
        :created_at, :uploads
    )
"""
_UPDATE_FORM = """
    UPDATE forms
    SET workspace_id = :workspace_id, public_form_key = :public_form_key, name = :name,
        mode = :mode, enabled = :enabled, allowed_origins = :allowed_origins, rules = :rules,
        spam_threshold = :spam_threshold, challenge_provider = :challenge_provider,
        challenge_secret = :challenge_secret, redirect_url = :redirect_url,
        created_at = :created_at, uploads = :uploads
    WHERE form_id = :form_id
"""
_SELECT_FORM = """
    SELECT form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at, uploads
    FROM forms
"""
_GET_FORM = _SELECT_FORM + " WHERE form_id = ?"
_LIST_FORMS = _SELECT_FORM + " ORDER BY form_id"
_LIST_WORKSPACE_FORMS = _SELECT_FORM + " WHERE workspace_id = ? ORDER BY form_id"
# The form and its workspace in one statement; the workspace's columns are aliased `w_*`.
_SELECT_CONTEXT = """
    SELECT f.form_id, f.workspace_id, f.public_form_key, f.name, f.mode, f.enabled,
        f.allowed_origins, f.rules, f.spam_threshold, f.challenge_provider,
        f.challenge_secret, f.redirect_url, f.created_at, f.uploads,
        w.workspace_id AS w_workspace_id, w.name AS w_name, w.plan AS w_plan,
        w.monthly_limit AS w_monthly_limit, w.active AS w_active,
        w.created_at AS w_created_at, w.storage_limit AS w_storage_limit
    FROM forms AS f JOIN workspaces AS w ON w.workspace_id = f.workspace_id
"""
_RESOLVE_PUBLIC_KEY = _SELECT_CONTEXT + " WHERE f.public_form_key = ?"
_RESOLVE_ID = _SELECT_CONTEXT + " WHERE f.form_id = ?"


def _add_form(conn: sqlite3.Connection, form: Form) -> None:
    conn.execute(_INSERT_FORM, ROWS.form_params(form))


def _get_form(conn: sqlite3.Connection, form_id: str) -> Form | None:
    row = conn.execute(_GET_FORM, (form_id,)).fetchone()
    return None if row is None else ROWS.form_from_row(row)


def _update_form(conn: sqlite3.Connection, form: Form) -> None:
    # The key is a column of the row, not a second index to keep: a rotated key is gone.
    conn.execute(_UPDATE_FORM, ROWS.form_params(form))


def _list_forms(conn: sqlite3.Connection, workspace_id: str | None) -> list[Form]:
    rows = (
        conn.execute(_LIST_FORMS)
        if workspace_id is None
        else conn.execute(_LIST_WORKSPACE_FORMS, (workspace_id,))
    )
    return [ROWS.form_from_row(row) for row in rows]


def _resolve(conn: sqlite3.Connection, query: str, value: str) -> FormContext | None:
    row = conn.execute(query, (value,)).fetchone()
    if row is None:
        return None
    return FormContext(ROWS.form_from_row(row), ROWS.workspace_from_row(row, prefix="w_"))


class SqliteForms:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def add(self, form: Form) -> None:
        await self._worker.run(_add_form, form)

    async def get(self, form_id: str) -> Form | None:
        return await self._worker.run(_get_form, form_id)

    async def update(self, form: Form) -> None:
        await self._worker.run(_update_form, form)

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        return await self._worker.run(_list_forms, workspace_id)

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return await self._worker.run(_resolve, _RESOLVE_PUBLIC_KEY, public_form_key)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._worker.run(_resolve, _RESOLVE_ID, form_id)


# API keys

_INSERT_API_KEY = """
    INSERT INTO api_keys (key_id, workspace_id, key_hash, prefix, created_at, revoked_at)
    VALUES (:key_id, :workspace_id, :key_hash, :prefix, :created_at, :revoked_at)
"""
_SELECT_API_KEY = """
    SELECT key_id, workspace_id, key_hash, prefix, created_at, revoked_at FROM api_keys
"""
_FIND_API_KEY = _SELECT_API_KEY + " WHERE key_hash = ?"
_GET_API_KEY = _SELECT_API_KEY + " WHERE key_id = ?"
_LIST_API_KEYS = _SELECT_API_KEY + " WHERE workspace_id = ? ORDER BY created_at, key_id"
# COALESCE keeps the first revocation time when a key is revoked again.
_REVOKE_API_KEY = "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?"


def _add_api_key(conn: sqlite3.Connection, key: ApiKey) -> None:
    conn.execute(_INSERT_API_KEY, ROWS.api_key_params(key))


def _find_api_key(conn: sqlite3.Connection, key_hash: bytes) -> ApiKey | None:
    row = conn.execute(_FIND_API_KEY, (key_hash,)).fetchone()
    return None if row is None else ROWS.api_key_from_row(row)


def _get_api_key(conn: sqlite3.Connection, key_id: str) -> ApiKey | None:
    row = conn.execute(_GET_API_KEY, (key_id,)).fetchone()
    return None if row is None else ROWS.api_key_from_row(row)


def _revoke_api_key(conn: sqlite3.Connection, key_id: str, when: datetime) -> bool:
    return conn.execute(_REVOKE_API_KEY, (m.time_text(when), key_id)).rowcount > 0


def _list_api_keys(conn: sqlite3.Connection, workspace_id: str) -> list[ApiKey]:
    return [ROWS.api_key_from_row(row) for row in conn.execute(_LIST_API_KEYS, (workspace_id,))]


class SqliteApiKeys:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def add(self, key: ApiKey) -> None:
        await self._worker.run(_add_api_key, key)

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        return await self._worker.run(_find_api_key, key_hash)

    async def get(self, key_id: str) -> ApiKey | None:
        return await self._worker.run(_get_api_key, key_id)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        return await self._worker.run(_revoke_api_key, key_id, when)

    async def list(self, workspace_id: str) -> list[ApiKey]:
        return await self._worker.run(_list_api_keys, workspace_id)


# Submissions, the outbox and idempotency records

_INSERT_SUBMISSION = """
    INSERT INTO submissions (
        submission_id, form_id, workspace_id, status, data, subject, reply_to, spam_score,
        client_ip, created_at, files
    ) VALUES (
        :submission_id, :form_id, :workspace_id, :status, :data, :subject, :reply_to,
        :spam_score, :client_ip, :created_at, :files
    )
"""
_SELECT_SUBMISSION = """
    SELECT submission_id, form_id, workspace_id, status, data, subject, reply_to, spam_score,
        client_ip, created_at, files
    FROM submissions
"""
_GET_SUBMISSION = _SELECT_SUBMISSION + " WHERE submission_id = ?"
# Seeks the primary key once per id; {} is the ids' placeholders.
_EXISTING = "SELECT submission_id FROM submissions WHERE submission_id IN ({})"
# Keyset pagination: each batch starts after the last id of the one before, an index seek.
_PAGE = (
    _SELECT_SUBMISSION + " WHERE form_id = ? AND submission_id > ? ORDER BY submission_id LIMIT ?"
)
_PAGE_WITH_STATUS = (
    _SELECT_SUBMISSION
    + " WHERE form_id = ? AND status = ? AND submission_id > ? ORDER BY submission_id LIMIT ?"
)
_INSERT_EVENT = """
    INSERT INTO outbox (
        event_id, event_type, submission_id, form_id, workspace_id, payload, created_at,
        next_attempt_at
    ) VALUES (
        :event_id, :event_type, :submission_id, :form_id, :workspace_id, :payload, :created_at,
        :next_attempt_at
    )
"""
_OUTBOX = """
    SELECT event_id, event_type, submission_id, form_id, workspace_id, payload, created_at,
        published_at
    FROM outbox ORDER BY event_id LIMIT ?
"""
_INSERT_IDEMPOTENCY = """
    INSERT INTO idempotency (scope, key, fingerprint, submission_id, created_at)
    VALUES (:scope, :key, :fingerprint, :submission_id, :created_at)
"""
_REPLACE_IDEMPOTENCY = """
    UPDATE idempotency
    SET fingerprint = :fingerprint, submission_id = :submission_id, created_at = :created_at
    WHERE scope = :scope AND key = :key
"""
_GET_IDEMPOTENCY = """
    SELECT scope, key, fingerprint, submission_id, created_at FROM idempotency
    WHERE scope = ? AND key = ?
"""
_FIND_IDEMPOTENCY = _GET_IDEMPOTENCY + " AND created_at > ?"
# Counts one only below the ceiling: no row changes at the ceiling. The SELECT's WHERE
# keeps a zero ceiling from creating the month's row with a count of one.
_CHARGE_QUOTA = """
    INSERT INTO monthly_usage (workspace_id, period, count)
    SELECT :workspace_id, :period, 1 WHERE :ceiling > 0
    ON CONFLICT (workspace_id, period)
    DO UPDATE SET count = monthly_usage.count + 1 WHERE monthly_usage.count < :ceiling
"""
_COUNT_HONEYPOT = """
    INSERT INTO honeypot_hits (form_id, day, count) VALUES (?, ?, 1)
    ON CONFLICT (form_id, day) DO UPDATE SET count = honeypot_hits.count + 1
"""
_HONEYPOT_HITS = "SELECT day, count FROM honeypot_hits WHERE form_id = ? ORDER BY day"

# Purging: one batch per statement, oldest first, each a range scan of an index
# (idempotency_created; outbox_published, partial, of published rows only). SQLite's
# DELETE takes no LIMIT unless so compiled, hence the subquery.
_PURGE_IDEMPOTENCY = """
    DELETE FROM idempotency WHERE (scope, key) IN (
        SELECT scope, key FROM idempotency
        WHERE created_at <= :cutoff ORDER BY created_at LIMIT :limit
    )
"""
# `published_at IS NOT NULL` is implied by the comparison; written out all the same, as
# the rule it is (an unpublished row is never deleted) and as the partial index's term.
# A row stays while a delivery of it is pending, or was parked as dead after the cutoff
# (kept for `intake outbox retry` as long as a published row is); its deliveries go
# with it (ON DELETE CASCADE). The check is a seek on the deliveries' unique index;
# pending is said as the deliveries_due index says it.
_PURGE_OUTBOX = """
    DELETE FROM outbox WHERE event_id IN (
        SELECT event_id FROM outbox
        WHERE published_at IS NOT NULL AND published_at <= :cutoff
            AND NOT EXISTS (
                SELECT 1 FROM deliveries AS d
                WHERE d.event_id = outbox.event_id
                    AND (d.next_attempt_at IS NOT NULL  -- pending
                        OR (d.state = 'dead' AND d.dead_at > :cutoff))
            )
        ORDER BY published_at LIMIT :limit
    )
"""


# What FormCheck confirms: the form and its workspace as they are now.
_CHECK_FORM = """
    SELECT f.public_form_key, f.mode, f.enabled, w.active
    FROM forms AS f JOIN workspaces AS w ON w.workspace_id = f.workspace_id
    WHERE f.form_id = ?
"""


def _form_refusal(conn: sqlite3.Connection, check: FormCheck) -> ErrorCode | None:
    row = conn.execute(_CHECK_FORM, (check.form_id,)).fetchone()
    if row is None:
        return check.refusal(None, FormMode.PUBLIC, accepting=False)
    return check.refusal(
        row["public_form_key"],
        FormMode(row["mode"]),
        accepting=ROWS.codec.read_boolean(row["enabled"])
        and ROWS.codec.read_boolean(row["active"]),
    )


def _commit(conn: sqlite3.Connection, plan: CommitPlan) -> CommitResult:
    """The form first (the write lock is held: it stays as read until the commit); the
    key next, so a retry gets its answer even when the month's quota is spent; then the
    count; then the rows. A refusal discards whatever was written before it."""
    with transaction(conn) as tx:
        if plan.check is not None and (refused := _form_refusal(conn, plan.check)):
            tx.discard()
            return FormRefused(refused)
        if plan.idempotency is not None:
            holder = _claim_key(conn, plan.idempotency)
            if holder is not None:
                tx.discard()
                return IdempotencyTaken(holder)
        if plan.quota is not None and not _charge(conn, plan.quota):
            tx.discard()
            return QuotaReached()
        if not file_storage.charge_storage(conn, plan):
            tx.discard()  # the quota's count with the rest
            return StorageFull()
        conn.execute(_INSERT_SUBMISSION, ROWS.submission_params(plan.submission))
        conn.execute(_INSERT_EVENT, ROWS.event_params(plan.event))
    return Committed()


def _claim_key(conn: sqlite3.Connection, record: IdempotencyRecord) -> IdempotencyRecord | None:
    """Writes the record; if a live one holds the key already, returns that instead."""
    params = ROWS.idempotency_params(record)
    try:
        conn.execute(_INSERT_IDEMPOTENCY, params)
    except sqlite3.IntegrityError:
        # The key is taken: not an error, the answer. Only the statement failed; the
        # transaction goes on.
        row = conn.execute(_GET_IDEMPOTENCY, (record.scope, record.key)).fetchone()
        if row is None:
            raise  # some other constraint: a real error
        holder = ROWS.idempotency_from_row(row)
        if not holder.expired(record.created_at):
            return holder
        conn.execute(_REPLACE_IDEMPOTENCY, params)
    return None


def _record_honeypot(conn: sqlite3.Connection, hit: HoneypotHit) -> HoneypotResult:
    """As `_commit`, with the day's count in place of the quota and the rows: the same
    write lock, and a commit that reaches the disk as durably."""
    with transaction(conn) as tx:
        if hit.check is not None and (refused := _form_refusal(conn, hit.check)):
            tx.discard()
            return FormRefused(refused)
        if hit.idempotency is not None:
            holder = _claim_key(conn, hit.idempotency)
            if holder is not None:
                tx.discard()
                return IdempotencyTaken(holder)
        conn.execute(_COUNT_HONEYPOT, (hit.form_id, hit.day))
    return Committed()


def _honeypot_hits(conn: sqlite3.Connection, form_id: str) -> dict[str, int]:
    return {row["day"]: int(row["count"]) for row in conn.execute(_HONEYPOT_HITS, (form_id,))}


def _claim_alone(conn: sqlite3.Connection, record: IdempotencyRecord) -> IdempotencyRecord | None:
    with transaction(conn) as tx:
        holder = _claim_key(conn, record)
        if holder is not None:
            tx.discard()
        return holder


def _charge(conn: sqlite3.Connection, quota: QuotaCharge) -> bool:
    params = {"workspace_id": quota.workspace_id, "period": quota.period, "ceiling": quota.ceiling}
    return conn.execute(_CHARGE_QUOTA, params).rowcount > 0


def _find_idempotency(
    conn: sqlite3.Connection, scope: str, key: str, not_before: datetime
) -> IdempotencyRecord | None:
    row = conn.execute(_FIND_IDEMPOTENCY, (scope, key, m.time_text(not_before))).fetchone()
    return None if row is None else ROWS.idempotency_from_row(row)


def _get_submission(conn: sqlite3.Connection, submission_id: str) -> Submission | None:
    row = conn.execute(_GET_SUBMISSION, (submission_id,)).fetchone()
    return None if row is None else ROWS.submission_from_row(row)


def _existing(conn: sqlite3.Connection, submission_ids: list[str]) -> set[str]:
    # One placeholder per id: at most MAX_EXISTING_IDS (1,000), within the limit of
    # SQLite 3.32 and later (32,766). Only placeholders are formatted in, never a value.
    query = _EXISTING.format(", ".join("?" * len(submission_ids)))
    return {row["submission_id"] for row in conn.execute(query, submission_ids)}


def _page(
    conn: sqlite3.Connection,
    form_id: str,
    status: SubmissionStatus | None,
    after: str,
    limit: int,
) -> list[Submission]:
    rows = (
        conn.execute(_PAGE, (form_id, after, limit))
        if status is None
        else conn.execute(_PAGE_WITH_STATUS, (form_id, status.value, after, limit))
    )
    return [ROWS.submission_from_row(row) for row in rows]


def _outbox(conn: sqlite3.Connection, limit: int) -> list[OutboxRow]:
    return [ROWS.outbox_row_from_row(row) for row in conn.execute(_OUTBOX, (limit,))]


def _purge_batch(conn: sqlite3.Connection, query: str, cutoff: datetime, limit: int) -> int:
    with transaction(conn):
        return conn.execute(query, {"cutoff": m.time_text(cutoff), "limit": limit}).rowcount


class SqliteSubmissions:
    def __init__(self, worker: Worker, wakeup: Wakeup) -> None:
        self._worker = worker
        self._wakeup = wakeup

    async def commit(self, plan: CommitPlan) -> CommitResult:
        result = await self._worker.run(_commit, plan)
        if isinstance(result, Committed):
            self._wakeup.ring()  # a relay of this process need not wait for its poll
        return result

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult:
        return await self._worker.run(_record_honeypot, hit)

    async def honeypot_hits(self, form_id: str) -> dict[str, int]:
        return await self._worker.run(_honeypot_hits, form_id)

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        return await self._worker.run(_claim_alone, record)

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None:
        return await self._worker.run(_find_idempotency, scope, key, not_before)

    async def get(self, submission_id: str) -> Submission | None:
        return await self._worker.run(_get_submission, submission_id)

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        wanted = existing_query_ids(submission_ids)
        if not wanted:
            return set()
        return await self._worker.run(_existing, wanted)

    async def iterate(
        self,
        form_id: str,
        status: SubmissionStatus | None = None,
        *,
        batch_size: int = 500,
    ) -> AsyncIterator[Submission]:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        after = ""  # sorts before every id
        while True:
            batch = await self._worker.run(_page, form_id, status, after, batch_size)
            for submission in batch:
                yield submission
            if len(batch) < batch_size:
                return
            after = batch[-1].submission_id

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return await self._worker.run(_outbox, limit)

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        cutoffs = PurgeCutoffs.at(now, outbox_retention, batch_size)
        return PurgeCounts(
            idempotency=await self._purge(_PURGE_IDEMPOTENCY, cutoffs.idempotency, batch_size),
            outbox=await self._purge(_PURGE_OUTBOX, cutoffs.outbox, batch_size),
        )

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await self._worker.run(file_storage.erase_flagged, created_before, limit)

    async def _purge(self, query: str, cutoff: datetime, batch_size: int) -> int:
        """One batch per hop to the worker, so this process's submissions are served
        between them, and another process waits for the write lock one batch at most.
        A short batch means none was left (another purge may have taken some)."""
        total = 0
        while True:
            deleted = await self._worker.run(_purge_batch, query, cutoff, batch_size)
            total += deleted
            if deleted < batch_size:
                return total
