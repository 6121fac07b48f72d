"""The relay's claim (DeliveryRepository.claim_due), for both SQL stores: the first due
deliveries leased, and any among them whose destination is gone parked as dead.

Written here as steps of one transaction: SQLite's BEGIN IMMEDIATE holds the write lock,
so a second relay process waits for the first one's claim rather than taking the same
rows. PostgreSQL claims in one statement of its own instead (postgres/dialect.py, CLAIM):
rows locked FOR UPDATE SKIP LOCKED, so that relays claim at once, each its own rows, and
neither waits for the other. Both answer the same columns."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from intake.adapters import chat_statements as chat_sql
from intake.adapters import sql_statements as sql
from intake.adapters.delivery_rules import (
    CHAT_REMOVED,
    ENDPOINT_DISABLED,
    ENDPOINT_REMOVED,
    RECIPIENT_REMOVED,
)
from intake.adapters.sealed_columns import opened_claim
from intake.adapters.sql.executor import Executor, Transaction
from intake.adapters.sql_rows import Row, RowMapper
from intake.ports.deliveries import Claim, ClaimedDelivery
from intake.ports.sealer import Sealer


def destination_joins(delivery: str) -> str:
    """The destination of the deliveries row `delivery` (its alias), joined by its kind:
    `e` its webhook endpoint, `r` its notification recipient, `ch` its chat destination.
    The relay's every statement that asks whether a destination is there joins it so."""
    return f"""
    LEFT JOIN webhook_endpoints AS e
        ON {delivery}.kind = 'webhook' AND e.endpoint_id = {delivery}.destination_id
    LEFT JOIN notification_recipients AS r
        ON {delivery}.kind = 'email' AND r.recipient_id = {delivery}.destination_id
    LEFT JOIN chat_destinations AS ch
        ON {delivery}.kind = 'chat' AND ch.destination_id = {delivery}.destination_id
"""


def sendable(delivery: str) -> str:
    """Whether the delivery `delivery` can be sent, over destination_joins: its endpoint
    is there and enabled, its recipient or chat destination is there, or it needs none
    (an autoresponse, addressed by its rule, and a report to Akismet)."""
    return f"""((e.endpoint_id IS NOT NULL AND e.disabled_at IS NULL)
        OR r.recipient_id IS NOT NULL OR ch.destination_id IS NOT NULL
        OR ({delivery}.kind = 'email' AND substr({delivery}.destination_id, 1, 4) = 'ars_')
        OR {delivery}.kind = 'akismet')"""


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
    FROM deliveries AS d {joins}
    WHERE d.next_attempt_at <= :now AND (d.leased_until IS NULL OR d.leased_until <= :now)
    ORDER BY d.next_attempt_at, d.delivery_id LIMIT :limit
""".format(joins=destination_joins("d"))  # noqa: S608 - constants only
_PARK = """
    UPDATE deliveries
    SET state = 'dead', next_attempt_at = NULL, leased_until = NULL, dead_at = :now,
        last_error = :reason
    WHERE delivery_id = :delivery_id
"""
# The first `limit` due that can be sent, with their event and destination. A suspended
# workspace's are held where they are (pending, no attempt counted) until it is active.
_DELIVERY_COLUMNS = """
    d.delivery_id, d.event_id, d.kind, d.destination_id, d.state, d.attempts,
    d.next_attempt_at, d.leased_until, d.last_error, d.delivered_at, d.dead_at, d.created_at,
"""
CLAIMED_COLUMNS = _DELIVERY_COLUMNS + sql.CLAIMED_WITH + chat_sql.CLAIMED_CHAT_WITH
_CLAIMABLE_FROM = """
    FROM deliveries AS d
    JOIN outbox AS o ON o.event_id = d.event_id
    JOIN workspaces AS w ON w.workspace_id = o.workspace_id AND w.active = :active {joins}
    WHERE d.next_attempt_at <= :now AND (d.leased_until IS NULL OR d.leased_until <= :now)
        AND {sendable}
    ORDER BY d.next_attempt_at, d.delivery_id LIMIT :limit
""".format(joins=destination_joins("d"), sendable=sendable("d"))
_SELECT = "SELECT"
_CLAIMABLE = _SELECT + CLAIMED_COLUMNS + _CLAIMABLE_FROM
_LEASE = "UPDATE deliveries SET leased_until = :leased_until WHERE delivery_id = :delivery_id"


class SqlClaims:
    def __init__(self, ex: Executor, sealer: Sealer, one_statement: str | None = None) -> None:
        """`one_statement`: the store's own claim (its columns, then `parked`, the count
        of those parked; one row of NULLs but that count when none was leased), or None
        for the steps below."""
        self._ex = ex
        self._sealer = sealer
        self._one_statement = one_statement

    async def claim_due(self, now: datetime, lease: timedelta, limit: int) -> Claim:
        codec = self._ex.rows.codec
        leased_until = now + lease
        params = {
            "now": codec.time(now),
            "leased_until": codec.time(leased_until),
            "limit": limit,
            "active": codec.boolean(True),
            "endpoint_removed": ENDPOINT_REMOVED,
            "endpoint_disabled": ENDPOINT_DISABLED,
            "recipient_removed": RECIPIENT_REMOVED,
            "chat_removed": CHAT_REMOVED,
        }
        if self._one_statement is None:
            rows, parked = await self._ex.transaction(_claim, params)
        else:
            found = await self._ex.fetch_all(self._one_statement, params)
            rows = [row for row in found if row["delivery_id"] is not None]
            parked = int(found[0]["parked"]) if found else 0
        leased = [_claimed(self._ex.rows, row, leased_until) for row in rows]
        return opened_claim(Claim(leased, parked=parked), self._sealer)


async def _claim(tx: Transaction, params: dict[str, object]) -> tuple[Sequence[Row], int]:
    # Parked, not returned: a delivery whose destination is gone has nowhere to go.
    # Only among the first `limit` due, so a claim never reads the whole backlog.
    parked = [
        {"now": params["now"], "reason": row["reason"], "delivery_id": row["delivery_id"]}
        for row in await tx.fetch_all(_DUE_HEAD, params)
        if row["reason"] is not None
    ]
    await tx.execute_many(_PARK, parked)
    rows = await tx.fetch_all(_CLAIMABLE, params)
    until = params["leased_until"]
    leases = [{"leased_until": until, "delivery_id": row["delivery_id"]} for row in rows]
    await tx.execute_many(_LEASE, leases)
    return rows, len(parked)


def _claimed(rows: RowMapper, row: Row, leased_until: datetime) -> ClaimedDelivery:
    return ClaimedDelivery(
        delivery=rows.delivery_from_row(row),
        event=rows.outbox_row_from_row(row, prefix="o_").event,
        endpoint=None if row["e_endpoint_id"] is None else rows.endpoint_from_row(row, "e_"),
        recipient=None if row["r_recipient_id"] is None else rows.recipient_from_row(row, "r_"),
        leased_until=leased_until,
        chat=None if row["ch_destination_id"] is None else rows.chat_from_row(row, "ch_"),
    )
