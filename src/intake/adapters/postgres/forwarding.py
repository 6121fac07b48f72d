"""Forward-only submissions erased once forwarded, over PostgreSQL (forward_statements.py
says when). Apart from the fan-out's part, which queues them."""

from __future__ import annotations

from intake.adapters import forward_statements as forward_sql
from intake.adapters import triage_statements as triage_sql
from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Database
from intake.adapters.sql_statements import for_psycopg
from intake.domain.triage import erased_payload
from intake.domain.uploads import files_from_json
from intake.ports.submissions import ErasedBatch

# SKIP LOCKED: what another relay is erasing is its own.
_READY = for_psycopg(forward_sql.READY) + " FOR UPDATE OF q SKIP LOCKED"
_BLANK_SUBMISSION = for_psycopg(forward_sql.BLANK_SUBMISSION)
_DEQUEUE = for_psycopg(forward_sql.DEQUEUE)
_SUBMISSION_EVENTS = for_psycopg(triage_sql.SUBMISSION_EVENTS)
_SET_PAYLOAD = "UPDATE outbox SET payload = %s::json WHERE event_id = %s"
_GIVE_BACK_STORAGE = """
    UPDATE workspace_storage SET bytes = greatest(bytes - %s, 0) WHERE workspace_id = %s
"""


async def erase_forwarded(db: Database, limit: int) -> ErasedBatch:
    """Up to `limit` forwarded submissions of forward-only forms erased, one
    transaction (SubmissionRepository.erase_forwarded)."""
    async with db.connection() as conn, conn.transaction():
        cursor = await conn.execute(_READY, (limit,))
        rows = await cursor.fetchall()
        file_keys: list[str] = []
        for row in rows:
            submission_id = row["submission_id"]
            files = files_from_json(row["files"])
            cursor = await conn.execute(_SUBMISSION_EVENTS, (submission_id,))
            for event in await cursor.fetchall():
                blank = mapping.ROW_MAPPER.codec.json(erased_payload(event["payload"]))
                await conn.execute(_SET_PAYLOAD, (blank, event["event_id"]))
            await conn.execute(_BLANK_SUBMISSION, (submission_id,))
            await conn.execute(_DEQUEUE, (submission_id,))
            freed = sum(f.size for f in files)
            if freed:
                await conn.execute(_GIVE_BACK_STORAGE, (freed, row["workspace_id"]))
            file_keys.extend(f.key for f in files)
    return ErasedBatch(tuple(row["submission_id"] for row in rows), tuple(file_keys))
