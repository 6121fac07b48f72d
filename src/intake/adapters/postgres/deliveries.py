"""Deliveries over the pool (a form's destinations: sql/destinations.py, the fan-out:
sql/fan_out.py). Several relays may run at once, each in its own process: the fan-out
(dialect.FAN_OUT) and the claim take their rows FOR UPDATE SKIP LOCKED, so two relays
never take the same outbox row nor lease the same delivery, and neither waits for the
other."""

from __future__ import annotations

from datetime import datetime, timedelta

from intake.adapters import chat_statements as chat_sql
from intake.adapters import sql_statements as sql
from intake.adapters.delivery_rules import (
    CHAT_REMOVED,
    ENDPOINT_DISABLED,
    ENDPOINT_REMOVED,
    RECIPIENT_REMOVED,
    error_text,
)
from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.dialect import FAN_OUT
from intake.adapters.postgres.executor import PostgresExecutor
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.sealed_columns import opened_claim
from intake.adapters.sql.delivery_records import SqlDeliveryRecords, SqlDeliveryRetries
from intake.adapters.sql.fan_out import SqlFanOut
from intake.adapters.sql_statements import for_psycopg
from intake.domain.deliveries import (
    Delivery,
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
_SUCCEEDED = _with_attempt(sql.SUCCEEDED)
_FAILED_AGAIN = _with_attempt(sql.FAILED_AGAIN)
_FAILED_DEAD = _with_attempt(sql.FAILED_DEAD)

# A delivery is pending exactly when it has a next_attempt_at (a CHECK says so): the
# queries below ask that column alone, as the deliveries_due index does
# (migrations/0003_delivery.sql says why).
#
# One statement, one snapshot, one round trip:
# - head: of the first `limit` due (the deliveries_due index, in its order; read, not
#   locked), those that cannot be sent, locked, with the reason. Only those are looked
#   at, so a claim never reads the whole backlog, and only those are locked, so another
#   relay's claim skips no row this one does not take;
# - parked: the head, dead, with the reason, no attempt counted. A row another relay
#   parked meanwhile is re-read when locked, and is no longer pending;
# - claimed: the first `limit` due that can be sent, leased (a suspended workspace's are
#   held where they are, pending, no attempt counted, until it is active again). The
#   UPDATE over a locking subquery is what makes the lease exclusive: a row another
#   relay holds is skipped, and one it leased and committed meanwhile is re-read and no
#   longer due.
# The two UPDATEs touch different rows (sendable or not, in the one snapshot). Then the
# leased rows with their event and destination, joined by kind, each with the count of
# those parked; one row of NULLs but that count when none was leased.
_CLAIM_HEAD = """
    WITH head AS (
        SELECT h.delivery_id,
            CASE
                WHEN h.kind = 'webhook' AND e.endpoint_id IS NULL THEN %(endpoint_removed)s
                WHEN h.kind = 'webhook' THEN %(endpoint_disabled)s
                WHEN h.kind = 'email' THEN %(recipient_removed)s
                ELSE %(chat_removed)s
            END AS reason
        FROM (
            SELECT f.delivery_id FROM deliveries AS f
            WHERE f.next_attempt_at <= %(now)s
                AND (f.leased_until IS NULL OR f.leased_until <= %(now)s)
            ORDER BY f.next_attempt_at, f.delivery_id
            LIMIT %(limit)s
        ) AS first
        JOIN deliveries AS h ON h.delivery_id = first.delivery_id
        LEFT JOIN webhook_endpoints AS e
            ON h.kind = 'webhook' AND e.endpoint_id = h.destination_id
        LEFT JOIN notification_recipients AS r
            ON h.kind = 'email' AND r.recipient_id = h.destination_id
        LEFT JOIN chat_destinations AS ch
            ON h.kind = 'chat' AND ch.destination_id = h.destination_id
        WHERE h.next_attempt_at IS NOT NULL
            AND NOT ((e.endpoint_id IS NOT NULL AND e.disabled_at IS NULL)
                OR r.recipient_id IS NOT NULL OR ch.destination_id IS NOT NULL
                OR (h.kind = 'email' AND substr(h.destination_id, 1, 4) = 'ars_')
                OR h.kind = 'akismet')
        FOR UPDATE OF h SKIP LOCKED
    ),
    parked AS (
        UPDATE deliveries AS d
        SET state = 'dead', next_attempt_at = NULL, leased_until = NULL,
            dead_at = %(now)s, last_error = head.reason
        FROM head
        WHERE d.delivery_id = head.delivery_id
        RETURNING d.delivery_id
    ),
    claimed AS (
        UPDATE deliveries AS d
        SET leased_until = %(leased_until)s
        WHERE d.delivery_id IN (
            SELECT c.delivery_id
            FROM deliveries AS c
            LEFT JOIN webhook_endpoints AS e
                ON c.kind = 'webhook' AND e.endpoint_id = c.destination_id
            LEFT JOIN notification_recipients AS r
                ON c.kind = 'email' AND r.recipient_id = c.destination_id
            LEFT JOIN chat_destinations AS ch
                ON c.kind = 'chat' AND ch.destination_id = c.destination_id
            WHERE c.next_attempt_at <= %(now)s
                AND (c.leased_until IS NULL OR c.leased_until <= %(now)s)
                AND ((e.endpoint_id IS NOT NULL AND e.disabled_at IS NULL)
                    OR r.recipient_id IS NOT NULL OR ch.destination_id IS NOT NULL
                    OR (c.kind = 'email' AND substr(c.destination_id, 1, 4) = 'ars_')
                    OR c.kind = 'akismet')
                AND EXISTS (
                    SELECT 1 FROM outbox AS o
                    JOIN workspaces AS w ON w.workspace_id = o.workspace_id
                    WHERE o.event_id = c.event_id AND w.active
                )
            ORDER BY c.next_attempt_at, c.delivery_id
            LIMIT %(limit)s
            FOR UPDATE OF c SKIP LOCKED
        )
        RETURNING d.*
    )
    SELECT c.delivery_id, c.event_id, c.kind, c.destination_id, c.state, c.attempts,
        c.next_attempt_at, c.leased_until, c.last_error, c.delivered_at, c.dead_at,
        c.created_at,
"""
_CLAIM_TAIL = """,
        p.parked
    FROM (SELECT count(*) AS parked FROM parked) AS p
    LEFT JOIN (
        claimed AS c
        JOIN outbox AS o ON o.event_id = c.event_id
        LEFT JOIN webhook_endpoints AS e
            ON c.kind = 'webhook' AND e.endpoint_id = c.destination_id
        LEFT JOIN notification_recipients AS r
            ON c.kind = 'email' AND r.recipient_id = c.destination_id
        LEFT JOIN chat_destinations AS ch
            ON c.kind = 'chat' AND ch.destination_id = c.destination_id
    ) ON true
    ORDER BY c.next_attempt_at, c.delivery_id
"""
_CLAIM = _CLAIM_HEAD + sql.CLAIMED_WITH + chat_sql.CLAIMED_CHAT_WITH + _CLAIM_TAIL
_LIST_DELIVERIES = for_psycopg(sql.LIST_DELIVERIES)
_LIST_DEAD = for_psycopg(sql.LIST_DEAD)
_RETRY_DEAD = for_psycopg(sql.RETRY_DEAD)
_EVENT_KNOWN = for_psycopg(sql.EVENT_KNOWN)
_BACKLOG = """
    SELECT count(*) AS waiting, min(created_at) AS oldest FROM (
        SELECT created_at FROM outbox WHERE published_at IS NULL AND dead_at IS NULL
        UNION ALL
        SELECT created_at FROM deliveries WHERE next_attempt_at IS NOT NULL
    ) AS waiting
"""


_COUNTS = for_psycopg(sql.COUNTS)


class PostgresDeliveries(SqlDeliveryRetries):
    def __init__(self, db: Database, sealer: Sealer) -> None:
        self._db = db
        self._sealer = sealer
        ex = PostgresExecutor(db)
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
        leased_until = mapping.moment(now + lease)
        params = {
            "now": mapping.moment(now),
            "leased_until": leased_until,
            "limit": limit,
            "endpoint_removed": ENDPOINT_REMOVED,
            "endpoint_disabled": ENDPOINT_DISABLED,
            "recipient_removed": RECIPIENT_REMOVED,
            "chat_removed": CHAT_REMOVED,
        }
        rows = await self._db.fetch_all(_CLAIM, params)
        leased = [
            ClaimedDelivery(
                delivery=ROW_MAPPER.delivery_from_row(row),
                event=ROW_MAPPER.outbox_row_from_row(row, prefix="o_").event,
                endpoint=(
                    None
                    if row["e_endpoint_id"] is None
                    else ROW_MAPPER.endpoint_from_row(row, "e_")
                ),
                recipient=(
                    None
                    if row["r_recipient_id"] is None
                    else ROW_MAPPER.recipient_from_row(row, "r_")
                ),
                leased_until=mapping.utc(leased_until),
                chat=(
                    None
                    if row["ch_destination_id"] is None
                    else ROW_MAPPER.chat_from_row(row, "ch_")
                ),
            )
            for row in rows
            if row["delivery_id"] is not None
        ]
        claim = Claim(leased, parked=int(rows[0]["parked"]) if rows else 0)
        return opened_claim(claim, self._sealer)

    async def record_success(
        self, delivery_id: str, now: datetime, status_code: int | None = None
    ) -> None:
        at = mapping.moment(now)
        await self._db.execute(_SUCCEEDED, (at, delivery_id, at, status_code, None))

    async def record_failure(
        self,
        delivery_id: str,
        now: datetime,
        error: str,
        next_attempt_at: datetime | None,
        status_code: int | None = None,
    ) -> None:
        at, kept = mapping.moment(now), error_text(error)
        attempt = (at, status_code, kept)
        if next_attempt_at is None:
            await self._db.execute(_FAILED_DEAD, (kept, at, delivery_id, *attempt))
        else:
            again = mapping.moment(next_attempt_at)
            await self._db.execute(_FAILED_AGAIN, (again, kept, delivery_id, *attempt))

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
        rows = await self._db.fetch_all(_LIST_DEAD if dead_only else _LIST_DELIVERIES, (limit,))
        return [ROW_MAPPER.delivery_from_row(row) for row in rows]

    async def retry_dead(self, event_id: str, now: datetime) -> int | None:
        async with self._db.connection() as conn, conn.transaction():
            retried = (await conn.execute(_RETRY_DEAD, (mapping.moment(now), event_id))).rowcount
            if retried == 0:
                known = await conn.execute(_EVENT_KNOWN, (event_id,))
                if await known.fetchone() is None:
                    return None
            return retried

    async def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        row = await self._db.fetch_one(_BACKLOG)
        if row is None:
            return 0, None
        return int(row["waiting"]), ROW_MAPPER.read_optional_time(row["oldest"])

    async def counts(self) -> DeliveryCounts:
        row = await self._db.fetch_one(_COUNTS)
        if row is None:
            return DeliveryCounts()
        return DeliveryCounts(
            unpublished=int(row["unpublished"]),
            pending=int(row["pending"]),
            delivered=int(row["delivered"]),
            dead=int(row["dead"]),
        )
