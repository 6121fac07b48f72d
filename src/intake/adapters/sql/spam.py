"""The learning filter's statistics (SpamStatisticsRepository) for both SQL stores, and
the teaching the triage orders do in their transactions (SpamTeaching).

Concurrent teaching never deadlocks. A transaction takes its submission rows first, in
ascending ids; then each scope's row, the instance's ('') first, then that scope's tokens
in ascending order, one batch a scope (the store's `SpamStatements`: one hop of rows on
SQLite, arrays in one statement on PostgreSQL). On PostgreSQL the rows are locked in that
order, and the instance's row serializes teaching across the instance, which also keeps
each scope's generations in commit order: a process that read generation G has seen every
token of G and before. On SQLite the transaction's write lock does both."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from attrs import frozen

from intake.adapters import spam_statements as spam_sql
from intake.adapters.sql.executor import Executor, Params, Statements, Transaction
from intake.adapters.sql_rows import Row
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam.model import INSTANCE, Label, Lesson, Statistics, pack
from intake.domain.spam.teaching import Tally, delta, stored_label, taught_label
from intake.ports.spam_statistics import Settlement, SpamSummary, StatisticsChange

# (token, spam change, ham change), in ascending tokens (ScopeTally.sorted_tokens).
TokenChanges = list[tuple[int, int, int]]


@frozen
class SpamStatements:
    """What a store writes its own way."""

    # :ids, a list as `listed` makes it -> submission_id, workspace_id, status, taught, in
    # ascending ids; on PostgreSQL each row locked (FOR UPDATE) in that order.
    submissions: str
    listed: Callable[[Sequence[object]], object]
    # A scope's token changes added to its rows, none below zero, each row taking the
    # scope's new generation: `upsert_tokens` sent once per parameter set that
    # `token_batch(scope, generation, changes)` makes.
    upsert_tokens: str
    token_batch: Callable[[str, int, TokenChanges], list[Params]]
    # What sets back to zero a count the upsert left below zero (:scope, :generation),
    # sent when a change is below zero; None where the upsert never leaves one.
    clamp: str | None = None


class SpamTeaching:
    """Writes lessons inside the caller's transaction."""

    def __init__(self, statements: SpamStatements) -> None:
        self._statements = statements

    async def locked(self, tx: Transaction, submission_ids: Sequence[str]) -> Sequence[Row]:
        """The submissions' rows (workspace_id, status, taught), in ascending ids, locked
        where the store needs it."""
        ids = sorted(set(submission_ids))
        return await tx.fetch_all(
            self._statements.submissions, {"ids": self._statements.listed(ids)}
        )

    async def write(self, tx: Transaction, tally: Tally) -> None:
        statements = self._statements
        for scope, changes in tally.scopes():
            params = {"scope": scope, "spam": changes.spam_messages, "ham": changes.ham_messages}
            row = await tx.fetch_one(spam_sql.BUMP_SCOPE, params)
            assert row is not None  # an upsert's RETURNING
            generation = int(row["generation"])
            tokens = changes.sorted_tokens()
            if not tokens:
                continue
            batch = statements.token_batch(scope, generation, tokens)
            await tx.execute_many(statements.upsert_tokens, batch)
            if statements.clamp is not None and any(s < 0 or h < 0 for _, s, h in tokens):
                await tx.execute(statements.clamp, {"scope": scope, "generation": generation})

    async def teach(
        self, tx: Transaction, submission_id: str, row: Row, lesson: Lesson, label: Label | None
    ) -> None:
        """Makes the submission (its `row`, read by `locked`: workspace_id, taught) teach
        `label` (None: nothing, as an erasure does)."""
        tally = Tally()
        tally.add(row["workspace_id"], lesson.hashes, delta(taught_label(row["taught"]), label))
        if not tally:
            return
        await self.write(tx, tally)
        await tx.execute(spam_sql.SET_TAUGHT, (stored_label(label), submission_id))


class SqlSpamStatistics:
    def __init__(self, ex: Executor, statements: SpamStatements) -> None:
        self._ex = ex
        self.teaching = SpamTeaching(statements)

    async def changes(self, scope: str, since: int, limit: int) -> StatisticsChange:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        # The scope first: a token changed after it was read comes again in the next delta.
        found = await self._ex.fetch_one(spam_sql.SCOPE, (scope,))
        if since == 0:
            rows = await self._ex.fetch_all(spam_sql.ALL_TOKENS, (scope, limit))
        else:
            rows = await self._ex.fetch_all(spam_sql.CHANGED_TOKENS, (scope, since, limit))
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
        await self._ex.transaction(self.teaching.write, tally)
        return len(lessons)

    async def confirm(
        self, submission_id: str, lesson: Lesson, if_status: SubmissionStatus | None = None
    ) -> bool:

        async def steps(tx: Transaction) -> bool:
            rows = await self.teaching.locked(tx, [submission_id])
            if not rows:
                tx.discard()
                return False
            if if_status is not None and rows[0]["status"] != if_status.value:
                return True  # another triage came in between: it decided
            await self.teaching.teach(tx, submission_id, rows[0], lesson, lesson.label)
            return True

        return await self._ex.transaction(steps)

    async def untaught(self, created_before: datetime, limit: int) -> list[Submission]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        params = (self._ex.rows.codec.time(created_before), limit)
        rows = await self._ex.fetch_all(spam_sql.UNTAUGHT, params)
        return [self._ex.rows.submission_from_row(r) for r in rows]

    async def settle(self, settlements: Sequence[Settlement]) -> int:
        wanted: dict[str, Settlement] = {}
        for settlement in settlements:
            wanted.setdefault(settlement.submission.submission_id, settlement)
        if not wanted:
            return 0

        async def steps(tx: Transaction) -> int:
            tally = Tally()
            taught: list[tuple[str, str]] = []
            for row in await self.teaching.locked(tx, list(wanted)):
                settlement = wanted[row["submission_id"]]
                if row["taught"] is not None or row["status"] != settlement.submission.status.value:
                    continue  # a triage in between: it decided
                label = settlement.lesson.label
                tally.add(row["workspace_id"], settlement.lesson.hashes, delta(None, label))
                taught.append((label.value, row["submission_id"]))
            await self.teaching.write(tx, tally)
            if taught:
                await tx.execute_many(spam_sql.SET_TAUGHT, taught)
            return len(taught)

        return await self._ex.transaction(steps)

    async def taught(self, submission_id: str) -> Label | None:
        row = await self._ex.fetch_one(spam_sql.TAUGHT, (submission_id,))
        return None if row is None else taught_label(row["taught"])

    async def summary(self, workspace_id: str) -> SpamSummary:
        own = await _summed(self._ex, workspace_id)
        instance = await _summed(self._ex, INSTANCE)
        return SpamSummary(*own, *instance)


async def _summed(ex: Statements, scope: str) -> tuple[int, int, int]:
    found = await ex.fetch_one(spam_sql.SCOPE, (scope,))
    counted = await ex.fetch_one(spam_sql.COUNT_TOKENS, (scope,))
    tokens = 0 if counted is None else int(counted["tokens"])
    if found is None:
        return 0, 0, tokens
    return int(found["spam_messages"]), int(found["ham_messages"]), tokens
