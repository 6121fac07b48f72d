"""The writes of the submissions repository on the worker thread: a batch of commits in
one transaction, a honeypot's hit. Each checks the form and claims the key first, under
the write lock that BEGIN IMMEDIATE takes."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from intake.adapters import sql_statements as sql
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.errors import map_sqlite_errors
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.domain.errors import ErrorCode, StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import FormMode
from intake.ports.submissions import (
    CommitPlan,
    CommitResult,
    Committed,
    FormCheck,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
    IdempotencyTaken,
    QuotaCharge,
    QuotaReached,
    StorageFull,
)

# The SQL is written out in full, with named parameters matching `mapping`'s params.

INSERT_SUBMISSION = """
    INSERT INTO submissions (
        submission_id, form_id, workspace_id, status, data, subject, reply_to, spam_score,
        client_ip, created_at, files, spam_reasons
    ) VALUES (
        :submission_id, :form_id, :workspace_id, :status, :data, :subject, :reply_to,
        :spam_score, :client_ip, :created_at, :files, :spam_reasons
    )
"""
_INSERT_EVENT = sql.INSERT_EVENT
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
# Counts one only below the ceiling: no row changes at the ceiling. The SELECT's WHERE
# keeps a zero ceiling from creating the month's row with a count of one.
_CHARGE_QUOTA = """
    INSERT INTO monthly_usage (workspace_id, period, count)
    SELECT :workspace_id, :period, 1 WHERE :ceiling > 0
    ON CONFLICT (workspace_id, period)
    DO UPDATE SET count = monthly_usage.count + 1 WHERE monthly_usage.count < :ceiling
"""
# Adds the files' bytes unless that would pass the workspace's ceiling (NULL: none).
# Under the write lock the commit holds, so concurrent commits count one after another.
_CHARGE_STORAGE = """
    INSERT INTO workspace_storage (workspace_id, bytes)
    SELECT :workspace_id, :bytes WHERE :ceiling IS NULL OR :bytes <= :ceiling
    ON CONFLICT (workspace_id) DO UPDATE SET bytes = workspace_storage.bytes + excluded.bytes
    WHERE :ceiling IS NULL OR workspace_storage.bytes + excluded.bytes <= :ceiling
"""
_COUNT_HONEYPOT = """
    INSERT INTO honeypot_hits (form_id, day, count) VALUES (?, ?, 1)
    ON CONFLICT (form_id, day) DO UPDATE SET count = honeypot_hits.count + 1
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
        accepting=ROW_MAPPER.codec.read_boolean(row["enabled"])
        and ROW_MAPPER.codec.read_boolean(row["active"]),
    )


def commit_batch(
    conn: sqlite3.Connection, plans: Sequence[CommitPlan]
) -> list[CommitResult | StorageUnavailable]:
    """One transaction, and one flush to disk, for the commits that queued up together.
    Each has a savepoint of its own: one refused, or failed by its own statement (a broken
    constraint), leaves the others as they are, and those after it see those before it.
    A failure of the transaction itself (the disk) fails them all."""
    with transaction(conn):
        return [_commit_in_savepoint(conn, plan) for plan in plans]


def _commit_in_savepoint(
    conn: sqlite3.Connection, plan: CommitPlan
) -> CommitResult | StorageUnavailable:
    conn.execute("SAVEPOINT one_commit")
    try:
        with map_sqlite_errors():
            result: CommitResult | StorageUnavailable = _commit(conn, plan)
    except StorageUnavailable as error:
        result = error
    if not isinstance(result, Committed):
        # Fails, and so fails the batch, if the error took the transaction with it.
        conn.execute("ROLLBACK TO one_commit")
    conn.execute("RELEASE one_commit")
    return result


def _commit(conn: sqlite3.Connection, plan: CommitPlan) -> CommitResult:
    """The form first (the write lock is held: it stays as read until the commit); the
    key next, so a retry gets its answer even when the month's quota is spent; then the
    count; then the rows. The caller discards what a refusal wrote before it."""
    if (refusal := _check_and_claim(conn, plan.check, plan.idempotency)) is not None:
        return refusal
    if plan.quota is not None and not _charge(conn, plan.quota):
        return QuotaReached()
    if not _charge_storage(conn, plan):
        return StorageFull()  # the quota's count is discarded with the rest
    conn.execute(INSERT_SUBMISSION, ROW_MAPPER.submission_params(plan.submission))
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


def record_honeypot(conn: sqlite3.Connection, hit: HoneypotHit) -> HoneypotResult:
    """As `_commit`, with the day's count in place of the quota and the rows: the same
    write lock, and a commit that reaches the disk as durably."""
    with transaction(conn) as tx:
        if (refusal := _check_and_claim(conn, hit.check, hit.idempotency)) is not None:
            tx.discard()
            return refusal
        conn.execute(_COUNT_HONEYPOT, (hit.form_id, hit.day))
    return Committed()


def _charge(conn: sqlite3.Connection, quota: QuotaCharge) -> bool:
    params = {"workspace_id": quota.workspace_id, "period": quota.period, "ceiling": quota.ceiling}
    return conn.execute(_CHARGE_QUOTA, params).rowcount > 0


def _charge_storage(conn: sqlite3.Connection, plan: CommitPlan) -> bool:
    """Counts the plan's files in its workspace's storage; False (nothing counted) when
    that would pass plan.storage_limit."""
    if not plan.file_bytes:
        return True
    params = {
        "workspace_id": plan.submission.workspace_id,
        "bytes": plan.file_bytes,
        "ceiling": plan.storage_limit,
    }
    return conn.execute(_CHARGE_STORAGE, params).rowcount > 0
