"""An owner's triage (SubmissionRepository.release, .mark_spam, .erase): each one
transaction, the order's lesson taught last in it (sql/spam.py's SpamTeaching), so that
the instance's statistics row, which every teaching locks on PostgreSQL, is held for the
least time. The submission's row is locked first: on PostgreSQL by `FOR UPDATE` (or the
erasure's DELETE), on SQLite by the write lock the transaction holds from its start. A
release counts its month by the store's own statement (dialect.CHARGE: on PostgreSQL, on
the quota's shards, beside intake_commit's counting)."""

from __future__ import annotations

from intake.adapters import sql_statements as sql
from intake.adapters import triage_statements as triage_sql
from intake.adapters.sql.executor import Executor, Transaction
from intake.adapters.sql.spam import SpamTeaching
from intake.domain.model import OutboxEvent, Submission
from intake.domain.spam.model import Label, Lesson
from intake.domain.triage import erased_payload, key_scopes
from intake.domain.uploads import files_from_json
from intake.ports.triage import Erased, Erasure, Release, Released

# The row goes first: a release or another erasure of it waits, then finds nothing.
_DROP_SUBMISSION = """
    DELETE FROM submissions WHERE submission_id = ?
    RETURNING form_id, workspace_id, files, taught
"""


class SqlTriage:
    def __init__(self, ex: Executor, charge: str, teaching: SpamTeaching) -> None:
        """`charge`: one more submission in the month (`?` workspace, `?` period), never
        refused, the month's row made if it has none."""
        self._ex = ex
        self._charge = charge
        self._teaching = teaching

    async def release(self, order: Release) -> Released | None:
        return await self._ex.transaction(self._release, order)

    async def _release(self, tx: Transaction, order: Release) -> Released | None:
        params = {"submission_id": order.submission_id, "period": order.period}
        before = await tx.fetch_one(_locked(tx, triage_sql.CHARGED_BEFORE), (order.submission_id,))
        if before is None:
            tx.discard()
            return None
        changed = await tx.execute(triage_sql.RELEASE, params) > 0
        # Charged already: accepted once before, and its submission.created queued then.
        queued = changed and before["charged_period"] is None
        if changed and order.report is not None:
            await self._insert_event(tx, order.report)
        if queued:
            await tx.execute(self._charge, (before["workspace_id"], order.period))
            await self._insert_event(tx, order.event)
        if order.lesson is not None:  # even when accepted already: idempotent
            await self._teaching.teach(tx, order.submission_id, before, order.lesson, Label.HAM)
        submission = await _get(tx, order.submission_id)
        return None if submission is None else Released(submission, changed=changed, queued=queued)

    async def mark_spam(
        self, submission_id: str, lesson: Lesson | None, report: OutboxEvent | None = None
    ) -> Submission | None:
        return await self._ex.transaction(self._mark_spam, submission_id, lesson, report)

    async def _mark_spam(
        self, tx: Transaction, submission_id: str, lesson: Lesson | None, report: OutboxEvent | None
    ) -> Submission | None:
        before = None
        if lesson is not None:
            before = await tx.fetch_one(_locked(tx, triage_sql.TAUGHT_BEFORE), (submission_id,))
        await tx.execute(triage_sql.MARK_SPAM, (submission_id,))
        if lesson is not None and before is not None:
            await self._teaching.teach(tx, submission_id, before, lesson, Label.SPAM)
        marked = await _get(tx, submission_id)
        if marked is None:
            tx.discard()
        elif report is not None:
            await self._insert_event(tx, report)
        return marked

    async def erase(self, order: Erasure) -> Erased | None:
        """The events' data blanked, what goes dropped and the deletion's event queued in
        one transaction, so a relay never reads the rows half-erased."""
        erased = await self._ex.transaction(self._erase, order)
        if erased is not None:
            await self._ex.forget_erased()
        return erased

    async def _erase(self, tx: Transaction, order: Erasure) -> Erased | None:
        submission_id = order.submission_id
        codec = tx.rows.codec
        gone = await tx.fetch_one(_DROP_SUBMISSION, (submission_id,))
        if gone is None:
            return None
        # Locked on PostgreSQL: a fan-out that holds one is waited for, so its
        # deliveries are seen (and dropped) by the statements after this one.
        events = await tx.fetch_all(_locked(tx, triage_sql.SUBMISSION_EVENTS), (submission_id,))
        blanks = [
            (codec.json(erased_payload(codec.read_json(event["payload"]))), event["event_id"])
            for event in events
        ]
        await tx.execute_many(triage_sql.SET_PAYLOAD, blanks)
        await tx.execute(triage_sql.DROP_UNDELIVERED, (submission_id,))
        server, (public_from, public_to) = key_scopes(gone["form_id"])
        await tx.execute(triage_sql.DROP_SERVER_KEYS, (server, submission_id))
        await tx.execute(triage_sql.DROP_PUBLIC_KEYS, (public_from, public_to, submission_id))
        files = files_from_json(codec.read_json(gone["files"]))
        freed = sum(f.size for f in files)
        if freed:
            params = {"workspace_id": gone["workspace_id"], "bytes": freed}
            await tx.execute(triage_sql.GIVE_BACK_STORAGE, params)
        await self._insert_event(tx, order.event)
        if order.lesson is not None:  # unlearns what it taught
            await self._teaching.teach(tx, submission_id, gone, order.lesson, None)
        return Erased(tuple(f.key for f in files))

    async def _insert_event(self, tx: Transaction, event: OutboxEvent) -> None:
        await tx.execute(sql.INSERT_EVENT, self._ex.rows.event_params(event))


def _locked(tx: Transaction, statement: str) -> str:
    return statement + " FOR UPDATE" if tx.locks_rows else statement


async def _get(tx: Transaction, submission_id: str) -> Submission | None:
    row = await tx.fetch_one(sql.GET_SUBMISSION, (submission_id,))
    return None if row is None else tx.rows.submission_from_row(row)
