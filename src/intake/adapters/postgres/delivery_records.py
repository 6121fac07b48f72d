"""A delivery's record over the pool: its attempts, kept by the same statement that
records the outcome; the owner's reads of deliveries; a test event to one endpoint; the
retry of one delivery."""

from __future__ import annotations

from datetime import datetime

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from intake.adapters import delivery_records as sql
from intake.adapters import sql_statements
from intake.adapters.delivery_rules import delivery_id as make_delivery_id
from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.sql_statements import for_psycopg
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


def _with_attempt(update: str) -> str:
    """The outcome's UPDATE, and the attempt kept only when it changed the delivery: one
    statement, so the two are one transaction. Parameters: the UPDATE's, then the
    attempt's time, status code and error."""
    return "WITH done AS (" + for_psycopg(update) + _KEEP_ATTEMPT


_KEEP_ATTEMPT = """ RETURNING delivery_id, state)
    INSERT INTO delivery_attempts (delivery_id, attempted_at, outcome, status_code, error)
    SELECT delivery_id, %s::timestamptz,
        CASE WHEN state = 'delivered' THEN 'delivered' ELSE 'failed' END,
        %s::integer, %s::text
    FROM done
"""


SUCCEEDED = _with_attempt(sql_statements.SUCCEEDED)
FAILED_AGAIN = _with_attempt(sql_statements.FAILED_AGAIN)
FAILED_DEAD = _with_attempt(sql_statements.FAILED_DEAD)
_ATTEMPTS = sql.SELECT_ATTEMPTS + " WHERE delivery_id = ANY (%s) ORDER BY attempt_id"
_GET_RECORD = for_psycopg(sql.GET_RECORD)
_SUBMISSION_RECORDS = for_psycopg(sql.SUBMISSION_RECORDS)
_INSERT_PUBLISHED_EVENT = for_psycopg(sql.INSERT_PUBLISHED_EVENT)
_INSERT_PENDING = """
    INSERT INTO deliveries (
        delivery_id, event_id, kind, destination_id, state, attempts, next_attempt_at,
        created_at
    ) VALUES (%s, %s, %s, %s, 'pending', 0, %s, %s)
    RETURNING *
"""
_RETRY_ONE_DEAD = for_psycopg(sql.RETRY_ONE_DEAD) + " RETURNING *"
_RETRY_ONE_PENDING = for_psycopg(sql.RETRY_ONE_PENDING) + " RETURNING *"
_RETRY_DEAD_TO = for_psycopg(sql.RETRY_DEAD_TO)
_SELECT_DELIVERY = "SELECT * FROM deliveries WHERE delivery_id = %s"
_RECENT_DIRECT = for_psycopg(sql.RECENT_DIRECT)
_RECENT_CONSENTS = for_psycopg(sql.RECENT_CONSENTS)
_LOCK_CONSENTS = "SELECT pg_advisory_xact_lock(hashtextextended('intake consent ' || %s, 0))"
_LOCK_DESTINATION = "SELECT pg_advisory_xact_lock(hashtextextended('intake tests ' || %s, 0))"


async def _consent_wait(
    conn: AsyncConnection[DictRow], workspace_id: str, now: datetime
) -> int | None:
    """The workspace's consent mails counted under its own lock: two at once, in turn."""
    await conn.execute(_LOCK_CONSENTS, (workspace_id,))
    since = mapping.moment(now - CONSENT_LOOKBACK)
    cursor = await conn.execute(_RECENT_CONSENTS, (workspace_id, since))
    sent = [ROW_MAPPER.codec.read_time(row["created_at"]) for row in await cursor.fetchall()]
    return wait_for_test(sent, now, CONSENT_WINDOWS)


class PostgresDeliveryRecords:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def _with_attempts(self, rows: list[DictRow]) -> list[DeliveryRecord]:
        ids = [row["delivery_id"] for row in rows]
        found = await self._db.fetch_all(_ATTEMPTS, (ids,)) if ids else []
        attempts = [sql.attempt_from_row(ROW_MAPPER, row) for row in found]
        return sql.records_from_rows(ROW_MAPPER, rows, attempts)

    async def get(self, delivery_id: str) -> DeliveryRecord | None:
        found = await self._with_attempts(await self._db.fetch_all(_GET_RECORD, (delivery_id,)))
        return found[0] if found else None

    async def of_submission(self, submission_id: str) -> list[DeliveryRecord]:
        return await self._with_attempts(
            await self._db.fetch_all(_SUBMISSION_RECORDS, (submission_id,))
        )

    async def of_endpoint(
        self,
        endpoint_id: str,
        state: DeliveryState | None,
        after: DeliveryPosition | None,
        limit: int,
    ) -> list[DeliveryRecord]:
        query, params = sql.endpoint_records(endpoint_id, state, after, limit, mapping.moment)
        return await self._with_attempts(await self._db.fetch_all(for_psycopg(query), params))

    async def queue_direct(
        self,
        event: OutboxEvent,
        kind: DestinationKind,
        destination_id: str,
        now: datetime,
        *,
        throttled: bool,
    ) -> Delivery:
        at = mapping.moment(now)
        new = make_delivery_id(event.event_id, kind, destination_id)
        row_values = (new, event.event_id, kind.value, destination_id, at, at)
        async with self._db.connection() as conn, conn.transaction():
            if throttled:  # counted under the destination's lock: two at once, in turn
                await conn.execute(_LOCK_DESTINATION, (destination_id,))
                since = mapping.moment(now - TEST_LOOKBACK)
                cursor = await conn.execute(_RECENT_DIRECT, (destination_id, kind.value, since))
                sent = [
                    ROW_MAPPER.codec.read_time(row["created_at"]) for row in await cursor.fetchall()
                ]
                wait = wait_for_test(sent, now)
                if wait is None and event.event_type is EventType.MAIL_CONFIRM:
                    wait = await _consent_wait(conn, event.workspace_id, now)
                if wait is not None:
                    raise SendThrottled(wait)
            await conn.execute(_INSERT_PUBLISHED_EVENT, ROW_MAPPER.event_params(event))
            cursor = await conn.execute(_INSERT_PENDING, row_values)
            row = await cursor.fetchone()
        assert row is not None  # an INSERT ... RETURNING of one row
        return ROW_MAPPER.delivery_from_row(row)

    async def retry_one(self, delivery_id: str, now: datetime) -> Delivery | None:
        at = mapping.moment(now)
        async with self._db.connection() as conn, conn.transaction():
            row = await (await conn.execute(_RETRY_ONE_DEAD, (at, delivery_id))).fetchone()
            if row is None:
                row = await (await conn.execute(_RETRY_ONE_PENDING, (at, delivery_id))).fetchone()
            if row is None:
                row = await (await conn.execute(_SELECT_DELIVERY, (delivery_id,))).fetchone()
        return None if row is None else ROW_MAPPER.delivery_from_row(row)

    async def retry_dead_to(self, kind: DestinationKind, destination_id: str, now: datetime) -> int:
        params = (mapping.moment(now), kind.value, destination_id)
        async with self._db.connection() as conn, conn.transaction():
            return (await conn.execute(_RETRY_DEAD_TO, params)).rowcount


class PostgresDeliveryRetries:
    """`PostgresDeliveries`' retries: one delivery, or every dead one to one destination."""

    _records: PostgresDeliveryRecords

    async def retry_delivery(self, delivery_id: str, now: datetime) -> Delivery | None:
        return await self._records.retry_one(delivery_id, now)

    async def retry_dead_to(self, kind: DestinationKind, destination_id: str, now: datetime) -> int:
        return await self._records.retry_dead_to(kind, destination_id, now)
