"""Retention's batch erasures (SubmissionRepository.erase_flagged, .erase_expired,
.erase_forwarded): a batch, oldest first, one transaction, its files' bytes given back to
their workspaces. PostgreSQL takes the batch's rows FOR UPDATE SKIP LOCKED, so that two
erasures at once take each submission once and neither waits; SQLite's write lock, held
from the transaction's start, does as much."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime

from intake.adapters import forward_statements as forward_sql
from intake.adapters import sql_statements as sql
from intake.adapters import triage_statements as triage_sql
from intake.adapters.sql.executor import Executor, Transaction
from intake.adapters.sql_rows import Row
from intake.domain.triage import erased_payload, key_scopes
from intake.domain.uploads import StoredFile, files_from_json
from intake.ports.submissions import ErasedBatch

# The oldest spam and unverified submissions up to the cutoff (the partial index
# submissions_flagged), but for one whose event is still on its way: an outbox row
# unpublished, or a delivery not delivered (pending, or dead and waiting for `intake
# outbox retry`). A fan-out publishes a row and makes its deliveries in one transaction,
# so none appears later.
_CHOSEN = "SELECT s.submission_id, s.workspace_id, s.files FROM submissions AS s WHERE "
_OLDEST = " AND NOT " + sql.EVENT_UNDER_WAY + " ORDER BY s.created_at, s.submission_id LIMIT :limit"
_FLAGGED = _CHOSEN + "s.status IN ('spam', 'unverified') AND s.created_at <= :cutoff" + _OLDEST
# A form's retention: its oldest submissions up to the cutoff, a range of
# submissions_form_created, but for one whose event is still on its way, as above.
_EXPIRED = _CHOSEN + "s.form_id = :form_id AND s.created_at <= :cutoff" + _OLDEST
_SKIP_LOCKED = " FOR UPDATE OF s SKIP LOCKED"
# Their deliveries go with the rows (ON DELETE CASCADE).
_DELETE_EVENTS = "DELETE FROM outbox WHERE submission_id = ?"
_DELETE_SUBMISSION = "DELETE FROM submissions WHERE submission_id = ?"
# What another relay is erasing is its own.
_FORWARDED_SKIP_LOCKED = " FOR UPDATE OF q SKIP LOCKED"


class SqlErasures:
    def __init__(self, ex: Executor) -> None:
        self._ex = ex

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        return await self._erase(_FLAGGED, created_before, limit)

    async def erase_expired(
        self, form_id: str, created_before: datetime, limit: int
    ) -> ErasedBatch:
        """The submissions' idempotency records go too: a retry after the erasure is a new
        submission."""
        return await self._erase(_EXPIRED, created_before, limit, key_form=form_id)

    async def erase_forwarded(self, limit: int) -> ErasedBatch:
        erased = await self._ex.transaction(_blank_forwarded, limit)
        if erased.submission_ids:
            await self._ex.forget_erased()
        return erased

    async def _erase(
        self, chosen: str, created_before: datetime, limit: int, key_form: str | None = None
    ) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        params = {"cutoff": self._ex.rows.codec.time(created_before), "limit": limit}
        if key_form is not None:
            params["form_id"] = key_form
        erased = await self._ex.transaction(_delete_chosen, chosen, params, key_form)
        if erased.submission_ids:
            await self._ex.forget_erased()
        return erased


async def _delete_chosen(
    tx: Transaction, chosen: str, params: Mapping[str, object], key_form: str | None
) -> ErasedBatch:
    """Deletes the submissions `chosen` picks, with their outbox rows; `key_form`: the form
    whose idempotency records of them go too, sought by the primary key among its scopes
    (domain/triage.py's key_scopes)."""
    rows = await tx.fetch_all(chosen + (_SKIP_LOCKED if tx.locks_rows else ""), params)
    if not rows:
        return ErasedBatch((), ())
    ids = [(row["submission_id"],) for row in rows]
    if key_form is not None:
        server, (public_from, public_to) = key_scopes(key_form)
        await tx.execute_many(triage_sql.DROP_SERVER_KEYS, [(server, i) for (i,) in ids])
        keys = [(public_from, public_to, i) for (i,) in ids]
        await tx.execute_many(triage_sql.DROP_PUBLIC_KEYS, keys)
    await tx.execute_many(_DELETE_EVENTS, ids)
    await tx.execute_many(_DELETE_SUBMISSION, ids)
    return await _give_back(tx, rows)


async def _blank_forwarded(tx: Transaction, limit: int) -> ErasedBatch:
    """Up to `limit` forwarded submissions of forward-only forms blanked, their events'
    payloads too (forward_statements.py says when one is ready), and dequeued."""
    ready = forward_sql.READY + (_FORWARDED_SKIP_LOCKED if tx.locks_rows else "")
    rows = await tx.fetch_all(ready, (limit,))
    if not rows:
        return ErasedBatch((), ())
    ids = [(row["submission_id"],) for row in rows]
    codec = tx.rows.codec
    blanks: list[tuple[str, str]] = []
    for (submission_id,) in ids:
        for event in await tx.fetch_all(triage_sql.SUBMISSION_EVENTS, (submission_id,)):
            blank = erased_payload(codec.read_json(event["payload"]))
            blanks.append((codec.json(blank), event["event_id"]))
    await tx.execute_many(triage_sql.SET_PAYLOAD, blanks)
    await tx.execute_many(forward_sql.BLANK_SUBMISSION, ids)
    await tx.execute_many(forward_sql.DEQUEUE, ids)
    return await _give_back(tx, rows)


async def _give_back(tx: Transaction, rows: Sequence[Row]) -> ErasedBatch:
    """The bytes of the rows' files given back to each workspace, in the erasing
    transaction; what was erased."""
    files: list[StoredFile] = []
    freed: Counter[str] = Counter()
    for row in rows:
        stored = files_from_json(tx.rows.codec.read_json(row["files"]))
        freed[row["workspace_id"]] += sum(f.size for f in stored)
        files += stored
    given = [{"workspace_id": w, "bytes": b} for w, b in sorted(freed.items()) if b]
    await tx.execute_many(triage_sql.GIVE_BACK_STORAGE, given)
    ids = tuple(row["submission_id"] for row in rows)
    return ErasedBatch(ids, tuple(f.key for f in files))
