"""The submissions repository over one SQLite connection: the commit of a submission with
its outbox event, idempotency records, honeypot hits, and the reads. As in `repositories`,
each method sends one function to the worker thread."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Collection, Sequence
from datetime import datetime, timedelta

from intake.adapters import sql_statements as sql
from intake.adapters.coalescing import Coalescer
from intake.adapters.relay_wakeup import RelayWakeup
from intake.adapters.sql.privacy import SqlPrivacy
from intake.adapters.sql.purge import SqlPurge
from intake.adapters.sql.spam import SpamTeaching
from intake.adapters.sql.triage import SqlTriage
from intake.adapters.sql_rows import existing_query_ids
from intake.adapters.sqlite import (
    commits,
    dialect,
    file_storage,
    forwarding,
    mapping,
)
from intake.adapters.sqlite.connection import SEARCH_TEXT_FUNCTION
from intake.adapters.sqlite.executor import SqliteExecutor
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker
from intake.adapters.submission_counts import count_statement, counts_from_row
from intake.adapters.submission_pages import Search, each_submission, page_statement
from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.listing import ALL, SubmissionFilter, SubmissionPage, SubmissionQuery
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.spam.model import Lesson
from intake.ports.submissions import (
    PURGE_BATCH_SIZE,
    CommitPlan,
    CommitResult,
    Committed,
    ErasedBatch,
    HoneypotHit,
    HoneypotResult,
    OutboxRow,
    PurgeCounts,
    TruncatedBatch,
)
from intake.ports.triage import Erased, Erasure, Release, Released

# The most commits in one transaction: what queued up behind the previous one.
_MAX_BATCH = 64

# The SQL is written out in full, with named parameters matching `mapping`'s params;
# what PostgreSQL sends too is in adapters/sql_statements.py, sent as written.

_GET_SUBMISSION = sql.GET_SUBMISSION
# Seeks the primary key once per id; {} is the ids' placeholders.
_EXISTING = "SELECT submission_id FROM submissions WHERE submission_id IN ({})"
_OUTBOX = sql.OUTBOX
_FIND_IDEMPOTENCY = sql.FIND_IDEMPOTENCY
_HONEYPOT_HITS = "SELECT day, count FROM honeypot_hits WHERE form_id = ? ORDER BY day"


def _honeypot_hits(conn: sqlite3.Connection, form_id: str) -> dict[str, int]:
    return {row["day"]: int(row["count"]) for row in conn.execute(_HONEYPOT_HITS, (form_id,))}


def _find_idempotency(
    conn: sqlite3.Connection, scope: str, key: str, not_before: datetime
) -> IdempotencyRecord | None:
    row = conn.execute(_FIND_IDEMPOTENCY, (scope, key, mapping.time_text(not_before))).fetchone()
    return None if row is None else ROW_MAPPER.idempotency_from_row(row)


def _get_submission(conn: sqlite3.Connection, submission_id: str) -> Submission | None:
    row = conn.execute(_GET_SUBMISSION, (submission_id,)).fetchone()
    return None if row is None else ROW_MAPPER.submission_from_row(row)


def _existing(conn: sqlite3.Connection, submission_ids: list[str]) -> set[str]:
    # One placeholder per id: at most MAX_EXISTING_IDS (500), under the 999 parameters a
    # statement takes in SQLite before 3.32. Only placeholders are formatted in, never a
    # value.
    query = _EXISTING.format(", ".join("?" * len(submission_ids)))
    return {row["submission_id"] for row in conn.execute(query, submission_ids)}


# A scan of the form's rows in id order, the text of each looked for in Python's lower
# case (the connection's function): no index of its own, so nothing more is written per
# commit. docs/api.md, "Listing and search", says why.
_SEARCH = Search(f"instr({SEARCH_TEXT_FUNCTION}(data), ?) > 0", str.lower)


def _page(conn: sqlite3.Connection, query: SubmissionQuery) -> SubmissionPage:
    statement, params = page_statement(query, mapping.time_text, _SEARCH)
    rows = [ROW_MAPPER.submission_from_row(row) for row in conn.execute(statement, params)]
    return SubmissionPage(tuple(rows[: query.limit]), more=len(rows) > query.limit)


def _status_counts(
    conn: sqlite3.Connection, form_id: str, chosen: SubmissionFilter, limit: int
) -> dict[SubmissionStatus, int]:
    statement, params = count_statement(form_id, chosen, limit, mapping.time_text, _SEARCH)
    return counts_from_row(list(conn.execute(statement, params).fetchone()))


def _outbox(conn: sqlite3.Connection, limit: int) -> list[OutboxRow]:
    return [ROW_MAPPER.outbox_row_from_row(row) for row in conn.execute(_OUTBOX, (limit,))]


class SqliteSubmissions:
    def __init__(self, worker: Worker, wakeup: RelayWakeup) -> None:
        self._worker = worker
        self._wakeup = wakeup
        # Commits made while the thread is busy go together in its next transaction.
        self._commits = Coalescer(self._commit_batch, max_batch=_MAX_BATCH)
        ex = SqliteExecutor(worker)
        self._purge = SqlPurge(ex, dialect.PURGE)
        self._privacy = SqlPrivacy(ex, dialect.address_search)
        self._triage = SqlTriage(ex, dialect.CHARGE, SpamTeaching(dialect.SPAM))

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

    async def honeypot_hits(self, form_id: str) -> dict[str, int]:
        return await self._worker.run(_honeypot_hits, form_id)

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        return await self._worker.run(commits.claim_alone, record)

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None:
        return await self._worker.run(_find_idempotency, scope, key, not_before)

    async def get(self, submission_id: str) -> Submission | None:
        return await self._worker.run(_get_submission, submission_id)

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        wanted = existing_query_ids(submission_ids)
        if not wanted:
            return set()
        return await self._worker.run(_existing, wanted)

    def iterate(
        self, form_id: str, chosen: SubmissionFilter = ALL, *, batch_size: int = 500
    ) -> AsyncIterator[Submission]:
        return each_submission(self.page, form_id, chosen, batch_size)

    async def page(self, query: SubmissionQuery) -> SubmissionPage:
        return await self._worker.run(_page, query)

    async def status_counts(
        self, form_id: str, chosen: SubmissionFilter, limit: int
    ) -> dict[SubmissionStatus, int]:
        return await self._worker.run(_status_counts, form_id, chosen, limit)

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return await self._worker.run(_outbox, limit)

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        return await self._purge.purge_expired(now, outbox_retention, batch_size)

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await self._worker.run(file_storage.erase_flagged, created_before, limit)

    async def erase_forwarded(self, limit: int) -> ErasedBatch:
        return await self._worker.run(forwarding.erase_forwarded, limit)

    async def erase_expired(
        self, form_id: str, created_before: datetime, limit: int
    ) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await self._worker.run(file_storage.erase_expired, form_id, created_before, limit)

    async def truncate_client_ips(self, created_before: datetime, limit: int) -> TruncatedBatch:
        return await self._privacy.truncate_client_ips(created_before, limit)

    async def with_address(self, workspace_id: str, spellings: Collection[str]) -> list[Submission]:
        return await self._privacy.with_address(workspace_id, spellings)

    async def forget_autoresponses(self, workspace_id: str, address: str) -> int:
        return await self._privacy.forget_autoresponses(workspace_id, address)

    async def release(self, release: Release) -> Released | None:
        released = await self._triage.release(release)
        # A report is queued with any change of status.
        if released is not None and (released.queued or (released.changed and release.report)):
            self._wakeup.ring()
        return released

    async def mark_spam(
        self,
        submission_id: str,
        lesson: Lesson | None = None,
        *,
        report: OutboxEvent | None = None,
    ) -> Submission | None:
        marked = await self._triage.mark_spam(submission_id, lesson, report)
        if marked is not None and report is not None:
            self._wakeup.ring()
        return marked

    async def erase(self, erasure: Erasure) -> Erased | None:
        erased = await self._triage.erase(erasure)
        if erased is not None:
            self._wakeup.ring()
        return erased
