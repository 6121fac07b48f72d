"""The submissions repository over one SQLite connection: the commit of a submission with
its outbox event, idempotency records, honeypot hits, and the reads. As in `repositories`,
each method sends one function to the worker thread."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Collection
from datetime import datetime, timedelta

from intake.adapters import sql_statements as sql
from intake.adapters.relay_wakeup import RelayWakeup
from intake.adapters.sql_rows import existing_query_ids
from intake.adapters.sqlite import file_storage, mapping, purge, triage
from intake.adapters.sqlite.connection import SEARCH_TEXT_FUNCTION, transaction
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker
from intake.adapters.submission_pages import Search, each_submission, page_statement
from intake.domain.errors import ErrorCode
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.listing import ALL, SubmissionFilter, SubmissionPage, SubmissionQuery
from intake.domain.model import FormMode, Submission
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
    QuotaCharge,
    QuotaReached,
    StorageFull,
)
from intake.ports.triage import Erased, Erasure, Release, Released

# The SQL is written out in full, with named parameters matching `mapping`'s params;
# what PostgreSQL sends too is in adapters/sql_statements.py, sent as written.

_INSERT_SUBMISSION = """
    INSERT INTO submissions (
        submission_id, form_id, workspace_id, status, data, subject, reply_to, spam_score,
        client_ip, created_at, files
    ) VALUES (
        :submission_id, :form_id, :workspace_id, :status, :data, :subject, :reply_to,
        :spam_score, :client_ip, :created_at, :files
    )
"""
_GET_SUBMISSION = sql.GET_SUBMISSION
# Seeks the primary key once per id; {} is the ids' placeholders.
_EXISTING = "SELECT submission_id FROM submissions WHERE submission_id IN ({})"
_INSERT_EVENT = sql.INSERT_EVENT
_OUTBOX = sql.OUTBOX
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
_FIND_IDEMPOTENCY = sql.FIND_IDEMPOTENCY
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
        accepting=ROW_MAPPER.codec.read_boolean(row["enabled"])
        and ROW_MAPPER.codec.read_boolean(row["active"]),
    )


def _commit(conn: sqlite3.Connection, plan: CommitPlan) -> CommitResult:
    """The form first (the write lock is held: it stays as read until the commit); the
    key next, so a retry gets its answer even when the month's quota is spent; then the
    count; then the rows. A refusal discards whatever was written before it."""
    with transaction(conn) as tx:
        if (refusal := _check_and_claim(conn, plan.check, plan.idempotency)) is not None:
            tx.discard()
            return refusal
        if plan.quota is not None and not _charge(conn, plan.quota):
            tx.discard()
            return QuotaReached()
        if not file_storage.charge_storage(conn, plan):
            tx.discard()  # the quota's count with the rest
            return StorageFull()
        conn.execute(_INSERT_SUBMISSION, ROW_MAPPER.submission_params(plan.submission))
        conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(plan.event))
    return Committed()


def _check_and_claim(
    conn: sqlite3.Connection, check: FormCheck | None, idempotency: IdempotencyRecord | None
) -> FormRefused | IdempotencyTaken | None:
    """What a commit and a honeypot's hit both do first: the form check, then the key's
    claim. The refusal, if any; the caller discards the transaction."""
    if check is not None and (refused := _form_refusal(conn, check)):
        return FormRefused(refused)
    if idempotency is not None and (holder := _claim_key(conn, idempotency)) is not None:
        return IdempotencyTaken(holder)
    return None


def _claim_key(conn: sqlite3.Connection, record: IdempotencyRecord) -> IdempotencyRecord | None:
    """Writes the record; if a live one holds the key already, returns that instead."""
    params = ROW_MAPPER.idempotency_params(record)
    try:
        conn.execute(_INSERT_IDEMPOTENCY, params)
    except sqlite3.IntegrityError:
        # The key is taken: not an error, the answer. Only the statement failed; the
        # transaction goes on.
        row = conn.execute(_GET_IDEMPOTENCY, (record.scope, record.key)).fetchone()
        if row is None:
            raise  # some other constraint: a real error
        holder = ROW_MAPPER.idempotency_from_row(row)
        if not holder.expired(record.created_at):
            return holder
        conn.execute(_REPLACE_IDEMPOTENCY, params)
    return None


def _record_honeypot(conn: sqlite3.Connection, hit: HoneypotHit) -> HoneypotResult:
    """As `_commit`, with the day's count in place of the quota and the rows: the same
    write lock, and a commit that reaches the disk as durably."""
    with transaction(conn) as tx:
        if (refusal := _check_and_claim(conn, hit.check, hit.idempotency)) is not None:
            tx.discard()
            return refusal
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
    row = conn.execute(_FIND_IDEMPOTENCY, (scope, key, mapping.time_text(not_before))).fetchone()
    return None if row is None else ROW_MAPPER.idempotency_from_row(row)


def _get_submission(conn: sqlite3.Connection, submission_id: str) -> Submission | None:
    row = conn.execute(_GET_SUBMISSION, (submission_id,)).fetchone()
    return None if row is None else ROW_MAPPER.submission_from_row(row)


def _existing(conn: sqlite3.Connection, submission_ids: list[str]) -> set[str]:
    # One placeholder per id: at most MAX_EXISTING_IDS (500), under the 999 parameters a
    # statement takes in SQLite before 3.32. Only placeholders are formatted in, never a
    # value.
    query = _EXISTING.format(", ".join("?" * len(submission_ids)))
    return {row["submission_id"] for row in conn.execute(query, submission_ids)}


# A scan of the form's rows in id order, the text of each looked for in Python's lower
# case (the connection's function): no index of its own, so nothing more is written per
# commit. docs/api.md, "Listing and search", says why.
_SEARCH = Search(f"instr({SEARCH_TEXT_FUNCTION}(data), ?) > 0", str.lower)


def _page(conn: sqlite3.Connection, query: SubmissionQuery) -> SubmissionPage:
    statement, params = page_statement(query, mapping.time_text, _SEARCH)
    rows = [ROW_MAPPER.submission_from_row(row) for row in conn.execute(statement, params)]
    return SubmissionPage(tuple(rows[: query.limit]), more=len(rows) > query.limit)


def _outbox(conn: sqlite3.Connection, limit: int) -> list[OutboxRow]:
    return [ROW_MAPPER.outbox_row_from_row(row) for row in conn.execute(_OUTBOX, (limit,))]


class SqliteSubmissions:
    def __init__(self, worker: Worker, wakeup: RelayWakeup) -> None:
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

    def iterate(
        self, form_id: str, chosen: SubmissionFilter = ALL, *, batch_size: int = 500
    ) -> AsyncIterator[Submission]:
        return each_submission(self.page, form_id, chosen, batch_size)

    async def page(self, query: SubmissionQuery) -> SubmissionPage:
        return await self._worker.run(_page, query)

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return await self._worker.run(_outbox, limit)

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        return await purge.purge_expired(self._worker, now, outbox_retention, batch_size)

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await self._worker.run(file_storage.erase_flagged, created_before, limit)

    async def release(self, release: Release) -> Released | None:
        released = await self._worker.run(triage.release, release)
        if released is not None and released.changed:
            self._wakeup.ring()
        return released

    async def mark_spam(self, submission_id: str) -> Submission | None:
        return await self._worker.run(triage.mark_spam, submission_id)

    async def erase(self, erasure: Erasure) -> Erased | None:
        erased = await self._worker.run(triage.erase, erasure)
        if erased is not None:
            self._wakeup.ring()
        return erased
