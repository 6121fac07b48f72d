"""What a workspace's files take, in SQLite: the count the commit charges against the
storage ceiling, and the erasing of old spam and unverified submissions that gives it
back (migrations/0006_storage_ceiling.sql). Functions run on the worker thread, as the
repositories'."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from intake.adapters import sql_statements as sql
from intake.adapters import triage_statements as triage_sql
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction, truncate_wal
from intake.domain.triage import key_scopes
from intake.domain.uploads import files_from_json
from intake.ports.submissions import CommitPlan, ErasedBatch

# Adds the files' bytes unless that would pass the ceiling (NULL: none). Under the write
# lock the commit holds, so concurrent commits count one after another.
_CHARGE = """
    INSERT INTO workspace_storage (workspace_id, bytes)
    SELECT :workspace_id, :bytes WHERE :ceiling IS NULL OR :bytes <= :ceiling
    ON CONFLICT (workspace_id) DO UPDATE SET bytes = workspace_storage.bytes + excluded.bytes
    WHERE :ceiling IS NULL OR workspace_storage.bytes + excluded.bytes <= :ceiling
"""
# The oldest spam and unverified submissions up to the cutoff (the partial index
# submissions_flagged), but for one whose event is still on its way: an outbox row
# unpublished, or a delivery not delivered (pending, or dead and waiting for `intake
# outbox retry`). The outbox rows are found by outbox_submission.
_FLAGGED_HEAD = """
    SELECT s.submission_id, s.workspace_id, s.files FROM submissions AS s
    WHERE s.status IN ('spam', 'unverified') AND s.created_at <= :cutoff
        AND NOT """
_FLAGGED_TAIL = """
    ORDER BY s.created_at, s.submission_id LIMIT :limit
"""
_FLAGGED = _FLAGGED_HEAD + sql.EVENT_UNDER_WAY + _FLAGGED_TAIL
# A form's retention: its oldest submissions up to the cutoff, a range of
# submissions_form_created, but for one whose event is still on its way, as above.
_EXPIRED_HEAD = """
    SELECT s.submission_id, s.workspace_id, s.files FROM submissions AS s
    WHERE s.form_id = :form_id AND s.created_at <= :cutoff
        AND NOT """
_EXPIRED = _EXPIRED_HEAD + sql.EVENT_UNDER_WAY + _FLAGGED_TAIL
# Their deliveries go with the rows (ON DELETE CASCADE).
_DELETE_EVENTS = "DELETE FROM outbox WHERE submission_id = ?"
_DELETE_SUBMISSION = "DELETE FROM submissions WHERE submission_id = ?"
_RELEASE = """
    UPDATE workspace_storage SET bytes = max(bytes - :bytes, 0)
    WHERE workspace_id = :workspace_id
"""


def charge_storage(conn: sqlite3.Connection, plan: CommitPlan) -> bool:
    """Counts the plan's files in its workspace's storage, inside the commit's
    transaction; False (nothing counted) when that would pass plan.storage_limit."""
    if not plan.file_bytes:
        return True
    params = {
        "workspace_id": plan.submission.workspace_id,
        "bytes": plan.file_bytes,
        "ceiling": plan.storage_limit,
    }
    return conn.execute(_CHARGE, params).rowcount > 0


def erase_flagged(conn: sqlite3.Connection, created_before: datetime, limit: int) -> ErasedBatch:
    """One batch, one transaction (SubmissionRepository.erase_flagged)."""
    return erase_chosen(
        conn, _FLAGGED, {"cutoff": mapping.time_text(created_before), "limit": limit}
    )


def erase_expired(
    conn: sqlite3.Connection, form_id: str, created_before: datetime, limit: int
) -> ErasedBatch:
    """One batch, one transaction (SubmissionRepository.erase_expired): the submissions'
    idempotency records go too."""
    params = {"form_id": form_id, "cutoff": mapping.time_text(created_before), "limit": limit}
    return erase_chosen(conn, _EXPIRED, params, key_form=form_id)


def erase_chosen(
    conn: sqlite3.Connection,
    query: str,
    params: dict[str, object],
    key_form: str | None = None,
) -> ErasedBatch:
    """Erases the submissions `query` chooses (submission_id, workspace_id, files) with
    their outbox rows, giving their files' bytes back: one transaction. `key_form`: the
    form whose idempotency records of them go too."""
    with transaction(conn):
        rows = conn.execute(query, params).fetchall()
        submission_ids: list[str] = []
        file_keys: list[str] = []
        for row in rows:
            if key_form is not None:
                _drop_keys(conn, key_form, row["submission_id"])
            files = files_from_json(mapping.ROW_MAPPER.codec.read_json(row["files"]))
            conn.execute(_DELETE_EVENTS, (row["submission_id"],))
            conn.execute(_DELETE_SUBMISSION, (row["submission_id"],))
            freed = sum(f.size for f in files)
            if freed:
                conn.execute(_RELEASE, {"workspace_id": row["workspace_id"], "bytes": freed})
            submission_ids.append(row["submission_id"])
            file_keys += [f.key for f in files]
    if submission_ids:
        truncate_wal(conn)
    return ErasedBatch(tuple(submission_ids), tuple(file_keys))


def _drop_keys(conn: sqlite3.Connection, form_id: str, submission_id: str) -> None:
    """A submission's idempotency records, sought by the primary key among its form's
    scopes (domain/triage.py's key_scopes)."""
    server, (public_from, public_to) = key_scopes(form_id)
    conn.execute(triage_sql.DROP_SERVER_KEYS, (server, submission_id))
    conn.execute(triage_sql.DROP_PUBLIC_KEYS, (public_from, public_to, submission_id))
