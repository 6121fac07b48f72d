"""The statements that erase forward-only submissions once forwarded, shared by the SQL
stores (`?` and `:name` placeholders; the PostgreSQL adapter converts them).

A submission queued in `forward_erasures` (by the fan-out) is ready when none of its
events waits for a fan-out and none of their deliveries is pending: each was delivered
or is dead. Its data, subject, reply address, client address, files and spam reasons
(which may quote its words) are then blanked, and its events' payloads too
(domain/triage.py's erased_payload); the row stays, with its status, times and quota
month, so counts, the quota and the idempotency record (which names the submission, not
its values) stay right."""

from __future__ import annotations

READY = """
    SELECT q.submission_id, s.workspace_id, s.files
    FROM forward_erasures AS q
    JOIN submissions AS s ON s.submission_id = q.submission_id
    WHERE NOT EXISTS (
            SELECT 1 FROM outbox AS o
            WHERE o.submission_id = q.submission_id AND o.published_at IS NULL
        )
        AND NOT EXISTS (
            SELECT 1 FROM outbox AS o JOIN deliveries AS d ON d.event_id = o.event_id
            WHERE o.submission_id = q.submission_id AND d.next_attempt_at IS NOT NULL
        )
    ORDER BY q.queued_at, q.submission_id
    LIMIT ?
"""
BLANK_SUBMISSION = """
    UPDATE submissions
    SET data = '{}', subject = NULL, reply_to = NULL, client_ip = NULL, files = '[]',
        spam_reasons = '[]'
    WHERE submission_id = ?
"""
DEQUEUE = "DELETE FROM forward_erasures WHERE submission_id = ?"
