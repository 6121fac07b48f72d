"""Deliveries over the SQLite connection (a form's destinations: sql/destinations.py, the
fan-out: sql/fan_out.py). Each method sends one function to the worker thread, and an
operation of several statements is one transaction: BEGIN IMMEDIATE holds the write
lock, so a second relay process waits for the first one's claim rather than taking the
same rows."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from intake.adapters import chat_statements as chat_sql
from intake.adapters import delivery_records as records_sql
from intake.adapters import sql_statements as sql
from intake.adapters.delivery_rules import (
    CHAT_REMOVED,
    ENDPOINT_DISABLED,
    ENDPOINT_REMOVED,
    RECIPIENT_REMOVED,
    error_text,
)
from intake.adapters.sealed_columns import opened_claim
from intake.adapters.sql.delivery_records import SqlDeliveryRecords, SqlDeliveryRetries
from intake.adapters.sql.fan_out import SqlFanOut
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.dialect import FAN_OUT
from intake.adapters.sqlite.executor import SqliteExecutor
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
from intake.domain.form_messages import DEFAULT_AUTORESPONSE_HOURLY_LIMIT
from intake.domain.model import OutboxEvent
from intake.ports.deliveries import (
    Claim,
    ClaimedDelivery,
    DeliveryCounts,
    DeliveryRecord,
)
from intake.ports.sealer import Sealer

# Deliveries


# A delivery is pending exactly when it has a next_attempt_at (a CHECK says so): the
# queries below ask that column alone, as the deliveries_due index does
# (migrations/0003_delivery.sql says why).
#
# The first `limit` due (the deliveries_due index, in its order), with the reason any of
# them cannot be sent: its destination, joined by kind, is gone or disabled.
_DUE_HEAD = """
    SELECT d.delivery_id,
        CASE
            WHEN d.kind = 'webhook' AND e.endpoint_id IS NULL THEN :endpoint_removed
            WHEN d.kind = 'webhook' AND e.disabled_at IS NOT NULL THEN :endpoint_disabled
            WHEN d.kind = 'email' AND r.recipient_id IS NULL
                AND NOT substr(d.destination_id, 1, 4) = 'ars_' THEN :recipient_removed
            WHEN d.kind = 'chat' AND ch.destination_id IS NULL THEN :chat_removed
        END AS reason
    FROM deliveries AS d
    LEFT JOIN webhook_endpoints AS e
        ON d.kind = 'webhook' AND e.endpoint_id = d.destination_id
    LEFT JOIN notification_recipients AS r
        ON d.kind = 'email' AND r.recipient_id = d.destination_id"""
_DUE_HEAD += (
    chat_sql.JOIN_CHAT.format(alias="d")
    + """
    WHERE d.next_attempt_at <= :now AND (d.leased_until IS NULL OR d.leased_until <= :now)
    ORDER BY d.next_attempt_at, d.delivery_id LIMIT :limit
"""
)
_PARK = """
    UPDATE deliveries
    SET state = 'dead', next_attempt_at = NULL, leased_until = NULL, dead_at = ?,
        last_error = ?
    WHERE delivery_id = ?
"""
# The first `limit` due that can be sent, with their event and destination. A suspended
# workspace's are held where they are (pending, no attempt counted) until it is active.
_CLAIMABLE_HEAD = """
    SELECT d.delivery_id, d.event_id, d.kind, d.destination_id, d.state, d.attempts,
        d.next_attempt_at, d.leased_until, d.last_error, d.delivered_at, d.dead_at,
        d.created_at,
"""
_CLAIMABLE_TAIL = """
    FROM deliveries AS d
    JOIN outbox AS o ON o.event_id = d.event_id
    JOIN workspaces AS w ON w.workspace_id = o.workspace_id AND w.active = 1
    LEFT JOIN webhook_endpoints AS e
        ON d.kind = 'webhook' AND e.endpoint_id = d.destination_id
    LEFT JOIN notification_recipients AS r
        ON d.kind = 'email' AND r.recipient_id = d.destination_id"""
_CLAIMABLE_TAIL += (
    chat_sql.JOIN_CHAT.format(alias="d")
    + """
    WHERE d.next_attempt_at <= :now AND (d.leased_until IS NULL OR d.leased_until <= :now)
        AND ((e.endpoint_id IS NOT NULL AND e.disabled_at IS NULL)
            OR r.recipient_id IS NOT NULL OR ch.destination_id IS NOT NULL
            OR (d.kind = 'email' AND substr(d.destination_id, 1, 4) = 'ars_')
            OR d.kind = 'akismet')
    ORDER BY d.next_attempt_at, d.delivery_id LIMIT :limit
"""
)
_CLAIMABLE = _CLAIMABLE_HEAD + sql.CLAIMED_WITH + chat_sql.CLAIMED_CHAT_WITH + _CLAIMABLE_TAIL
_LEASE = "UPDATE deliveries SET leased_until = ? WHERE delivery_id = ?"
_SUCCEEDED = sql.SUCCEEDED
_FAILED_AGAIN = sql.FAILED_AGAIN
_FAILED_DEAD = sql.FAILED_DEAD
_LIST_DELIVERIES = sql.LIST_DELIVERIES
_LIST_DEAD = sql.LIST_DEAD
_RETRY_DEAD = sql.RETRY_DEAD
_EVENT_KNOWN = sql.EVENT_KNOWN
_BACKLOG = """
    SELECT count(*) AS waiting, min(created_at) AS oldest FROM (
        SELECT created_at FROM outbox WHERE published_at IS NULL AND dead_at IS NULL
        UNION ALL
        SELECT created_at FROM deliveries WHERE next_attempt_at IS NOT NULL
    )
"""


def _claim_due(conn: sqlite3.Connection, now: datetime, lease: timedelta, limit: int) -> Claim:
    params = {
        "now": mapping.time_text(now),
        "limit": limit,
        "endpoint_removed": ENDPOINT_REMOVED,
        "endpoint_disabled": ENDPOINT_DISABLED,
        "recipient_removed": RECIPIENT_REMOVED,
        "chat_removed": CHAT_REMOVED,
    }
    leased_until = now + lease
    with transaction(conn):
        # Parked, not returned: a delivery whose destination is gone has nowhere to go.
        # Only among the first `limit` due, so a claim never reads the whole backlog.
        parked = [
            (params["now"], row["reason"], row["delivery_id"])
            for row in conn.execute(_DUE_HEAD, params).fetchall()
            if row["reason"] is not None
        ]
        conn.executemany(_PARK, parked)
        rows = conn.execute(_CLAIMABLE, params).fetchall()
        conn.executemany(
            _LEASE, [(mapping.time_text(leased_until), r["delivery_id"]) for r in rows]
        )
    return Claim([_claimed(row, leased_until) for row in rows], parked=len(parked))


def _claimed(row: sqlite3.Row, leased_until: datetime) -> ClaimedDelivery:
    return ClaimedDelivery(
        delivery=ROW_MAPPER.delivery_from_row(row),
        event=ROW_MAPPER.outbox_row_from_row(row, prefix="o_").event,
        endpoint=None
        if row["e_endpoint_id"] is None
        else ROW_MAPPER.endpoint_from_row(row, prefix="e_"),
        recipient=(
            None
            if row["r_recipient_id"] is None
            else ROW_MAPPER.recipient_from_row(row, prefix="r_")
        ),
        leased_until=leased_until,
        chat=None
        if row["ch_destination_id"] is None
        else ROW_MAPPER.chat_from_row(row, prefix="ch_"),
    )


def _recorded(
    conn: sqlite3.Connection, update: str, params: tuple[object, ...], attempt: DeliveryAttempt
) -> None:
    """Runs the outcome's UPDATE and, when it changed the delivery, keeps the attempt,
    in one transaction."""
    with transaction(conn):
        if conn.execute(update, params).rowcount > 0:
            at = mapping.time_text(attempt.attempted_at)
            kept = (attempt.delivery_id, at, attempt.outcome.value, attempt.status_code)
            conn.execute(records_sql.INSERT_ATTEMPT, (*kept, attempt.error))


def _record_success(
    conn: sqlite3.Connection, delivery_id: str, now: datetime, status_code: int | None
) -> None:
    attempt = DeliveryAttempt(delivery_id, now, AttemptOutcome.DELIVERED, status_code, None)
    _recorded(conn, _SUCCEEDED, (mapping.time_text(now), delivery_id), attempt)


def _record_failure(
    conn: sqlite3.Connection,
    delivery_id: str,
    now: datetime,
    error: str,
    next_attempt_at: datetime | None,
    *,
    status_code: int | None,
) -> None:
    kept = error_text(error)
    attempt = DeliveryAttempt(delivery_id, now, AttemptOutcome.FAILED, status_code, kept)
    if next_attempt_at is None:
        params: tuple[object, ...] = (kept, mapping.time_text(now), delivery_id)
        _recorded(conn, _FAILED_DEAD, params, attempt)
    else:
        params = (mapping.time_text(next_attempt_at), kept, delivery_id)
        _recorded(conn, _FAILED_AGAIN, params, attempt)


def _list_deliveries(conn: sqlite3.Connection, dead_only: bool, limit: int) -> list[Delivery]:
    query = _LIST_DEAD if dead_only else _LIST_DELIVERIES
    return [ROW_MAPPER.delivery_from_row(row) for row in conn.execute(query, (limit,))]


def _retry_dead(conn: sqlite3.Connection, event_id: str, now: datetime) -> int | None:
    with transaction(conn):
        retried = conn.execute(_RETRY_DEAD, (mapping.time_text(now), event_id)).rowcount
        if retried == 0 and conn.execute(_EVENT_KNOWN, (event_id,)).fetchone() is None:
            return None
    return int(retried)


def _backlog(conn: sqlite3.Connection) -> tuple[int, datetime | None]:
    row = conn.execute(_BACKLOG).fetchone()
    return int(row["waiting"]), ROW_MAPPER.read_optional_time(row["oldest"])


_COUNTS = sql.COUNTS


def _counts(conn: sqlite3.Connection) -> DeliveryCounts:
    row = conn.execute(_COUNTS).fetchone()
    return DeliveryCounts(
        unpublished=int(row["unpublished"]),
        pending=int(row["pending"]),
        delivered=int(row["delivered"]),
        dead=int(row["dead"]),
    )


class SqliteDeliveries(SqlDeliveryRetries):
    def __init__(self, worker: Worker, sealer: Sealer) -> None:
        self._worker = worker
        self._sealer = sealer
        ex = SqliteExecutor(worker)
        self._records = SqlDeliveryRecords(ex)
        self._fan_out = SqlFanOut(ex, FAN_OUT)

    async def fan_out(
        self, now: datetime, limit: int, autoresponse_limit: int = DEFAULT_AUTORESPONSE_HOURLY_LIMIT
    ) -> int:
        return await self._fan_out.fan_out(now, limit, autoresponse_limit)

    async def claim_due(self, now: datetime, lease: timedelta, limit: int) -> Claim:
        """Parks (dead, no attempt counted, last_error saying why) any of the first
        `limit` due deliveries whose endpoint was removed or disabled or whose recipient
        was removed, and leases the first `limit` of the others."""
        return opened_claim(await self._worker.run(_claim_due, now, lease, limit), self._sealer)

    async def record_success(
        self, delivery_id: str, now: datetime, status_code: int | None = None
    ) -> None:
        await self._worker.run(_record_success, delivery_id, now, status_code)

    async def record_failure(
        self,
        delivery_id: str,
        now: datetime,
        error: str,
        next_attempt_at: datetime | None,
        status_code: int | None = None,
    ) -> None:
        await self._worker.run(
            _record_failure, delivery_id, now, error, next_attempt_at, status_code=status_code
        )

    async def get_delivery(self, delivery_id: str) -> DeliveryRecord | None:
        return await self._records.get(delivery_id)

    async def submission_deliveries(self, submission_id: str) -> list[DeliveryRecord]:
        return await self._records.of_submission(submission_id)

    async def endpoint_deliveries(
        self,
        endpoint_id: str,
        *,
        state: DeliveryState | None = None,
        after: DeliveryPosition | None = None,
        limit: int = 50,
    ) -> list[DeliveryRecord]:
        return await self._records.of_endpoint(endpoint_id, state, after, limit)

    async def queue_direct(
        self,
        event: OutboxEvent,
        kind: DestinationKind,
        destination_id: str,
        now: datetime,
        *,
        throttled: bool = False,
    ) -> Delivery:
        return await self._records.queue_direct(
            event, kind, destination_id, now, throttled=throttled
        )

    async def list_deliveries(self, *, dead_only: bool = False, limit: int = 100) -> list[Delivery]:
        return await self._worker.run(_list_deliveries, dead_only, limit)

    async def retry_dead(self, event_id: str, now: datetime) -> int | None:
        return await self._worker.run(_retry_dead, event_id, now)

    async def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        return await self._worker.run(_backlog)

    async def counts(self) -> DeliveryCounts:
        return await self._worker.run(_counts)
