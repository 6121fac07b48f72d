"""The submissions repository over the pool: the commit of a submission with its outbox
event (intake_commit, grouped by commit_batch.py) and a honeypot's hit, each one round
trip; the rest is both SQL stores' (sql/submissions.py), but for a
listing's search, planned for its text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from psycopg.rows import DictRow

from intake.adapters.coalescing import Coalescer
from intake.adapters.postgres import commit_batch, dialect, mapping
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.executor import PostgresExecutor
from intake.adapters.postgres.relay_notifier import RelayNotifier
from intake.adapters.sql.executor import Params
from intake.adapters.sql.submissions import SqlSubmissions
from intake.adapters.sql_rows import Params as CommitParams
from intake.adapters.sql_rows import Row
from intake.adapters.sql_statements import for_psycopg
from intake.domain.errors import ErrorCode, StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.ports.submissions import (
    CommitPlan,
    CommitResult,
    Committed,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
    IdempotencyTaken,
    QuotaReached,
    StorageFull,
)

# The SQL is written out in full, with named parameters matching `mapping`'s params.

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

# The most commits sent in one round trip: what queued up behind the previous one.
_MAX_BATCH = 64


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


class PostgresSubmissions(SqlSubmissions):
    def __init__(self, db: Database) -> None:
        # The relay's wake-up, sent after commits rather than by them (relay_notifier.py).
        self._relay_notifier = RelayNotifier(db)
        super().__init__(PostgresExecutor(db), dialect, self._relay_notifier.ring)
        self._db = db
        # Commits made while others are on their way go together (commit_batch.py).
        self._commits = Coalescer(self._commit_batch, max_batch=_MAX_BATCH)

    async def _fetch_listing(self, statement: str, params: Params, searched: bool) -> Sequence[Row]:
        """A search is planned for its own text, never prepared: a plan made for any text
        takes the trigram index for every one, and for a text most rows hold
        (`example.com`) that reads the whole index, and the form's rows behind it, for
        each status counted: some ten times slower, on a form of 100,000, than reading
        the rows until enough match. Without a search, psycopg prepares the statement
        once it is run a few times."""
        if not searched:
            return await super()._fetch_listing(statement, params, searched)
        return await self._db.fetch_all(for_psycopg(statement), params, prepare=False)

    async def _commit_batch(self, batch: Sequence[CommitParams]) -> list[commit_batch.Answer]:
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

    async def close(self) -> None:
        await self._relay_notifier.close()
