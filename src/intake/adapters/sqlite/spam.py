"""The learning filter's statistics in SQLite (SpamStatisticsRepository), and the teaching
the triage orders do in their transactions (sqlite/triage.py). Functions run on the
worker thread, each write under the write lock (`transaction`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from intake.adapters import spam_statements as spam_sql
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam.model import INSTANCE, Label, Lesson, Statistics, pack
from intake.domain.spam.teaching import Tally, delta, stored_label, taught_label
from intake.ports.spam_statistics import Settlement, SpamSummary, StatisticsChange

# The scope's generation one more, its counts never below zero.
_BUMP_SCOPE = """
    INSERT INTO spam_scopes (scope, spam_messages, ham_messages, generation)
    VALUES (:scope, max(:spam, 0), max(:ham, 0), 1)
    ON CONFLICT (scope) DO UPDATE SET
        spam_messages = max(spam_messages + :spam, 0),
        ham_messages = max(ham_messages + :ham, 0),
        generation = generation + 1
    RETURNING generation
"""
# One row a token, in ascending order; a token falling to zero keeps its row, with the
# generation that zeroed it.
_UPSERT_COUNTS = """
    INSERT INTO spam_tokens (scope, token, spam, ham, generation)
    VALUES (:scope, :token, max(:spam, 0), max(:ham, 0), :generation)
    ON CONFLICT (scope, token) DO UPDATE SET
        spam = max(spam + :spam, 0),
        ham = max(ham + :ham, 0),
        generation = excluded.generation
"""
_STATUS_AND_TAUGHT = "SELECT workspace_id, status, taught FROM submissions WHERE submission_id = ?"


def write(conn: sqlite3.Connection, tally: Tally) -> None:
    """Inside the caller's transaction."""
    for scope, changes in tally.scopes():
        params = {"scope": scope, "spam": changes.spam_messages, "ham": changes.ham_messages}
        generation = conn.execute(_BUMP_SCOPE, params).fetchone()[0]
        conn.executemany(
            _UPSERT_COUNTS,
            (
                {"scope": scope, "token": t, "spam": s, "ham": h, "generation": generation}
                for t, s, h in changes.sorted_tokens()
            ),
        )


def teach(
    conn: sqlite3.Connection,
    submission_id: str,
    row: sqlite3.Row,
    lesson: Lesson,
    label: Label | None,
) -> None:
    """Makes the submission (its `row`: workspace_id, taught) teach `label` (None:
    nothing, as an erasure does), inside the caller's transaction."""
    taught = taught_label(row["taught"])
    tally = Tally()
    tally.add(row["workspace_id"], lesson.hashes, delta(taught, label))
    if not tally:
        return
    write(conn, tally)
    conn.execute(spam_sql.SET_TAUGHT, (stored_label(label), submission_id))


def _changes(conn: sqlite3.Connection, scope: str, since: int, limit: int) -> StatisticsChange:
    # The scope first: a token changed after it was read comes again in the next delta.
    found = conn.execute(spam_sql.SCOPE, (scope,)).fetchone()
    totals = (0, 0, 0) if found is None else tuple(found)
    if since == 0:
        rows = conn.execute(spam_sql.ALL_TOKENS, (scope, limit)).fetchall()
    else:
        rows = conn.execute(spam_sql.CHANGED_TOKENS, (scope, since, limit)).fetchall()
    tokens = {r["token"]: pack(r["spam"], r["ham"]) for r in rows}
    return StatisticsChange(Statistics(totals[0], totals[1], tokens, totals[2]), since=since)


def _seed(conn: sqlite3.Connection, lessons: Sequence[Lesson]) -> int:
    tally = Tally()
    for lesson in lessons:
        tally.add(lesson.workspace_id, lesson.hashes, delta(None, lesson.label))
    with transaction(conn):
        write(conn, tally)
    return len(lessons)


def _confirm(
    conn: sqlite3.Connection,
    submission_id: str,
    lesson: Lesson,
    if_status: SubmissionStatus | None,
) -> bool:
    with transaction(conn) as tx:
        row = conn.execute(_STATUS_AND_TAUGHT, (submission_id,)).fetchone()
        if row is None:
            tx.discard()
            return False
        if if_status is not None and row["status"] != if_status.value:
            return True  # another triage came in between: it decided
        teach(conn, submission_id, row, lesson, lesson.label)
    return True


def _untaught(conn: sqlite3.Connection, created_before: datetime, limit: int) -> list[Submission]:
    cutoff = mapping.time_text(created_before)
    rows = conn.execute(spam_sql.UNTAUGHT, (cutoff, limit)).fetchall()
    return [ROW_MAPPER.submission_from_row(r) for r in rows]


def _settle(conn: sqlite3.Connection, settlements: Sequence[Settlement]) -> int:
    tally = Tally()
    taught: dict[str, Label] = {}
    with transaction(conn):
        for settlement in sorted(settlements, key=lambda s: s.submission.submission_id):
            submission_id = settlement.submission.submission_id
            row = conn.execute(_STATUS_AND_TAUGHT, (submission_id,)).fetchone()
            if (
                row is None
                or row["status"] != settlement.submission.status.value
                or row["taught"] is not None
                or submission_id in taught
            ):
                continue
            label = settlement.lesson.label
            tally.add(row["workspace_id"], settlement.lesson.hashes, delta(None, label))
            taught[submission_id] = label
        write(conn, tally)
        conn.executemany(spam_sql.SET_TAUGHT, [(label.value, sid) for sid, label in taught.items()])
    return len(taught)


def _taught(conn: sqlite3.Connection, submission_id: str) -> Label | None:
    row = conn.execute(spam_sql.TAUGHT, (submission_id,)).fetchone()
    return None if row is None else taught_label(row["taught"])


def _summed(conn: sqlite3.Connection, scope: str) -> tuple[int, int, int]:
    found = conn.execute(spam_sql.SCOPE, (scope,)).fetchone()
    tokens = conn.execute(spam_sql.COUNT_TOKENS, (scope,)).fetchone()["tokens"]
    if found is None:
        return 0, 0, tokens
    return found["spam_messages"], found["ham_messages"], tokens


def _summary(conn: sqlite3.Connection, workspace_id: str) -> SpamSummary:
    return SpamSummary(*_summed(conn, workspace_id), *_summed(conn, INSTANCE))


class SqliteSpamStatistics:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def changes(self, scope: str, since: int, limit: int) -> StatisticsChange:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await self._worker.run(_changes, scope, since, limit)

    async def seed(self, lessons: Sequence[Lesson]) -> int:
        return await self._worker.run(_seed, lessons)

    async def confirm(
        self, submission_id: str, lesson: Lesson, if_status: SubmissionStatus | None = None
    ) -> bool:
        return await self._worker.run(_confirm, submission_id, lesson, if_status)

    async def untaught(self, created_before: datetime, limit: int) -> list[Submission]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await self._worker.run(_untaught, created_before, limit)

    async def settle(self, settlements: Sequence[Settlement]) -> int:
        return await self._worker.run(_settle, settlements)

    async def taught(self, submission_id: str) -> Label | None:
        return await self._worker.run(_taught, submission_id)

    async def summary(self, workspace_id: str) -> SpamSummary:
        return await self._worker.run(_summary, workspace_id)
