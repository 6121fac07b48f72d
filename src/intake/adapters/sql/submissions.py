"""The submissions repository of both SQL stores, but for its writes on the submission
path: the reads, a key claimed alone, the purge and retention's erasures, privacy's and
an owner's triage. Each store's class (sqlite/submissions.py, postgres/submissions.py)
adds the commit and a honeypot's hit, which each store writes its own way, and hands
this one its dialect module and how it wakes a relay."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from intake.adapters import sql_statements as sql
from intake.adapters.sql.erasures import SqlErasures
from intake.adapters.sql.executor import Executor, Params, Transaction
from intake.adapters.sql.privacy import AddressSearch, SqlPrivacy
from intake.adapters.sql.purge import PurgeStatements, SqlPurge
from intake.adapters.sql.spam import SpamStatements, SpamTeaching
from intake.adapters.sql.triage import SqlTriage
from intake.adapters.sql_rows import Row, existing_query_ids
from intake.adapters.submission_counts import count_statement, counts_from_row
from intake.adapters.submission_pages import Search, each_submission, page_statement
from intake.domain.idempotency import RETENTION, IdempotencyRecord
from intake.domain.listing import ALL, SubmissionFilter, SubmissionPage, SubmissionQuery
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.spam.model import Lesson
from intake.ports.submissions import (
    PURGE_BATCH_SIZE,
    ErasedBatch,
    OutboxRow,
    PurgeCounts,
    TruncatedBatch,
)
from intake.ports.triage import Erased, Erasure, Release, Released

# A key claimed with no submission: inserted, or replacing an expired record. No row
# changed: a live record holds it (on PostgreSQL, locked by the statement until the
# transaction ends, so that it is still there to be read).
_CLAIM_KEY = """
    INSERT INTO idempotency (scope, key, fingerprint, submission_id, created_at)
    VALUES (:scope, :key, :fingerprint, :submission_id, :created_at)
    ON CONFLICT (scope, key) DO UPDATE
    SET fingerprint = excluded.fingerprint, submission_id = excluded.submission_id,
        created_at = excluded.created_at
    WHERE idempotency.created_at <= :expired_at
"""
_HELD_KEY = """
    SELECT scope, key, fingerprint, submission_id, created_at FROM idempotency
    WHERE scope = ? AND key = ?
"""
# A day's hits are one row on SQLite, one per shard on PostgreSQL (0007).
_HONEYPOT_HITS = """
    SELECT day, sum(count) AS count FROM honeypot_hits WHERE form_id = ?
    GROUP BY day ORDER BY day
"""


class SubmissionsDialect(Protocol):
    """What a store says its own way: its dialect module (sqlite/dialect.py,
    postgres/dialect.py), which says why."""

    PURGE: PurgeStatements
    CHARGE: str
    SPAM: SpamStatements
    # How a listing's search finds a text in a submission's values.
    SEARCH: Search
    # The stored ids among `:ids`, a list as `listed` makes it.
    EXISTING: str

    @property
    def listed(self) -> Callable[[list[str]], object]: ...

    @property
    def address_search(self) -> AddressSearch: ...


class SqlSubmissions:
    def __init__(self, ex: Executor, dialect: SubmissionsDialect, ring: Callable[[], None]) -> None:
        """`ring`: wakes a relay, once a triage has queued an event."""
        self._ex = ex
        self._dialect = dialect
        self._ring = ring
        self._purge = SqlPurge(ex, dialect.PURGE)
        self._erasures = SqlErasures(ex)
        self._privacy = SqlPrivacy(ex, dialect.address_search)
        self._triage = SqlTriage(ex, dialect.CHARGE, SpamTeaching(dialect.SPAM))

    async def _fetch_listing(self, statement: str, params: Params, searched: bool) -> Sequence[Row]:
        """The rows of a listing or its counts; `searched`: the statement holds a search,
        which PostgreSQL plans for its text (postgres/submissions.py)."""
        return await self._ex.fetch_all(statement, params)

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        """Not on the submission path, whose commits claim their keys themselves."""
        rows = self._ex.rows
        expired_at = rows.codec.time(record.created_at - RETENTION)
        params = {**rows.idempotency_params(record), "expired_at": expired_at}

        async def steps(tx: Transaction) -> IdempotencyRecord | None:
            if await tx.execute(_CLAIM_KEY, params) > 0:
                return None
            held = await tx.fetch_one(_HELD_KEY, (record.scope, record.key))
            if held is None:
                raise RuntimeError("an idempotency key neither claimed nor held")  # a bug
            return rows.idempotency_from_row(held)

        return await self._ex.transaction(steps)

    # Reads

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None:
        params = (scope, key, self._ex.rows.codec.time(not_before))
        row = await self._ex.fetch_one(sql.FIND_IDEMPOTENCY, params)
        return None if row is None else self._ex.rows.idempotency_from_row(row)

    async def get(self, submission_id: str) -> Submission | None:
        row = await self._ex.fetch_one(sql.GET_SUBMISSION, (submission_id,))
        return None if row is None else self._ex.rows.submission_from_row(row)

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        wanted = existing_query_ids(submission_ids)
        if not wanted:
            return set()
        params = {"ids": self._dialect.listed(wanted)}
        rows = await self._ex.fetch_all(self._dialect.EXISTING, params)
        return {row["submission_id"] for row in rows}

    def iterate(
        self, form_id: str, chosen: SubmissionFilter = ALL, *, batch_size: int = 500
    ) -> AsyncIterator[Submission]:
        """A query per batch, nothing held between them: on PostgreSQL, the connection
        is given back before the batch is yielded, so a slow reader holds none."""
        return each_submission(self.page, form_id, chosen, batch_size)

    async def page(self, query: SubmissionQuery) -> SubmissionPage:
        statement, params = page_statement(query, self._ex.rows.codec.time, self._dialect.SEARCH)
        rows = await self._fetch_listing(statement, params, query.filter.text is not None)
        found = [self._ex.rows.submission_from_row(row) for row in rows]
        return SubmissionPage(tuple(found[: query.limit]), more=len(found) > query.limit)

    async def status_counts(
        self, form_id: str, chosen: SubmissionFilter, limit: int
    ) -> dict[SubmissionStatus, int]:
        time, search = self._ex.rows.codec.time, self._dialect.SEARCH
        statement, params = count_statement(form_id, chosen, limit, time, search)
        (row,) = await self._fetch_listing(statement, params, chosen.text is not None)
        return counts_from_row([row[status.value] for status in SubmissionStatus])

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        rows = await self._ex.fetch_all(sql.OUTBOX, (limit,))
        return [self._ex.rows.outbox_row_from_row(row) for row in rows]

    async def honeypot_hits(self, form_id: str) -> dict[str, int]:
        rows = await self._ex.fetch_all(_HONEYPOT_HITS, (form_id,))
        return {row["day"]: int(row["count"]) for row in rows}

    # The purge, retention and privacy

    async def purge(
        self, now: datetime, outbox_retention: timedelta, *, batch_size: int = PURGE_BATCH_SIZE
    ) -> PurgeCounts:
        return await self._purge.purge_expired(now, outbox_retention, batch_size)

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        return await self._erasures.erase_flagged(created_before, limit)

    async def erase_expired(
        self, form_id: str, created_before: datetime, limit: int
    ) -> ErasedBatch:
        return await self._erasures.erase_expired(form_id, created_before, limit)

    async def erase_forwarded(self, limit: int) -> ErasedBatch:
        return await self._erasures.erase_forwarded(limit)

    async def truncate_client_ips(self, created_before: datetime, limit: int) -> TruncatedBatch:
        return await self._privacy.truncate_client_ips(created_before, limit)

    async def with_address(self, workspace_id: str, spellings: Collection[str]) -> list[Submission]:
        return await self._privacy.with_address(workspace_id, spellings)

    async def forget_autoresponses(self, workspace_id: str, address: str) -> int:
        return await self._privacy.forget_autoresponses(workspace_id, address)

    # An owner's triage: a relay is woken for what it queued.

    async def release(self, release: Release) -> Released | None:
        released = await self._triage.release(release)
        # A report is queued with any change of status.
        if released is not None and (released.queued or (released.changed and release.report)):
            self._ring()
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
            self._ring()
        return marked

    async def erase(self, erasure: Erasure) -> Erased | None:
        erased = await self._triage.erase(erasure)
        if erased is not None:
            self._ring()
        return erased
