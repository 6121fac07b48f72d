"""The purge of expired idempotency records, of published outbox rows past their
retention and of the autoresponder's old records (SubmissionRepository.purge): batches
of one statement each, oldest first. Each store writes the batches its own way
(sqlite/dialect.py, postgres/dialect.py): PostgreSQL's take their rows with SKIP LOCKED,
so that two purges at once neither wait on each other nor deadlock."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from intake.adapters.sql.executor import Executor
from intake.ports.submissions import PurgeCounts, PurgeCutoffs


class PurgeStatements(NamedTuple):
    """One batch each, of the rows at or before `:cutoff`, `:limit` at most, oldest
    first: deletes them and answers how many."""

    idempotency: str
    outbox: str
    autoresponses: str


class SqlPurge:
    def __init__(self, ex: Executor, statements: PurgeStatements) -> None:
        self._ex = ex
        self._statements = statements

    async def purge_expired(
        self, now: datetime, outbox_retention: timedelta, batch_size: int
    ) -> PurgeCounts:
        cutoffs = PurgeCutoffs.at(now, outbox_retention, batch_size)
        each = self._statements
        counts = PurgeCounts(
            idempotency=await self._purge(each.idempotency, cutoffs.idempotency, batch_size),
            outbox=await self._purge(each.outbox, cutoffs.outbox, batch_size),
            autoresponses=await self._purge(each.autoresponses, cutoffs.autoresponses, batch_size),
        )
        # Outbox rows carry a copy of the data: none may stay behind in a log.
        if counts.idempotency or counts.outbox or counts.autoresponses:
            await self._ex.forget_erased()
        return counts

    async def _purge(self, statement: str, cutoff: datetime, batch_size: int) -> int:
        """One statement a batch, atomic alone: this process's submissions are served
        between them, and another process waits for SQLite's write lock one batch at
        most. A short batch means none was left: rows another purge has taken, or a
        commit is replacing, are theirs (SKIP LOCKED), and a row changed meanwhile is
        the next purge's."""
        total = 0
        params = {"cutoff": self._ex.rows.codec.time(cutoff), "limit": batch_size}
        while True:
            deleted = await self._ex.execute(statement, params)
            total += deleted
            if deleted < batch_size:
                return total
