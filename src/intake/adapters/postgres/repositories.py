"""The repositories over the pool. Each method is one statement on one connection taken
from the pool and given back at once; the SQL is written out in full, with named
parameters matching `mapping`'s params."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from intake.adapters.form_cache import FormCache
from intake.adapters.postgres import file_storage
from intake.adapters.postgres import mapping as m
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.mapping import ROWS
from intake.adapters.postgres.waker import Waker
from intake.adapters.sql_rows import existing_query_ids
from intake.domain.errors import ErrorCode
from intake.domain.idempotency import RETENTION, IdempotencyRecord
from intake.domain.model import ApiKey, Form, Submission, SubmissionStatus, Workspace
from intake.ports.forms import FormContext
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
    PurgeCutoffs,
    QuotaReached,
    StorageFull,
)

# Workspaces

_INSERT_WORKSPACE = """
    INSERT INTO workspaces (
        workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    ) VALUES (
        %(workspace_id)s, %(name)s, %(plan)s, %(monthly_limit)s, %(active)s, %(created_at)s,
        %(storage_limit)s
    )
"""
_UPDATE_WORKSPACE = """
    UPDATE workspaces
    SET name = %(name)s, plan = %(plan)s, monthly_limit = %(monthly_limit)s,
        active = %(active)s, created_at = %(created_at)s, storage_limit = %(storage_limit)s
    WHERE workspace_id = %(workspace_id)s
"""
_SELECT_WORKSPACE = """
    SELECT workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    FROM workspaces
"""
_GET_WORKSPACE = _SELECT_WORKSPACE + " WHERE workspace_id = %s"
_LIST_WORKSPACES = _SELECT_WORKSPACE + " ORDER BY workspace_id"
# The month's shards added up (migrations.py, 0004); no row counts as nothing.
_USAGE = """
    SELECT coalesce(sum(count), 0) AS count FROM monthly_usage_shards
    WHERE workspace_id = %s AND period = %s
"""
_USAGE_IN_PERIOD = """
    SELECT w.workspace_id, w.name, w.plan, w.monthly_limit, w.active, w.created_at,
        w.storage_limit, u.count
    FROM monthly_usage AS u JOIN workspaces AS w ON w.workspace_id = u.workspace_id
    WHERE u.period = %s AND u.count > 0
    ORDER BY w.workspace_id
"""


class PostgresWorkspaces:
    def __init__(self, db: Database, forms_cache: FormCache | None = None) -> None:
        self._db = db
        # The forms' cached lookups hold their workspace: a change here ends them.
        self._forms_cache = forms_cache

    async def add(self, workspace: Workspace) -> None:
        await self._db.execute(_INSERT_WORKSPACE, ROWS.workspace_params(workspace))

    async def get(self, workspace_id: str) -> Workspace | None:
        row = await self._db.fetch_one(_GET_WORKSPACE, (workspace_id,))
        return None if row is None else ROWS.workspace_from_row(row)

    async def update(self, workspace: Workspace) -> None:
        await self._db.execute(_UPDATE_WORKSPACE, ROWS.workspace_params(workspace))
        if self._forms_cache is not None:
            self._forms_cache.clear()

    async def list(self) -> list[Workspace]:
        return [ROWS.workspace_from_row(row) for row in await self._db.fetch_all(_LIST_WORKSPACES)]

    async def usage(self, workspace_id: str, period: str) -> int:
        row = await self._db.fetch_one(_USAGE, (workspace_id, period))
        return 0 if row is None else int(row["count"])

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        rows = await self._db.fetch_all(_USAGE_IN_PERIOD, (period,))
        return [(ROWS.workspace_from_row(row), int(row["count"])) for row in rows]

    async def storage_used(self, workspace_id: str) -> int:
        return await file_storage.storage_used(self._db, workspace_id)


# Forms

_INSERT_FORM = """
    INSERT INTO forms (
        form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at,
        uploads
    ) VALUES (
        %(form_id)s, %(workspace_id)s, %(public_form_key)s, %(name)s, %(mode)s, %(enabled)s,
        %(allowed_origins)s, %(rules)s, %(spam_threshold)s, %(challenge_provider)s,
        %(challenge_secret)s, %(redirect_url)s, %(created_at)s, %(uploads)s
    )
"""
_UPDATE_FORM = """
    UPDATE forms
    SET workspace_id = %(workspace_id)s, public_form_key = %(public_form_key)s,
        name = %(name)s, mode = %(mode)s, enabled = %(enabled)s,
        allowed_origins = %(allowed_origins)s, rules = %(rules)s,
        spam_threshold = %(spam_threshold)s, challenge_provider = %(challenge_provider)s,
        challenge_secret = %(challenge_secret)s, redirect_url = %(redirect_url)s,
        created_at = %(created_at)s, uploads = %(uploads)s
    WHERE form_id = %(form_id)s
"""
_SELECT_FORM = """
    SELECT form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at, uploads
    FROM forms
"""
_GET_FORM = _SELECT_FORM + " WHERE form_id = %s"
_LIST_FORMS = _SELECT_FORM + " ORDER BY form_id"
_LIST_WORKSPACE_FORMS = _SELECT_FORM + " WHERE workspace_id = %s ORDER BY form_id"
# The form and its workspace in one statement; the workspace's columns are aliased `w_*`.
_SELECT_CONTEXT = """
    SELECT f.form_id, f.workspace_id, f.public_form_key, f.name, f.mode, f.enabled,
        f.allowed_origins, f.rules, f.spam_threshold, f.challenge_provider,
        f.challenge_secret, f.redirect_url, f.created_at, f.uploads,
        w.workspace_id AS w_workspace_id, w.name AS w_name, w.plan AS w_plan,
        w.monthly_limit AS w_monthly_limit, w.active AS w_active,
        w.created_at AS w_created_at, w.storage_limit AS w_storage_limit
    FROM forms AS f JOIN workspaces AS w ON w.workspace_id = f.workspace_id
"""
_RESOLVE_PUBLIC_KEY = _SELECT_CONTEXT + " WHERE f.public_form_key = %s"
_RESOLVE_ID = _SELECT_CONTEXT + " WHERE f.form_id = %s"


class PostgresForms:
    def __init__(self, db: Database, cache: FormCache | None = None) -> None:
        self._db = db
        # Step 1's answers until a change (adapters/form_cache.py); None: always asked.
        self._cache = cache

    async def add(self, form: Form) -> None:
        await self._db.execute(_INSERT_FORM, ROWS.form_params(form))
        if self._cache is not None:
            self._cache.clear()

    async def get(self, form_id: str) -> Form | None:
        row = await self._db.fetch_one(_GET_FORM, (form_id,))
        return None if row is None else ROWS.form_from_row(row)

    async def update(self, form: Form) -> None:
        # The key is a column of the row, not a second index to keep: a rotated key is gone.
        await self._db.execute(_UPDATE_FORM, ROWS.form_params(form))
        if self._cache is not None:
            self._cache.clear()

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        rows = (
            await self._db.fetch_all(_LIST_FORMS)
            if workspace_id is None
            else await self._db.fetch_all(_LIST_WORKSPACE_FORMS, (workspace_id,))
        )
        return [ROWS.form_from_row(row) for row in rows]

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return await self._resolve(_RESOLVE_PUBLIC_KEY, "key:", public_form_key)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._resolve(_RESOLVE_ID, "id:", form_id)

    async def _resolve(self, query: str, kind: str, value: str) -> FormContext | None:
        cache = self._cache
        if cache is not None and (kept := cache.get(kind + value)) is not None:
            return kept
        ticket = 0 if cache is None else cache.ticket()
        row = await self._db.fetch_one(query, (value,))
        if row is None:
            return None
        context = FormContext(ROWS.form_from_row(row), ROWS.workspace_from_row(row, prefix="w_"))
        if cache is not None:
            cache.put(kind + value, context, public=kind == "key:", ticket=ticket)
        return context


# API keys

_INSERT_API_KEY = """
    INSERT INTO api_keys (key_id, workspace_id, key_hash, prefix, created_at, revoked_at)
    VALUES (%(key_id)s, %(workspace_id)s, %(key_hash)s, %(prefix)s, %(created_at)s,
        %(revoked_at)s)
"""
_SELECT_API_KEY = """
    SELECT key_id, workspace_id, key_hash, prefix, created_at, revoked_at FROM api_keys
"""
_FIND_API_KEY = _SELECT_API_KEY + " WHERE key_hash = %s"
_GET_API_KEY = _SELECT_API_KEY + " WHERE key_id = %s"
_LIST_API_KEYS = _SELECT_API_KEY + " WHERE workspace_id = %s ORDER BY created_at, key_id"
# COALESCE keeps the first revocation time when a key is revoked again.
_REVOKE_API_KEY = "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, %s) WHERE key_id = %s"


class PostgresApiKeys:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, key: ApiKey) -> None:
        await self._db.execute(_INSERT_API_KEY, ROWS.api_key_params(key))

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        row = await self._db.fetch_one(_FIND_API_KEY, (key_hash,))
        return None if row is None else ROWS.api_key_from_row(row)

    async def get(self, key_id: str) -> ApiKey | None:
        row = await self._db.fetch_one(_GET_API_KEY, (key_id,))
        return None if row is None else ROWS.api_key_from_row(row)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        return await self._db.execute(_REVOKE_API_KEY, (m.moment(when), key_id)) > 0

    async def list(self, workspace_id: str) -> list[ApiKey]:
        rows = await self._db.fetch_all(_LIST_API_KEYS, (workspace_id,))
        return [ROWS.api_key_from_row(row) for row in rows]


# Submissions, the outbox and idempotency records

# One round trip: the function (migrations.py) runs the whole commit in this
# statement's own transaction. Explicit casts pick its one signature whatever types
# the driver sends (an int may go as smallint, a None as unknown).
_COMMIT = """
    SELECT outcome, held_fingerprint, held_submission_id, held_created_at
    FROM intake_commit(
        p_submission_id => %(submission_id)s::text,
        p_form_id => %(form_id)s::text,
        p_workspace_id => %(workspace_id)s::text,
        p_status => %(status)s::text,
        p_data => %(data)s::json,
        p_subject => %(subject)s::text,
        p_reply_to => %(reply_to)s::text,
        p_spam_score => %(spam_score)s::double precision,
        p_client_ip => %(client_ip)s::text,
        p_created_at => %(created_at)s::timestamptz,
        p_event_id => %(event_id)s::text,
        p_event_type => %(event_type)s::text,
        p_event_submission_id => %(event_submission_id)s::text,
        p_event_form_id => %(event_form_id)s::text,
        p_event_workspace_id => %(event_workspace_id)s::text,
        p_payload => %(payload)s::json,
        p_event_created_at => %(event_created_at)s::timestamptz,
        p_idem_scope => %(idem_scope)s::text,
        p_idem_key => %(idem_key)s::text,
        p_idem_fingerprint => %(idem_fingerprint)s::text,
        p_idem_submission_id => %(idem_submission_id)s::text,
        p_idem_created_at => %(idem_created_at)s::timestamptz,
        p_idem_expired_at => %(idem_expired_at)s::timestamptz,
        p_quota_workspace_id => %(quota_workspace_id)s::text,
        p_quota_period => %(quota_period)s::text,
        p_quota_ceiling => %(quota_ceiling)s::bigint,
        p_check_form_id => %(check_form_id)s::text,
        p_check_public_key => %(check_public_key)s::text,
        p_quota_exact => %(quota_exact)s::boolean,
        p_files => %(files)s::jsonb,
        p_storage_bytes => %(storage_bytes)s::bigint,
        p_storage_ceiling => %(storage_ceiling)s::bigint
    )
"""
# One round trip, as _COMMIT (migrations.py, 0007).
_RECORD_HONEYPOT = """
    SELECT outcome, held_fingerprint, held_submission_id, held_created_at
    FROM intake_record_honeypot(
        p_form_id => %(form_id)s::text,
        p_day => %(day)s::text,
        p_idem_scope => %(idem_scope)s::text,
        p_idem_key => %(idem_key)s::text,
        p_idem_fingerprint => %(idem_fingerprint)s::text,
        p_idem_submission_id => %(idem_submission_id)s::text,
        p_idem_created_at => %(idem_created_at)s::timestamptz,
        p_idem_expired_at => %(idem_expired_at)s::timestamptz,
        p_check_form_id => %(check_form_id)s::text,
        p_check_public_key => %(check_public_key)s::text
    )
"""
_HONEYPOT_HITS = """
    SELECT day, sum(count) AS count FROM honeypot_hits WHERE form_id = %s
    GROUP BY day ORDER BY day
"""
_SELECT_SUBMISSION = """
    SELECT submission_id, form_id, workspace_id, status, data, subject, reply_to, spam_score,
        client_ip, created_at, files
    FROM submissions
"""
_GET_SUBMISSION = _SELECT_SUBMISSION + " WHERE submission_id = %s"
# One parameter whatever the number of ids: one statement to prepare. The primary key is
# seeked once per id.
_EXISTING = "SELECT submission_id FROM submissions WHERE submission_id = ANY(%s::text[])"
# Keyset pagination: each batch starts after the last id of the one before, an index seek.
_PAGE = (
    _SELECT_SUBMISSION
    + " WHERE form_id = %s AND submission_id > %s ORDER BY submission_id LIMIT %s"
)
_PAGE_WITH_STATUS = (
    _SELECT_SUBMISSION
    + " WHERE form_id = %s AND status = %s AND submission_id > %s"
    + " ORDER BY submission_id LIMIT %s"
)
_OUTBOX = """
    SELECT event_id, event_type, submission_id, form_id, workspace_id, payload, created_at,
        published_at
    FROM outbox ORDER BY event_id LIMIT %s
"""
_FIND_IDEMPOTENCY = """
    SELECT scope, key, fingerprint, submission_id, created_at FROM idempotency
    WHERE scope = %s AND key = %s AND created_at > %s
"""

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

# Purging: one batch per statement, each in its own transaction (autocommit), oldest
# first. The batch is chosen once (ARRAY(...) is an InitPlan) by a range scan of an
# index (idempotency_created; outbox_published, partial, of published rows only), then
# deleted row by row: a join on the batch lets the planner read the whole table to hash
# it, at every batch. SKIP LOCKED: a row another purge has taken, or a commit is
# replacing, is left to it, so two purges at once neither wait on each other nor
# deadlock, and each row is deleted and counted once.
#
# The idempotency key is two columns, so the batch is its rows' ctids (a TID scan). The
# subquery has locked them, so they stay where they are until this statement ends; a
# row changed in between (replaced by a commit) is not visible at its new ctid, and is
# not deleted.
_PURGE_IDEMPOTENCY = """
    DELETE FROM idempotency WHERE ctid = ANY (ARRAY (
        SELECT ctid FROM idempotency
        WHERE created_at <= %(cutoff)s ORDER BY created_at LIMIT %(limit)s
        FOR UPDATE SKIP LOCKED
    ))
"""
# `published_at IS NOT NULL` is implied by the comparison; written out all the same, as
# the rule it is (an unpublished row is never deleted) and as the partial index's term.
# A row stays while a delivery of it is pending, or was parked as dead after the cutoff
# (kept for `intake outbox retry` as long as a published row is); its deliveries go
# with it (ON DELETE CASCADE). The check is a seek on the deliveries' unique index, or
# a read of the few pending and dead by their partial indexes (pending said as the
# deliveries_due index says it), as the planner finds cheaper.
_PURGE_OUTBOX = """
    DELETE FROM outbox WHERE event_id = ANY (ARRAY (
        SELECT o.event_id FROM outbox AS o
        WHERE o.published_at IS NOT NULL AND o.published_at <= %(cutoff)s
            AND NOT EXISTS (
                SELECT 1 FROM deliveries AS d
                WHERE d.event_id = o.event_id
                    AND (d.next_attempt_at IS NOT NULL  -- pending
                        OR (d.state = 'dead' AND d.dead_at > %(cutoff)s))
            )
        ORDER BY o.published_at LIMIT %(limit)s
        FOR UPDATE OF o SKIP LOCKED
    ))
"""


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
            created_at=m.utc(row["held_created_at"]),
        )
    )


class PostgresSubmissions:
    def __init__(self, db: Database) -> None:
        self._db = db
        # The relay's wake-up, sent after commits rather than by them (waker.py).
        self._waker = Waker(db)

    async def commit(self, plan: CommitPlan) -> CommitResult:
        params = m.commit_params(plan)
        row = await self._db.fetch_one(_COMMIT, params)
        outcome = None if row is None else row["outcome"]
        if outcome == "quota_exact":
            # Too near the ceiling to count beside other commits: again, exactly. The
            # first call wrote nothing.
            params["quota_exact"] = True
            row = await self._db.fetch_one(_COMMIT, params)
            outcome = None if row is None else row["outcome"]
        if outcome == "committed":
            self._waker.ring()
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
        row = await self._db.fetch_one(_RECORD_HONEYPOT, m.honeypot_params(hit))
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
        await self._waker.close()

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        params = {
            "scope": record.scope,
            "key": record.key,
            "fingerprint": record.fingerprint,
            "submission_id": record.submission_id,
            "created_at": m.moment(record.created_at),
            "expired_at": m.moment(record.created_at - RETENTION),
        }
        row = await self._db.fetch_one(_CLAIM_KEY, params)
        if row is not None and row["claimed"]:
            return None
        held = await self._db.fetch_one(_HELD_KEY, (record.scope, record.key))
        if held is None:
            raise RuntimeError("an idempotency key neither claimed nor held")  # a bug
        return ROWS.idempotency_from_row(held)

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None:
        row = await self._db.fetch_one(_FIND_IDEMPOTENCY, (scope, key, m.moment(not_before)))
        return None if row is None else ROWS.idempotency_from_row(row)

    async def get(self, submission_id: str) -> Submission | None:
        row = await self._db.fetch_one(_GET_SUBMISSION, (submission_id,))
        return None if row is None else ROWS.submission_from_row(row)

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        wanted = existing_query_ids(submission_ids)
        if not wanted:
            return set()
        rows = await self._db.fetch_all(_EXISTING, (wanted,))
        return {row["submission_id"] for row in rows}

    async def iterate(
        self,
        form_id: str,
        status: SubmissionStatus | None = None,
        *,
        batch_size: int = 500,
    ) -> AsyncIterator[Submission]:
        """A connection per batch, given back before the batch is yielded: a slow reader
        holds none of the pool."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        after = ""  # sorts before every id
        while True:
            rows = (
                await self._db.fetch_all(_PAGE, (form_id, after, batch_size))
                if status is None
                else await self._db.fetch_all(
                    _PAGE_WITH_STATUS, (form_id, status.value, after, batch_size)
                )
            )
            for row in rows:
                yield ROWS.submission_from_row(row)
            if len(rows) < batch_size:
                return
            after = rows[-1]["submission_id"]

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return [
            ROWS.outbox_row_from_row(row) for row in await self._db.fetch_all(_OUTBOX, (limit,))
        ]

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        cutoffs = PurgeCutoffs.at(now, outbox_retention, batch_size)
        return PurgeCounts(
            idempotency=await self._purge(_PURGE_IDEMPOTENCY, cutoffs.idempotency, batch_size),
            outbox=await self._purge(_PURGE_OUTBOX, cutoffs.outbox, batch_size),
        )

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        return await file_storage.erase_flagged(self._db, created_before, limit)

    async def _purge(self, query: str, cutoff: datetime, batch_size: int) -> int:
        """A connection per batch, given back in between. A short batch means nothing
        was left to take: rows skipped as locked belong to a statement that is deleting
        (or replacing) them, and a row changed meanwhile is the next purge's."""
        total = 0
        while True:
            params = {"cutoff": m.moment(cutoff), "limit": batch_size}
            deleted = await self._db.execute(query, params)
            total += deleted
            if deleted < batch_size:
                return total
