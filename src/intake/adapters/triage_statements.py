"""The SQL of an owner's triage (release, mark spam, erase) that SQLite and PostgreSQL
send alike, written as SQLite takes it; PostgreSQL's module renders it for psycopg
(`sql_statements.for_psycopg`)."""

from __future__ import annotations

# Read first, under the row's lock (PostgreSQL) or the write lock (SQLite): a submission
# charged already was accepted once, and its `submission.created` queued then; what it
# teaches, for the release's lesson.
CHARGED_BEFORE = """
    SELECT charged_period, workspace_id, taught FROM submissions WHERE submission_id = ?
"""
# What a submission teaches, read under the same locks before its lesson is taught.
TAUGHT_BEFORE = "SELECT workspace_id, taught FROM submissions WHERE submission_id = ?"
# The conditional update is what makes concurrent releases queue one event: only the
# first finds the row not yet accepted; the others wait for its lock (PostgreSQL) or the
# write lock (SQLite), then change nothing. A month charged already stays charged.
RELEASE = """
    UPDATE submissions SET status = 'accepted',
        charged_period = coalesce(charged_period, :period)
    WHERE submission_id = :submission_id AND status <> 'accepted'
"""
MARK_SPAM = "UPDATE submissions SET status = 'spam' WHERE submission_id = ?"
# A submission's events (the outbox_submission index), to blank what they carry.
SUBMISSION_EVENTS = "SELECT event_id, payload FROM outbox WHERE submission_id = ?"
SET_PAYLOAD = "UPDATE outbox SET payload = ? WHERE event_id = ?"
# Its deliveries not delivered, pending or dead: none is sent after the erasure. Their
# attempts go with them (ON DELETE CASCADE). The delivered stay, as history: they hold
# no submitted value.
DROP_UNDELIVERED = """
    DELETE FROM deliveries
    WHERE event_id IN (SELECT event_id FROM outbox WHERE submission_id = ?)
        AND state <> 'delivered'
"""
# Its idempotency records, sought by the primary key among its form's scopes
# (domain/triage.py's key_scopes), never by a scan of every record.
DROP_SERVER_KEYS = "DELETE FROM idempotency WHERE scope = ? AND submission_id = ?"
DROP_PUBLIC_KEYS = """
    DELETE FROM idempotency WHERE scope >= ? AND scope < ? AND submission_id = ?
"""
# Bytes of files given back to a workspace's storage use, never below zero.
GIVE_BACK_STORAGE = """
    UPDATE workspace_storage
    SET bytes = CASE WHEN bytes > :bytes THEN bytes - :bytes ELSE 0 END
    WHERE workspace_id = :workspace_id
"""
