"""The relay's record of an attempt (DeliveryRepository.record_success, .record_failure),
for both SQL stores: the outcome's UPDATE and, when it changed the delivery, the attempt
kept, in one transaction. PostgreSQL sends the two as one statement of its own
(postgres/dialect.py, WITH_ATTEMPT): one round trip where a transaction takes four."""

from __future__ import annotations

from datetime import datetime

from intake.adapters import delivery_records as records_sql
from intake.adapters import sql_statements as sql
from intake.adapters.delivery_rules import error_text
from intake.adapters.sql.executor import Executor, Transaction
from intake.domain.deliveries import AttemptOutcome


class SqlAttempts:
    def __init__(self, ex: Executor, with_attempt: str | None = None) -> None:
        """`with_attempt`: the store's one statement of an `{update}` and the attempt kept
        when it changed the delivery, taking the UPDATE's parameters, then the attempt's
        time, outcome, status code and error; None: two statements in a transaction."""
        self._ex = ex
        updates = (sql.SUCCEEDED, sql.FAILED_DEAD, sql.FAILED_AGAIN)
        self._one_statement = (
            None if with_attempt is None else {u: with_attempt.format(update=u) for u in updates}
        )

    async def record_success(
        self, delivery_id: str, now: datetime, status_code: int | None
    ) -> None:
        at = self._ex.rows.codec.time(now)
        attempt = (at, AttemptOutcome.DELIVERED.value, status_code, None)
        await self._record(sql.SUCCEEDED, (at, delivery_id), delivery_id, attempt)

    async def record_failure(
        self,
        delivery_id: str,
        now: datetime,
        error: str,
        next_attempt_at: datetime | None,
        status_code: int | None,
    ) -> None:
        time, kept = self._ex.rows.codec.time, error_text(error)
        attempt = (time(now), AttemptOutcome.FAILED.value, status_code, kept)
        if next_attempt_at is None:
            params: tuple[object, ...] = (kept, time(now), delivery_id)
            await self._record(sql.FAILED_DEAD, params, delivery_id, attempt)
        else:
            params = (time(next_attempt_at), kept, delivery_id)
            await self._record(sql.FAILED_AGAIN, params, delivery_id, attempt)

    async def _record(
        self,
        update: str,
        params: tuple[object, ...],
        delivery_id: str,
        attempt: tuple[object, ...],
    ) -> None:
        if self._one_statement is not None:
            await self._ex.execute(self._one_statement[update], (*params, *attempt))
        else:
            await self._ex.transaction(_recorded, update, params, (delivery_id, *attempt))


async def _recorded(
    tx: Transaction, update: str, params: tuple[object, ...], attempt: tuple[object, ...]
) -> None:
    if await tx.execute(update, params) > 0:
        await tx.execute(records_sql.INSERT_ATTEMPT, attempt)
