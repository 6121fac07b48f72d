"""Forward-only submissions erased once forwarded, over SQLite (forward_statements.py
says when). Apart from the fan-out's part, which queues them: `intake purge` and the
relay erase without loading the autoresponder's rules."""

from __future__ import annotations

import sqlite3

from intake.adapters import forward_statements as forward_sql
from intake.adapters import triage_statements as triage_sql
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction, truncate_wal
from intake.domain.triage import erased_payload
from intake.domain.uploads import files_from_json
from intake.ports.submissions import ErasedBatch

_GIVE_BACK_STORAGE = """
    UPDATE workspace_storage SET bytes = max(bytes - ?, 0) WHERE workspace_id = ?
"""


def erase_forwarded(conn: sqlite3.Connection, limit: int) -> ErasedBatch:
    """Up to `limit` forwarded submissions of forward-only forms erased, one
    transaction (SubmissionRepository.erase_forwarded)."""
    codec = mapping.ROW_MAPPER.codec
    with transaction(conn):
        rows = conn.execute(forward_sql.READY, (limit,)).fetchall()
        file_keys: list[str] = []
        for row in rows:
            submission_id = row["submission_id"]
            files = files_from_json(codec.read_json(row["files"]))
            for event in conn.execute(triage_sql.SUBMISSION_EVENTS, (submission_id,)).fetchall():
                blank = erased_payload(codec.read_json(event["payload"]))
                conn.execute(triage_sql.SET_PAYLOAD, (codec.json(blank), event["event_id"]))
            conn.execute(forward_sql.BLANK_SUBMISSION, (submission_id,))
            conn.execute(forward_sql.DEQUEUE, (submission_id,))
            freed = sum(f.size for f in files)
            if freed:
                conn.execute(_GIVE_BACK_STORAGE, (freed, row["workspace_id"]))
            file_keys.extend(f.key for f in files)
    if rows:
        truncate_wal(conn)
    return ErasedBatch(tuple(row["submission_id"] for row in rows), tuple(file_keys))
