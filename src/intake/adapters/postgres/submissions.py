"""The submissions repository over the pool: the commit of a submission with its outbox
event, idempotency records, honeypot hits, and the reads. As in `repositories`, each
method is one statement on one connection taken from the pool and given back at once."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from psycopg.rows import DictRow

from intake.adapters import sql_statements as sql
from intake.adapters.coalescing import Coalescer
from intake.adapters.postgres import (
    commit_batch,
    dialect,
    file_storage,
    forwarding,
    mapping,
)
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.executor import PostgresExecutor
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.postgres.relay_notifier import RelayNotifier
from intake.adapters.sql.privacy import SqlPrivacy
from intake.adapters.sql.purge import SqlPurge
from intake.adapters.sql.spam import SpamTeaching
from intake.adapters.sql.triage import SqlTriage
from intake.adapters.sql_rows import Params, existing_query_ids
from intake.adapters.sql_statements import for_psycopg
from intake.adapters.submission_counts import count_statement, counts_from_row
from intake.adapters.submission_pages import (
    Search,
    each_submission,
    like_pattern,
    page_statement,
)
from intake.domain.errors import ErrorCode, StorageUnavailable
from intake.domain.idempotency import RETENTION, IdempotencyRecord
from intake.domain.listing import ALL, SubmissionFilter, SubmissionPage, SubmissionQuery
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.spam.model import Lesson
from intake.ports.submissions import (
    PURGE_BATCH_SIZE,
    CommitPlan,
    CommitResult,
    Committed,
    ErasedBatch,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
    IdempotencyTaken,
    OutboxRow,
    PurgeCounts,
    QuotaReached,
    StorageFull,
    TruncatedBatch,
)
from intake.ports.triage import Erased, Erasure, Release, Released

# The SQL is written out in full, with named parameters matching `mapping`'s params;
# what SQLite sends too is in adapters/sql_statements.py, rendered for psycopg.

# The idempotency record and the form check, passed alike to both SQL functions.
_IDEMPOTENCY_ARGUMENTS = """
        p_idem_scope => %(idem_scope)s::text,
        p_idem_key => %(idem_key)s::text,
        p_idem_fingerprint => %(idem_fingerprint)s::text,
        p_idem_submission_id => %(idem_submission_id)s::text,
        p_idem_created_at => %(idem_created_at)s::timestamptz,
        p_idem_expired_at => %(idem_expired_at)s::timestamptz,"""
_CHECK_ARGUMENTS = """
        p_check_form_id => %(check_form_id)s::text,
        p_check_public_key => %(check_public_key)s::text"""
# One round trip: the function (migrations/README.md names its file) runs the whole
# commit in this statement's own transaction; commit_batch.py sends many in one.
_COMMIT = commit_batch.SINGLE
# One round trip, as _COMMIT (migrations/0007_honeypot_hits.sql).
_RECORD_HONEYPOT = f"""
    SELECT outcome, held_fingerprint, held_submission_id, held_created_at
    FROM intake_record_honeypot(
        p_form_id => %(form_id)s::text,
        p_day => %(day)s::text,{_IDEMPOTENCY_ARGUMENTS}{_CHECK_ARGUMENTS}
    )
"""  # noqa: S608 - made of constants only
_HONEYPOT_HITS = """
    SELECT day, sum(count) AS count FROM honeypot_hits WHERE form_id = %s
    GROUP BY day ORDER BY day
"""
_GET_SUBMISSION = for_psycopg(sql.GET_SUBMISSION)
# One parameter whatever the number of ids: one statement to prepare. The primary key is
# seeked once per id.
_EXISTING = "SELECT submission_id FROM submissions WHERE submission_id = ANY(%s::text[])"
# The trigram index of migration 0010 serves this LIKE on the lowered search text kept
# with each row; the search is lowered by PostgreSQL too, so both fold case alike.
_SEARCH = Search("search_text LIKE lower(?) ESCAPE '\\'", like_pattern)
_OUTBOX = for_psycopg(sql.OUTBOX)
_FIND_IDEMPOTENCY = for_psycopg(sql.FIND_IDEMPOTENCY)

# Claims a key with no submission: inserted, or replacing an expired record. The flag
# says whether it did; the holder is read in a statement of its own, whose snapshot sees
# a record that a concurrent claim committed while this one waited on it.
_CLAIM_KEY = """
    WITH claimed AS (
        INSERT INTO idempotency (scope, key, fingerprint, submission_id, created_at)
        VALUES (%(scope)s, %(key)s, %(fingerprint)s, %(submission_id)s, %(created_at)s)
        ON CONFLICT (scope, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, submission_id = EXCLUDED.submission_id,
            created_at = EXCLUDED.created_at
        WHERE idempotency.created_at <= %(expired_at)s
        RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM claimed) AS claimed
"""
_HELD_KEY = """
    SELECT scope, key, fingerprint, submission_id, created_at FROM idempotency
    WHERE scope = %s AND key = %s
"""

# The most commits sent in one round trip: what queued up behind the previous one.
_MAX_BATCH = 64


def _prepare(chosen: SubmissionFilter) -> bool | None:
    """A search is planned for its own text, never prepared: a plan made for any text
    takes the trigram index for every one, and for a text most rows hold (`example.com`)
    that reads the whole index, and the form's rows behind it, for each status counted:
    some ten times slower, on a form of 100,000, than reading the rows until enough match.
    Without a search, psycopg prepares the statement once it is run a few times."""
    return None if chosen.text is None else False


# What intake_commit answers when its FormCheck fails, as the refusal of steps 1 and 2.
_FORM_REFUSALS = {
    "form_not_found": ErrorCode.FORM_NOT_FOUND,
    "unauthorized": ErrorCode.UNAUTHORIZED,
    "form_disabled": ErrorCode.FORM_DISABLED,
}


def _taken(record: IdempotencyRecord, row: Mapping[str, Any]) -> IdempotencyTaken:
    """The live record that holds `record`'s key, as the commit functions answer it."""
    return IdempotencyTaken(
        IdempotencyRecord(
            scope=record.scope,
            key=record.key,
            fingerprint=row["held_fingerprint"],
            submission_id=row["held_submission_id"],
            created_at=mapping.utc(row["held_created_at"]),
        )
    )


class PostgresSubmissions:
    def __init__(self, db: Database) -> None:
        self._db = db
        # The relay's wake-up, sent after commits rather than by them (relay_notifier.py).
        self._relay_notifier = RelayNotifier(db)
        # Commits made while others are on their way go together (commit_batch.py).
        self._commits = Coalescer(self._commit_batch, max_batch=_MAX_BATCH)
        ex = PostgresExecutor(db)
        self._purge = SqlPurge(ex, dialect.PURGE)
        self._privacy = SqlPrivacy(ex, dialect.address_search)
        self._triage = SqlTriage(ex, dialect.CHARGE, SpamTeaching(dialect.SPAM))

    async def _commit_batch(self, batch: Sequence[Params]) -> list[commit_batch.Answer]:
        return await commit_batch.commit_all(self._db, batch)

    async def commit(self, plan: CommitPlan) -> CommitResult:
        params = mapping.commit_params(plan)
        try:
            # Behind a stuck batch (a lock held), as long as for a free connection.
            answer = await self._commits.call(params, queue_timeout=self._db.pool_timeout)
        except TimeoutError as error:
            raise StorageUnavailable("postgres: the commits before it are stuck") from error
        if isinstance(answer, StorageUnavailable):
            raise answer
        row: DictRow | None = answer
        outcome = answer["outcome"]
        if outcome == "quota_exact":
            # Too near the ceiling to count beside other commits: again, alone and
            # exactly. The first call wrote nothing.
            params["quota_exact"] = True
            row = await self._db.fetch_one(_COMMIT, params)
            outcome = None if row is None else row["outcome"]
        if outcome == "committed":
            self._relay_notifier.ring()
            return Committed()
        if outcome == "quota_reached":
            return QuotaReached()
        if outcome == "storage_full":
            return StorageFull()
        if outcome in _FORM_REFUSALS:
            return FormRefused(_FORM_REFUSALS[outcome])
        if outcome == "idempotency_taken" and row is not None and plan.idempotency is not None:
            return _taken(plan.idempotency, row)
        raise RuntimeError(f"intake_commit answered {outcome!r}")  # a bug, not an outage

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult:
        row = await self._db.fetch_one(_RECORD_HONEYPOT, mapping.honeypot_params(hit))
        outcome = None if row is None else row["outcome"]
        if outcome == "committed":
            return Committed()
        if outcome in _FORM_REFUSALS:
            return FormRefused(_FORM_REFUSALS[outcome])
        if outcome == "idempotency_taken" and row is not None and hit.idempotency is not None:
            return _taken(hit.idempotency, row)
        raise RuntimeError(f"intake_record_honeypot answered {outcome!r}")  # a bug

    async def honeypot_hits(self, form_id: str) -> dict[str, int]:
        rows = await self._db.fetch_all(_HONEYPOT_HITS, (form_id,))
        return {row["day"]: int(row["count"]) for row in rows}

    async def close(self) -> None:
        await self._relay_notifier.close()

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        params = {
            "scope": record.scope,
            "key": record.key,
            "fingerprint": record.fingerprint,
            "submission_id": record.submission_id,
            "created_at": mapping.moment(record.created_at),
            "expired_at": mapping.moment(record.created_at - RETENTION),
        }
        row = await self._db.fetch_one(_CLAIM_KEY, params)
        if row is not None and row["claimed"]:
            return None
        held = await self._db.fetch_one(_HELD_KEY, (record.scope, record.key))
        if held is None:
            raise RuntimeError("an idempotency key neither claimed nor held")  # a bug
        return ROW_MAPPER.idempotency_from_row(held)

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None:
        row = await self._db.fetch_one(_FIND_IDEMPOTENCY, (scope, key, mapping.moment(not_before)))
        return None if row is None else ROW_MAPPER.idempotency_from_row(row)

    async def get(self, submission_id: str) -> Submission | None:
        row = await self._db.fetch_one(_GET_SUBMISSION, (submission_id,))
        return None if row is None else ROW_MAPPER.submission_from_row(row)

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        wanted = existing_query_ids(submission_ids)
        if not wanted:
            return set()
        rows = await self._db.fetch_all(_EXISTING, (wanted,))
        return {row["submission_id"] for row in rows}

    def iterate(
        self, form_id: str, chosen: SubmissionFilter = ALL, *, batch_size: int = 500
    ) -> AsyncIterator[Submission]:
        """A connection per batch, given back before the batch is yielded: a slow reader
        holds none of the pool."""
        return each_submission(self.page, form_id, chosen, batch_size)

    async def page(self, query: SubmissionQuery) -> SubmissionPage:
        statement, params = page_statement(query, mapping.moment, _SEARCH)
        prepare = _prepare(query.filter)
        rows = await self._db.fetch_all(for_psycopg(statement), params, prepare=prepare)
        found = [ROW_MAPPER.submission_from_row(row) for row in rows]
        return SubmissionPage(tuple(found[: query.limit]), more=len(found) > query.limit)

    async def status_counts(
        self, form_id: str, chosen: SubmissionFilter, limit: int
    ) -> dict[SubmissionStatus, int]:
        statement, params = count_statement(form_id, chosen, limit, mapping.moment, _SEARCH)
        row = await self._db.fetch_one(for_psycopg(statement), params, prepare=_prepare(chosen))
        assert row is not None
        return counts_from_row([row[status.value] for status in SubmissionStatus])

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return [
            ROW_MAPPER.outbox_row_from_row(row)
            for row in await self._db.fetch_all(_OUTBOX, (limit,))
        ]

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        return await self._purge.purge_expired(now, outbox_retention, batch_size)

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        return await file_storage.erase_flagged(self._db, created_before, limit)

    async def erase_forwarded(self, limit: int) -> ErasedBatch:
        return await forwarding.erase_forwarded(self._db, limit)

    async def erase_expired(
        self, form_id: str, created_before: datetime, limit: int
    ) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await file_storage.erase_expired(self._db, form_id, created_before, limit)

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
            self._relay_notifier.ring()
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
            self._relay_notifier.ring()
        return marked

    async def erase(self, erasure: Erasure) -> Erased | None:
        erased = await self._triage.erase(erasure)
        if erased is not None:
            self._relay_notifier.ring()
        return erased
