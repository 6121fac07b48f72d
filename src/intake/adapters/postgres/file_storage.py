"""What a workspace's files take, in PostgreSQL: the count intake_commit charges against
the storage ceiling (migrations/0008_storage_ceiling.sql), and the erasing of old spam
and unverified submissions that gives it back."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from intake.adapters import sql_statements as sql
from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Database
from intake.domain.triage import key_scopes
from intake.domain.uploads import files_from_json
from intake.ports.submissions import ErasedBatch

# One batch in one statement, so one transaction (autocommit). The oldest spam and
# unverified submissions up to the cutoff (the partial index submissions_flagged), but
# for one whose event is still on its way: an outbox row unpublished, or a delivery not
# delivered (pending, or dead and waiting for `intake outbox retry`); a fan-out
# publishes a row and makes its deliveries in one transaction, so none appears later.
# SKIP LOCKED: two erases at once take each submission once, and neither waits. The
# rows' deliveries go with them (ON DELETE CASCADE); the bytes of their files are given
# back to each workspace in one update.
_ERASE_FLAGGED_HEAD = """
    WITH doomed AS (
        SELECT s.submission_id FROM submissions AS s
        WHERE s.status IN ('spam', 'unverified') AND s.created_at <= %(cutoff)s
            AND NOT """
ERASE_LOCK = """
        ORDER BY s.created_at, s.submission_id
        LIMIT %(limit)s
        FOR UPDATE OF s SKIP LOCKED
    ),"""
ERASE_REST = """
    events AS (
        DELETE FROM outbox AS o USING doomed
        WHERE o.submission_id = doomed.submission_id
    ),
    gone AS (
        DELETE FROM submissions AS s USING doomed
        WHERE s.submission_id = doomed.submission_id
        RETURNING s.submission_id, s.workspace_id, s.created_at, s.files
    ),
    freed AS (
        UPDATE workspace_storage AS w SET bytes = greatest(w.bytes - f.bytes, 0)
        FROM (
            SELECT gone.workspace_id, sum((e.value ->> 'size')::bigint) AS bytes
            FROM gone, jsonb_array_elements(gone.files) AS e
            GROUP BY gone.workspace_id
        ) AS f
        WHERE w.workspace_id = f.workspace_id
    )
    SELECT submission_id, files FROM gone ORDER BY created_at, submission_id
"""
ERASE_TAIL = ERASE_LOCK + ERASE_REST
_ERASE_FLAGGED = _ERASE_FLAGGED_HEAD + sql.EVENT_UNDER_WAY + ERASE_TAIL


# A form's retention, in one statement as above: the form's oldest submissions up to the
# cutoff, a range of submissions_form_created (0016), but for one whose event is still on
# its way. Their idempotency records go too, sought among the form's scopes by the
# primary key (domain/triage.py's key_scopes): a retry after the erasure is a new
# submission.
_EXPIRED_HEAD = """
    WITH doomed AS (
        SELECT s.submission_id FROM submissions AS s
        WHERE s.form_id = %(form_id)s AND s.created_at <= %(cutoff)s
            AND NOT """
_EXPIRED_KEYS = """
    keys AS (
        DELETE FROM idempotency AS i USING doomed
        WHERE i.submission_id = doomed.submission_id
            AND (i.scope = %(server_scope)s
                OR (i.scope >= %(public_from)s AND i.scope < %(public_to)s))
    ),"""
_ERASE_EXPIRED = _EXPIRED_HEAD + sql.EVENT_UNDER_WAY + ERASE_LOCK + _EXPIRED_KEYS + ERASE_REST


async def erase_flagged(db: Database, created_before: datetime, limit: int) -> ErasedBatch:
    if limit < 1:
        raise ValueError("limit must be at least 1")
    params = {"cutoff": mapping.moment(created_before), "limit": limit}
    return await erase_chosen(db, _ERASE_FLAGGED, params)


async def erase_expired(
    db: Database, form_id: str, created_before: datetime, limit: int
) -> ErasedBatch:
    server, (public_from, public_to) = key_scopes(form_id)
    params = {
        "form_id": form_id,
        "cutoff": mapping.moment(created_before),
        "limit": limit,
        "server_scope": server,
        "public_from": public_from,
        "public_to": public_to,
    }
    return await erase_chosen(db, _ERASE_EXPIRED, params)


async def erase_chosen(db: Database, query: str, params: Mapping[str, object]) -> ErasedBatch:
    """Runs one erasing statement ending in ERASE_TAIL: one batch, one transaction."""
    rows = await db.fetch_all(query, params)
    files = [stored for row in rows for stored in files_from_json(row["files"])]
    return ErasedBatch(tuple(row["submission_id"] for row in rows), tuple(f.key for f in files))
