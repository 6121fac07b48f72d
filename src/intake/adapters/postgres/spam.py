"""The learning filter's statistics in PostgreSQL (SpamStatisticsRepository), and the
teaching the triage orders do in their transactions (postgres/triage.py).

Concurrent teaching never deadlocks: a transaction locks its submission rows first (in
ascending ids when several), then each scope's row, the instance's ('') first, then
that scope's tokens in ascending order, one statement a scope. The instance's row
serializes teaching across the instance, which also keeps each scope's generations in
commit order: a process that read generation G has seen every token of G and before."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from psycopg.rows import DictRow

from intake.adapters import spam_statements as spam_sql
from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Connection, Database
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.sql_statements import for_psycopg
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam.model import INSTANCE, Label, Lesson, Statistics, pack
from intake.domain.spam.teaching import Tally, delta, stored_label, taught_label
from intake.ports.spam_statistics import Settlement, SpamSummary, StatisticsChange

_BUMP_SCOPE = """
    INSERT INTO spam_scopes AS s (scope, spam_messages, ham_messages, generation)
    VALUES (%(scope)s, greatest(%(spam)s::bigint, 0), greatest(%(ham)s::bigint, 0), 1)
    ON CONFLICT (scope) DO UPDATE SET
        spam_messages = greatest(s.spam_messages + %(spam)s::bigint, 0),
        ham_messages = greatest(s.ham_messages + %(ham)s::bigint, 0),
        generation = s.generation + 1
    RETURNING generation
"""
# The rows are locked in the order they are inserted: ascending tokens. A new row takes
# the change as it is (a count below zero is clamped by _CLAMP, rarely needed: only an
# unlearning of a token no row holds).
_UPSERT_COUNTS = """
    INSERT INTO spam_tokens AS t (scope, token, spam, ham, generation)
    SELECT %(scope)s, d.token, d.spam, d.ham, %(generation)s
    FROM unnest(%(tokens)s::bigint[], %(spam)s::int[], %(ham)s::int[]) AS d (token, spam, ham)
    ORDER BY d.token
    ON CONFLICT (scope, token) DO UPDATE SET
        spam = greatest(t.spam + excluded.spam, 0),
        ham = greatest(t.ham + excluded.ham, 0),
        generation = excluded.generation
"""
_CLAMP = """
    UPDATE spam_tokens SET spam = greatest(spam, 0), ham = greatest(ham, 0)
    WHERE scope = %(scope)s AND generation = %(generation)s AND (spam < 0 OR ham < 0)
"""
_SCOPE = for_psycopg(spam_sql.SCOPE)
_ALL_TOKENS = for_psycopg(spam_sql.ALL_TOKENS)
_CHANGED_TOKENS = for_psycopg(spam_sql.CHANGED_TOKENS)
_COUNT_TOKENS = for_psycopg(spam_sql.COUNT_TOKENS)
_TAUGHT = for_psycopg(spam_sql.TAUGHT)
_SET_TAUGHT = for_psycopg(spam_sql.SET_TAUGHT)
_UNTAUGHT = for_psycopg(spam_sql.UNTAUGHT)
_SET_TAUGHT_MANY = """
    UPDATE submissions AS s SET taught = v.taught
    FROM unnest(%s::text[], %s::text[]) AS v (taught, submission_id)
    WHERE s.submission_id = v.submission_id
"""
_LOCK = """
    SELECT submission_id, workspace_id, status, taught FROM submissions
    WHERE submission_id = ANY (%s::text[]) ORDER BY submission_id FOR UPDATE
"""


async def write(conn: Connection, tally: Tally) -> None:
    """Inside the caller's transaction."""
    for scope, changes in tally.scopes():
        params = {"scope": scope, "spam": changes.spam_messages, "ham": changes.ham_messages}
        row = await (await conn.execute(_BUMP_SCOPE, params)).fetchone()
        assert row is not None  # an upsert's RETURNING
        tokens = changes.sorted_tokens()
        if not tokens:
            continue
        batch = {
            "scope": scope,
            "generation": row["generation"],
            "tokens": [t for t, _, _ in tokens],
            "spam": [s for _, s, _ in tokens],
            "ham": [h for _, _, h in tokens],
        }
        await conn.execute(_UPSERT_COUNTS, batch)
        if any(s < 0 or h < 0 for _, s, h in tokens):
            await conn.execute(_CLAMP, batch)


async def teach(
    conn: Connection, submission_id: str, row: DictRow, lesson: Lesson, label: Label | None
) -> None:
    """Makes the submission (its locked `row`: workspace_id, taught) teach `label` (None:
    nothing, as an erasure does), inside the caller's transaction."""
    tally = Tally()
    tally.add(row["workspace_id"], lesson.hashes, delta(taught_label(row["taught"]), label))
    if not tally:
        return
    await write(conn, tally)
    await conn.execute(_SET_TAUGHT, (stored_label(label), submission_id))


class PostgresSpamStatistics:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def changes(self, scope: str, since: int, limit: int) -> StatisticsChange:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        async with self._db.connection() as conn:
            # The scope first: a token changed after it was read comes again next time.
            found = await (await conn.execute(_SCOPE, (scope,))).fetchone()
            if since == 0:
                cursor = await conn.execute(_ALL_TOKENS, (scope, limit))
            else:
                cursor = await conn.execute(_CHANGED_TOKENS, (scope, since, limit))
            rows = await cursor.fetchall()
        tokens = {r["token"]: pack(r["spam"], r["ham"]) for r in rows}
        if found is None:
            return StatisticsChange(Statistics(tokens=tokens), since=since)
        statistics = Statistics(
            found["spam_messages"], found["ham_messages"], tokens, found["generation"]
        )
        return StatisticsChange(statistics, since=since)

    async def seed(self, lessons: Sequence[Lesson]) -> int:
        tally = Tally()
        for lesson in lessons:
            tally.add(lesson.workspace_id, lesson.hashes, delta(None, lesson.label))
        async with self._db.connection() as conn, conn.transaction():
            await write(conn, tally)
        return len(lessons)

    async def confirm(
        self, submission_id: str, lesson: Lesson, if_status: SubmissionStatus | None = None
    ) -> bool:
        async with self._db.connection() as conn, conn.transaction():
            row = await (await conn.execute(_LOCK, ([submission_id],))).fetchone()
            if row is None:
                return False
            if if_status is not None and row["status"] != if_status.value:
                return True  # another triage came in between: it decided
            await teach(conn, submission_id, row, lesson, lesson.label)
        return True

    async def untaught(self, created_before: datetime, limit: int) -> list[Submission]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        params = (mapping.moment(created_before), limit)
        rows = await self._db.fetch_all(_UNTAUGHT, params)
        return [ROW_MAPPER.submission_from_row(r) for r in rows]

    async def settle(self, settlements: Sequence[Settlement]) -> int:
        wanted = {s.submission.submission_id: s for s in settlements}
        if not wanted:
            return 0
        tally = Tally()
        taught: list[tuple[str, str]] = []
        async with self._db.connection() as conn, conn.transaction():
            cursor = await conn.execute(_LOCK, (sorted(wanted),))
            for row in await cursor.fetchall():
                settlement = wanted[row["submission_id"]]
                if row["taught"] is not None or row["status"] != settlement.submission.status.value:
                    continue  # a triage in between: it decided
                label = settlement.lesson.label
                tally.add(row["workspace_id"], settlement.lesson.hashes, delta(None, label))
                taught.append((label.value, row["submission_id"]))
            await write(conn, tally)
            if taught:
                labels, ids = [label for label, _ in taught], [i for _, i in taught]
                await conn.execute(_SET_TAUGHT_MANY, (labels, ids))
        return len(taught)

    async def taught(self, submission_id: str) -> Label | None:
        row = await self._db.fetch_one(_TAUGHT, (submission_id,))
        return None if row is None else taught_label(row["taught"])

    async def summary(self, workspace_id: str) -> SpamSummary:
        async with self._db.connection() as conn:
            own = await _summed(conn, workspace_id)
            instance = await _summed(conn, INSTANCE)
        return SpamSummary(*own, *instance)


async def _summed(conn: Connection, scope: str) -> tuple[int, int, int]:
    found = await (await conn.execute(_SCOPE, (scope,))).fetchone()
    counted = await (await conn.execute(_COUNT_TOKENS, (scope,))).fetchone()
    tokens = 0 if counted is None else int(counted["tokens"])
    if found is None:
        return 0, 0, tokens
    return int(found["spam_messages"]), int(found["ham_messages"]), tokens
