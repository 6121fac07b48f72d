"""An owner's triage in SQLite (SubmissionRepository.release, .mark_spam, .erase): each one
transaction under the write lock, the order's lesson taught in it (sqlite/spam.py).
Functions run on the worker thread, as the repositories'."""

from __future__ import annotations

import sqlite3

from intake.adapters import sql_statements as sql
from intake.adapters import triage_statements as triage_sql
from intake.adapters.sqlite import spam
from intake.adapters.sqlite.connection import transaction, truncate_wal
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.domain.model import OutboxEvent, Submission
from intake.domain.spam.model import Label, Lesson
from intake.domain.triage import erased_payload, key_scopes
from intake.domain.uploads import files_from_json
from intake.ports.triage import Erased, Erasure, Release, Released

_GET_SUBMISSION = sql.GET_SUBMISSION
_INSERT_EVENT = sql.INSERT_EVENT
# Never refused: the owner decided (management-api.md). The month's row is made if the
# month has none yet.
_CHARGE = """
    INSERT INTO monthly_usage (workspace_id, period, count) VALUES (?, ?, 1)
    ON CONFLICT (workspace_id, period) DO UPDATE SET count = monthly_usage.count + 1
"""
_SUBMISSION_FILES = """
    SELECT form_id, workspace_id, files, taught FROM submissions WHERE submission_id = ?
"""
_DROP_SUBMISSION = "DELETE FROM submissions WHERE submission_id = ?"
_GIVE_BACK_STORAGE = """
    UPDATE workspace_storage SET bytes = max(bytes - :bytes, 0)
    WHERE workspace_id = :workspace_id
"""


def _get(conn: sqlite3.Connection, submission_id: str) -> Submission | None:
    row = conn.execute(_GET_SUBMISSION, (submission_id,)).fetchone()
    return None if row is None else ROW_MAPPER.submission_from_row(row)


def release(conn: sqlite3.Connection, order: Release) -> Released | None:
    with transaction(conn) as tx:
        before = conn.execute(triage_sql.CHARGED_BEFORE, (order.submission_id,)).fetchone()
        if before is None:
            tx.discard()
            return None
        if order.lesson is not None:  # taught even when accepted already: idempotent
            spam.teach(conn, order.submission_id, before, order.lesson, Label.HAM)
        params = {"submission_id": order.submission_id, "period": order.period}
        changed = conn.execute(triage_sql.RELEASE, params).rowcount > 0
        submission = _get(conn, order.submission_id)
        if submission is None or not changed:
            return None if submission is None else Released(submission, changed=False)
        if order.report is not None:
            conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(order.report))
        if before["charged_period"] is not None:  # accepted once before: queued then
            return Released(submission, changed=True)
        conn.execute(_CHARGE, (submission.workspace_id, order.period))
        conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(order.event))
    return Released(submission, changed=True, queued=True)


def mark_spam(
    conn: sqlite3.Connection,
    submission_id: str,
    lesson: Lesson | None,
    report: OutboxEvent | None = None,
) -> Submission | None:
    with transaction(conn) as tx:
        if lesson is not None:
            row = conn.execute(triage_sql.TAUGHT_BEFORE, (submission_id,)).fetchone()
            if row is not None:
                spam.teach(conn, submission_id, row, lesson, Label.SPAM)
        conn.execute(triage_sql.MARK_SPAM, (submission_id,))
        marked = _get(conn, submission_id)
        if marked is None:
            tx.discard()
        elif report is not None:
            conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(report))
        return marked


def erase(conn: sqlite3.Connection, order: Erasure) -> Erased | None:
    """The events' data first, then what goes, then the deletion's event: one transaction,
    so a relay never reads the rows half-erased."""
    with transaction(conn) as tx:
        row = conn.execute(_SUBMISSION_FILES, (order.submission_id,)).fetchone()
        if row is None:
            tx.discard()
            return None
        if order.lesson is not None:  # unlearns what it taught, before the row goes
            spam.teach(conn, order.submission_id, row, order.lesson, None)
        files = files_from_json(ROW_MAPPER.codec.read_json(row["files"]))
        for event in conn.execute(triage_sql.SUBMISSION_EVENTS, (order.submission_id,)).fetchall():
            blank = erased_payload(ROW_MAPPER.codec.read_json(event["payload"]))
            conn.execute(triage_sql.SET_PAYLOAD, (ROW_MAPPER.codec.json(blank), event["event_id"]))
        conn.execute(triage_sql.DROP_UNDELIVERED, (order.submission_id,))
        server, (public_from, public_to) = key_scopes(row["form_id"])
        conn.execute(triage_sql.DROP_SERVER_KEYS, (server, order.submission_id))
        conn.execute(triage_sql.DROP_PUBLIC_KEYS, (public_from, public_to, order.submission_id))
        conn.execute(_DROP_SUBMISSION, (order.submission_id,))
        freed = sum(f.size for f in files)
        if freed:
            conn.execute(_GIVE_BACK_STORAGE, {"workspace_id": row["workspace_id"], "bytes": freed})
        conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(order.event))
    truncate_wal(conn)
    return Erased(tuple(f.key for f in files))
