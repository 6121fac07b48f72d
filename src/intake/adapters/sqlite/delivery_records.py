"""A delivery's record over the SQLite connection: its attempts, kept with the outcome
in one transaction; the owner's reads of deliveries; a test event to one endpoint; the
retry of one delivery. Functions the worker thread runs (see `deliveries`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from intake.adapters import delivery_records as sql
from intake.adapters.delivery_rules import delivery_id as make_delivery_id
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker
from intake.domain.deliveries import (
    AttemptOutcome,
    Delivery,
    DeliveryAttempt,
    DeliveryPosition,
    DeliveryState,
    DestinationKind,
)
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


def recorded(
    conn: sqlite3.Connection,
    update: str,
    params: Sequence[object],
    attempt: DeliveryAttempt,
) -> None:
    """Runs the outcome's UPDATE and, when it changed the delivery, keeps the attempt,
    in one transaction."""
    with transaction(conn):
        if conn.execute(update, params).rowcount > 0:
            conn.execute(
                sql.INSERT_ATTEMPT,
                (
                    attempt.delivery_id,
                    mapping.time_text(attempt.attempted_at),
                    attempt.outcome.value,
                    attempt.status_code,
                    attempt.error,
                ),
            )


def _with_attempts(conn: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[DeliveryRecord]:
    ids = [row["delivery_id"] for row in rows]
    attempts: list[DeliveryAttempt] = []
    if ids:
        placeholders = ", ".join("?" * len(ids))
        query = f"{sql.SELECT_ATTEMPTS} WHERE delivery_id IN ({placeholders}) ORDER BY attempt_id"
        attempts = [sql.attempt_from_row(ROW_MAPPER, row) for row in conn.execute(query, ids)]
    return sql.records_from_rows(ROW_MAPPER, rows, attempts)


def get_record(conn: sqlite3.Connection, delivery_id: str) -> DeliveryRecord | None:
    rows = conn.execute(sql.GET_RECORD, (delivery_id,)).fetchall()
    found = _with_attempts(conn, rows)
    return found[0] if found else None


def submission_records(conn: sqlite3.Connection, submission_id: str) -> list[DeliveryRecord]:
    return _with_attempts(conn, conn.execute(sql.SUBMISSION_RECORDS, (submission_id,)).fetchall())


def endpoint_records(
    conn: sqlite3.Connection,
    endpoint_id: str,
    state: DeliveryState | None,
    after: DeliveryPosition | None,
    limit: int,
) -> list[DeliveryRecord]:
    query, params = sql.endpoint_records(endpoint_id, state, after, limit, mapping.time_text)
    return _with_attempts(conn, conn.execute(query, params).fetchall())


def queue_direct(
    conn: sqlite3.Connection,
    event: OutboxEvent,
    kind: DestinationKind,
    destination_id: str,
    now: datetime,
    *,
    throttled: bool,
) -> Delivery:
    at = mapping.time_text(now)
    new = make_delivery_id(event.event_id, kind, destination_id)
    with transaction(conn):  # the write lock: two tests at once are counted in turn
        if throttled:
            _check_throttle(conn, event, kind, destination_id, now)
        conn.execute(sql.INSERT_PUBLISHED_EVENT, ROW_MAPPER.event_params(event))
        conn.execute(_INSERT_PENDING, (new, event.event_id, kind.value, destination_id, at, at))
        row = conn.execute(_SELECT_DELIVERY, (new,)).fetchone()
    return ROW_MAPPER.delivery_from_row(row)


def _check_throttle(
    conn: sqlite3.Connection,
    event: OutboxEvent,
    kind: DestinationKind,
    destination_id: str,
    now: datetime,
) -> None:
    """SendThrottled when the destination had its tests, or (for a consent mail) the
    workspace its consent mails, for now."""
    since = mapping.time_text(now - TEST_LOOKBACK)
    rows = conn.execute(sql.RECENT_DIRECT, (destination_id, kind.value, since))
    waits = [wait_for_test([ROW_MAPPER.codec.read_time(row["created_at"]) for row in rows], now)]
    if event.event_type is EventType.MAIL_CONFIRM:
        since = mapping.time_text(now - CONSENT_LOOKBACK)
        rows = conn.execute(sql.RECENT_CONSENTS, (event.workspace_id, since))
        sent = [ROW_MAPPER.codec.read_time(row["created_at"]) for row in rows]
        waits.append(wait_for_test(sent, now, CONSENT_WINDOWS))
    wait = max((each for each in waits if each is not None), default=None)
    if wait is not None:
        raise SendThrottled(wait)


def retry_one(conn: sqlite3.Connection, delivery_id: str, now: datetime) -> Delivery | None:
    at = mapping.time_text(now)
    with transaction(conn):
        if conn.execute(sql.RETRY_ONE_DEAD, (at, delivery_id)).rowcount == 0:
            conn.execute(sql.RETRY_ONE_PENDING, (at, delivery_id))
        row = conn.execute(_SELECT_DELIVERY, (delivery_id,)).fetchone()
    return None if row is None else ROW_MAPPER.delivery_from_row(row)


def retry_dead_to(
    conn: sqlite3.Connection, kind: DestinationKind, destination_id: str, now: datetime
) -> int:
    with transaction(conn):
        params = (mapping.time_text(now), kind.value, destination_id)
        return conn.execute(sql.RETRY_DEAD_TO, params).rowcount


def attempt(
    delivery_id: str,
    now: datetime,
    outcome: AttemptOutcome,
    status_code: int | None,
    error: str | None,
) -> DeliveryAttempt:
    return DeliveryAttempt(delivery_id, now, outcome, status_code, error)


class SqliteDeliveryRetries:
    """`SqliteDeliveries`' retries: one delivery, or every dead one to one destination."""

    _worker: Worker

    async def retry_delivery(self, delivery_id: str, now: datetime) -> Delivery | None:
        return await self._worker.run(retry_one, delivery_id, now)

    async def retry_dead_to(self, kind: DestinationKind, destination_id: str, now: datetime) -> int:
        return await self._worker.run(retry_dead_to, kind, destination_id, now)
