"""The submissions repository over one SQLite connection: the commit of a submission with
its outbox event and a honeypot's hit, each one function on the worker thread
(commits.py); the rest is both SQL stores' (sql/submissions.py)."""

from __future__ import annotations

from collections.abc import Sequence

from intake.adapters.coalescing import Coalescer
from intake.adapters.relay_wakeup import RelayWakeup
from intake.adapters.sql.submissions import SqlSubmissions
from intake.adapters.sqlite import commits, dialect
from intake.adapters.sqlite.executor import SqliteExecutor
from intake.adapters.sqlite.worker import Worker
from intake.domain.errors import StorageUnavailable
from intake.ports.submissions import (
    CommitPlan,
    CommitResult,
    Committed,
    HoneypotHit,
    HoneypotResult,
)

# The most commits in one transaction: what queued up behind the previous one.
_MAX_BATCH = 64


class SqliteSubmissions(SqlSubmissions):
    def __init__(self, worker: Worker, wakeup: RelayWakeup) -> None:
        super().__init__(SqliteExecutor(worker), dialect, wakeup.ring)
        self._worker = worker
        self._wakeup = wakeup
        # Commits made while the thread is busy go together in its next transaction.
        self._commits = Coalescer(self._commit_batch, max_batch=_MAX_BATCH)

    async def _commit_batch(
        self, plans: Sequence[CommitPlan]
    ) -> list[CommitResult | StorageUnavailable]:
        return await self._worker.run(commits.commit_batch, plans)

    async def commit(self, plan: CommitPlan) -> CommitResult:
        result = await self._commits.call(plan)
        if isinstance(result, StorageUnavailable):
            raise result
        if isinstance(result, Committed):
            self._wakeup.ring()  # a relay of this process need not wait for its poll
        return result

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult:
        return await self._worker.run(commits.record_honeypot, hit)
