"""A delivery's record: the owner's reads of deliveries with their attempts, a test event
queued to one destination under its throttle, and the retry of one delivery or of every
dead one to a destination. Recording an attempt's outcome is the relay's (attempts.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from intake.adapters import delivery_records as sql
from intake.adapters.delivery_rules import delivery_id as make_delivery_id
from intake.adapters.sql.executor import Executor, Transaction
from intake.adapters.sql_rows import Row
from intake.domain.deliveries import Delivery, DeliveryPosition, DeliveryState, DestinationKind
from intake.domain.destination_limits import (
    CONSENT_LOOKBACK,
    CONSENT_WINDOWS,
    TEST_LOOKBACK,
    SendThrottled,
    wait_for_test,
)
from intake.domain.model import EventType, OutboxEvent
from intake.ports.deliveries import DeliveryRecord

_SELECT_DELIVERY = "SELECT * FROM deliveries WHERE delivery_id = ?"
_INSERT_PENDING = """
    INSERT INTO deliveries (
        delivery_id, event_id, kind, destination_id, state, attempts, next_attempt_at,
        created_at
    ) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)
"""
# PostgreSQL counts two tests at once in turn under these advisory locks, the
# destination's first; SQLite's transaction holds the write lock (BEGIN IMMEDIATE).
_LOCK_DESTINATION = "SELECT pg_advisory_xact_lock(hashtextextended('intake tests ' || ?, 0))"
_LOCK_CONSENTS = "SELECT pg_advisory_xact_lock(hashtextextended('intake consent ' || ?, 0))"


async def _times(
    tx: Transaction, lock: str, key: str, query: str, params: Sequence[object]
) -> list[datetime]:
    if tx.locks_rows:
        await tx.execute(lock, (key,))
    rows = await tx.fetch_all(query, params)
    return [tx.rows.codec.read_time(row["created_at"]) for row in rows]


async def _check_throttle(
    tx: Transaction, event: OutboxEvent, kind: DestinationKind, destination_id: str, now: datetime
) -> None:
    """SendThrottled when the destination had its tests, or (for a consent mail) the
    workspace its consent mails, for now."""
    since = tx.rows.codec.time(now - TEST_LOOKBACK)
    recent = (destination_id, kind.value, since)
    sent = await _times(tx, _LOCK_DESTINATION, destination_id, sql.RECENT_DIRECT, recent)
    waits = [wait_for_test(sent, now)]
    if event.event_type is EventType.MAIL_CONFIRM:
        workspace_id = event.workspace_id
        consents = (workspace_id, tx.rows.codec.time(now - CONSENT_LOOKBACK))
        sent = await _times(tx, _LOCK_CONSENTS, workspace_id, sql.RECENT_CONSENTS, consents)
        waits.append(wait_for_test(sent, now, CONSENT_WINDOWS))
    wait = max((each for each in waits if each is not None), default=None)
    if wait is not None:
        raise SendThrottled(wait)


class SqlDeliveryRecords:
    """DeliveryRepository's owner-side half, which SqlDeliveries extends."""

    def __init__(self, ex: Executor) -> None:
        self._ex = ex

    async def _with_attempts(self, rows: Sequence[Row]) -> list[DeliveryRecord]:
        mapper = self._ex.rows
        ids = [row["delivery_id"] for row in rows]
        attempts = []
        if ids:
            places = ", ".join("?" * len(ids))
            query = f"{sql.SELECT_ATTEMPTS} WHERE delivery_id IN ({places}) ORDER BY attempt_id"
            found = await self._ex.fetch_all(query, ids)
            attempts = [sql.attempt_from_row(mapper, row) for row in found]
        return sql.records_from_rows(mapper, rows, attempts)

    async def get_delivery(self, delivery_id: str) -> DeliveryRecord | None:
        found = await self._with_attempts(await self._ex.fetch_all(sql.GET_RECORD, (delivery_id,)))
        return found[0] if found else None

    async def submission_deliveries(self, submission_id: str) -> list[DeliveryRecord]:
        rows = await self._ex.fetch_all(sql.SUBMISSION_RECORDS, (submission_id,))
        return await self._with_attempts(rows)

    async def endpoint_deliveries(
        self,
        endpoint_id: str,
        *,
        state: DeliveryState | None = None,
        after: DeliveryPosition | None = None,
        limit: int = 50,
    ) -> list[DeliveryRecord]:
        time = self._ex.rows.codec.time
        query, params = sql.endpoint_records(endpoint_id, state, after, limit, time)
        return await self._with_attempts(await self._ex.fetch_all(query, params))

    async def queue_direct(
        self,
        event: OutboxEvent,
        kind: DestinationKind,
        destination_id: str,
        now: datetime,
        *,
        throttled: bool = False,
    ) -> Delivery:
        at = self._ex.rows.codec.time(now)
        new = make_delivery_id(event.event_id, kind, destination_id)

        async def steps(tx: Transaction) -> Row | None:
            if throttled:
                await _check_throttle(tx, event, kind, destination_id, now)
            await tx.execute(sql.INSERT_PUBLISHED_EVENT, tx.rows.event_params(event))
            pending = (new, event.event_id, kind.value, destination_id, at, at)
            await tx.execute(_INSERT_PENDING, pending)
            return await tx.fetch_one(_SELECT_DELIVERY, (new,))

        row = await self._ex.transaction(steps)
        assert row is not None  # inserted in the same transaction
        return self._ex.rows.delivery_from_row(row)

    async def retry_delivery(self, delivery_id: str, now: datetime) -> Delivery | None:
        at = self._ex.rows.codec.time(now)

        async def steps(tx: Transaction) -> Row | None:
            if await tx.execute(sql.RETRY_ONE_DEAD, (at, delivery_id)) == 0:
                await tx.execute(sql.RETRY_ONE_PENDING, (at, delivery_id))
            return await tx.fetch_one(_SELECT_DELIVERY, (delivery_id,))

        row = await self._ex.transaction(steps)
        return None if row is None else self._ex.rows.delivery_from_row(row)

    async def retry_dead_to(self, kind: DestinationKind, destination_id: str, now: datetime) -> int:
        params = (self._ex.rows.codec.time(now), kind.value, destination_id)
        return await self._ex.execute(sql.RETRY_DEAD_TO, params)
