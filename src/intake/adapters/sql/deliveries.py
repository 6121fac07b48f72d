"""The deliveries repository (DeliveryRepository), for both SQL stores: the relay's
fan-out (fan_out.py), claim (claims.py) and record of attempts (attempts.py), a
delivery's record (delivery_records.py), and the outbox as the operator sees it, here.
Each store hands in what it says its own way (sqlite/dialect.py, postgres/dialect.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

from attrs import frozen

from intake.adapters import sql_statements as sql
from intake.adapters.sql.attempts import SqlAttempts
from intake.adapters.sql.claims import SqlClaims
from intake.adapters.sql.delivery_records import SqlDeliveryRecords
from intake.adapters.sql.executor import Executor, Transaction
from intake.adapters.sql.fan_out import FanOutStatements, SqlFanOut
from intake.domain.deliveries import Delivery
from intake.domain.form_messages import DEFAULT_AUTORESPONSE_HOURLY_LIMIT
from intake.ports.deliveries import Claim, DeliveryCounts
from intake.ports.sealer import Sealer

_BACKLOG = """
    SELECT count(*) AS waiting, min(created_at) AS oldest FROM (
        SELECT created_at FROM outbox WHERE published_at IS NULL AND dead_at IS NULL
        UNION ALL
        SELECT created_at FROM deliveries WHERE next_attempt_at IS NOT NULL
    ) AS waiting
"""


@frozen
class DeliveryStatements:
    """What a store says its own way: how the fan-out takes the outbox's rows, and the
    claim and the record of an attempt in one statement each where it has them."""

    fan_out: FanOutStatements
    claim: str | None = None
    with_attempt: str | None = None


class SqlDeliveries(SqlDeliveryRecords):
    def __init__(self, ex: Executor, sealer: Sealer, statements: DeliveryStatements) -> None:
        super().__init__(ex)
        self._fan_out = SqlFanOut(ex, statements.fan_out)
        self._claims = SqlClaims(ex, sealer, statements.claim)
        self._attempts = SqlAttempts(ex, statements.with_attempt)

    async def fan_out(
        self, now: datetime, limit: int, autoresponse_limit: int = DEFAULT_AUTORESPONSE_HOURLY_LIMIT
    ) -> int:
        return await self._fan_out.fan_out(now, limit, autoresponse_limit)

    async def claim_due(self, now: datetime, lease: timedelta, limit: int) -> Claim:
        return await self._claims.claim_due(now, lease, limit)

    async def record_success(
        self, delivery_id: str, now: datetime, status_code: int | None = None
    ) -> None:
        await self._attempts.record_success(delivery_id, now, status_code)

    async def record_failure(
        self,
        delivery_id: str,
        now: datetime,
        error: str,
        next_attempt_at: datetime | None,
        status_code: int | None = None,
    ) -> None:
        await self._attempts.record_failure(delivery_id, now, error, next_attempt_at, status_code)

    async def list_deliveries(self, *, dead_only: bool = False, limit: int = 100) -> list[Delivery]:
        rows = await self._ex.fetch_all(
            sql.LIST_DEAD if dead_only else sql.LIST_DELIVERIES, (limit,)
        )
        return [self._ex.rows.delivery_from_row(row) for row in rows]

    async def retry_dead(self, event_id: str, now: datetime) -> int | None:
        return await self._ex.transaction(_retry_dead, event_id, self._ex.rows.codec.time(now))

    async def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        row = await self._ex.fetch_one(_BACKLOG)
        if row is None:
            return 0, None
        return int(row["waiting"]), self._ex.rows.read_optional_time(row["oldest"])

    async def counts(self) -> DeliveryCounts:
        row = await self._ex.fetch_one(sql.COUNTS)
        if row is None:
            return DeliveryCounts()
        return DeliveryCounts(
            unpublished=int(row["unpublished"]),
            pending=int(row["pending"]),
            delivered=int(row["delivered"]),
            dead=int(row["dead"]),
        )


async def _retry_dead(tx: Transaction, event_id: str, at: object) -> int | None:
    """The event's dead deliveries pending again; None when no such event is kept."""
    retried = await tx.execute(sql.RETRY_DEAD, (at, event_id))
    if retried == 0 and await tx.fetch_one(sql.EVENT_KNOWN, (event_id,)) is None:
        return None
    return retried
