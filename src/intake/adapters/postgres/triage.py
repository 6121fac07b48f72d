"""An owner's triage in PostgreSQL (SubmissionRepository.release, .mark_spam, .erase):
each one transaction on one connection of the pool, the order's lesson taught last in it
(postgres/spam.py: the instance's statistics row is held for the least time).
intake_commit is left as it is: a release counts its month on the quota's shards (0004)
by a statement of its own."""

from __future__ import annotations

from intake.adapters import sql_statements as sql
from intake.adapters import triage_statements as triage_sql
from intake.adapters.postgres import spam
from intake.adapters.postgres.database import Connection, Database
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.sql_statements import for_psycopg
from intake.domain.model import OutboxEvent, Submission
from intake.domain.spam.model import Label, Lesson
from intake.domain.triage import erased_payload, key_scopes
from intake.domain.uploads import files_from_json
from intake.ports.triage import Erased, Erasure, Release, Released

_GET_SUBMISSION = for_psycopg(sql.GET_SUBMISSION)
_CHARGED_BEFORE = for_psycopg(triage_sql.CHARGED_BEFORE) + " FOR UPDATE"
_RELEASE = for_psycopg(triage_sql.RELEASE) + " RETURNING workspace_id"
_MARK_SPAM = for_psycopg(triage_sql.MARK_SPAM)
_TAUGHT_BEFORE = for_psycopg(triage_sql.TAUGHT_BEFORE) + " FOR UPDATE"
# Locked: a fan-out that holds one is waited for, so its deliveries are seen (and
# dropped) by the statements after this one, each of which reads afresh.
_SUBMISSION_EVENTS = for_psycopg(triage_sql.SUBMISSION_EVENTS) + " FOR UPDATE"
_SET_PAYLOAD = "UPDATE outbox SET payload = %s::json WHERE event_id = %s"
_DROP_UNDELIVERED = for_psycopg(triage_sql.DROP_UNDELIVERED)
_DROP_SERVER_KEYS = for_psycopg(triage_sql.DROP_SERVER_KEYS)
_DROP_PUBLIC_KEYS = for_psycopg(triage_sql.DROP_PUBLIC_KEYS)
# Never refused for quota: the owner decided. On shard 0 of the month (made here if the
# month has no row yet): one more in flight on a shard, as a commit's is, so the
# commits' reasoning about the ceiling (0004) holds beside it.
_CHARGE = """
    INSERT INTO monthly_usage_shards AS m (workspace_id, period, shard, count)
    VALUES (%s, %s, 0, 1)
    ON CONFLICT (workspace_id, period, shard) DO UPDATE SET count = m.count + 1
"""
_INSERT_EVENT = for_psycopg(sql.INSERT_EVENT)
# The row goes first: a release or another erasure of it waits, then finds nothing.
_DROP_SUBMISSION = """
    DELETE FROM submissions WHERE submission_id = %s
    RETURNING form_id, workspace_id, files, taught
"""
_GIVE_BACK_STORAGE = """
    UPDATE workspace_storage SET bytes = greatest(bytes - %(bytes)s, 0)
    WHERE workspace_id = %(workspace_id)s
"""


async def _get(conn: Connection, submission_id: str) -> Submission | None:
    cursor = await conn.execute(_GET_SUBMISSION, (submission_id,))
    row = await cursor.fetchone()
    return None if row is None else ROW_MAPPER.submission_from_row(row)


async def release(db: Database, order: Release) -> Released | None:
    params = {"submission_id": order.submission_id, "period": order.period}
    async with db.connection() as conn, conn.transaction():
        cursor = await conn.execute(_CHARGED_BEFORE, (order.submission_id,))
        before = await cursor.fetchone()
        cursor = await conn.execute(_RELEASE, params)
        changed = await cursor.fetchone()
        # Charged already: accepted once before, and its submission.created queued then.
        queued = changed is not None and before is not None and before["charged_period"] is None
        if changed is not None and order.report is not None:
            await conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(order.report))
        if queued and changed is not None:
            await conn.execute(_CHARGE, (changed["workspace_id"], order.period))
            await conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(order.event))
        if order.lesson is not None and before is not None:  # even when accepted already
            await spam.teach(conn, order.submission_id, before, order.lesson, Label.HAM)
        submission = await _get(conn, order.submission_id)
    if submission is None:
        return None
    return Released(submission, changed=changed is not None, queued=queued)


async def mark_spam(
    db: Database,
    submission_id: str,
    lesson: Lesson | None,
    report: OutboxEvent | None = None,
) -> Submission | None:
    async with db.connection() as conn, conn.transaction():
        before = None
        if lesson is not None:
            before = await (await conn.execute(_TAUGHT_BEFORE, (submission_id,))).fetchone()
        await conn.execute(_MARK_SPAM, (submission_id,))
        if lesson is not None and before is not None:
            await spam.teach(conn, submission_id, before, lesson, Label.SPAM)
        marked = await _get(conn, submission_id)
        if marked is not None and report is not None:
            await conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(report))
        return marked


async def erase(db: Database, order: Erasure) -> Erased | None:
    async with db.connection() as conn, conn.transaction():
        cursor = await conn.execute(_DROP_SUBMISSION, (order.submission_id,))
        gone = await cursor.fetchone()
        if gone is None:
            return None
        cursor = await conn.execute(_SUBMISSION_EVENTS, (order.submission_id,))
        for event in await cursor.fetchall():
            blank = ROW_MAPPER.codec.json(erased_payload(event["payload"]))
            await conn.execute(_SET_PAYLOAD, (blank, event["event_id"]))
        await conn.execute(_DROP_UNDELIVERED, (order.submission_id,))
        server, (public_from, public_to) = key_scopes(gone["form_id"])
        await conn.execute(_DROP_SERVER_KEYS, (server, order.submission_id))
        await conn.execute(_DROP_PUBLIC_KEYS, (public_from, public_to, order.submission_id))
        files = files_from_json(gone["files"])
        freed = sum(f.size for f in files)
        if freed:
            params = {"workspace_id": gone["workspace_id"], "bytes": freed}
            await conn.execute(_GIVE_BACK_STORAGE, params)
        await conn.execute(_INSERT_EVENT, ROW_MAPPER.event_params(order.event))
        if order.lesson is not None:  # unlearns what it taught
            await spam.teach(conn, order.submission_id, gone, order.lesson, None)
    return Erased(tuple(f.key for f in files))
