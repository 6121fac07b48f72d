"""What both SQL stores say alike about a delivery's record: its attempts, the owner's
reads of deliveries (with their event's ids), a test event queued to one endpoint, and
the retry of one delivery. Written in sqlite3's placeholder styles, as `sql_statements`;
the PostgreSQL store sends them through `for_psycopg`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from intake.adapters import sql_statements
from intake.adapters.sql_rows import Row, RowMapper
from intake.domain.deliveries import (
    AttemptOutcome,
    DeliveryAttempt,
    DeliveryPosition,
    DeliveryState,
)
from intake.domain.model import EventType
from intake.ports.deliveries import DeliveryRecord

GET_RECIPIENT = sql_statements.SELECT_RECIPIENT + " WHERE recipient_id = ?"
GET_RECIPIENT_IN = sql_statements.in_workspace(GET_RECIPIENT, "notification_recipients")
INSERT_ATTEMPT = """
    INSERT INTO delivery_attempts (delivery_id, attempted_at, outcome, status_code, error)
    VALUES (?, ?, ?, ?, ?)
"""
SELECT_ATTEMPTS = """
    SELECT delivery_id, attempted_at, outcome, status_code, error FROM delivery_attempts
"""
# A removed endpoint's undelivered deliveries go with it; the delivered stay. Their
# attempts go by the cascade.
DROP_UNDELIVERED = """
    DELETE FROM deliveries
    WHERE kind = 'webhook' AND destination_id = ? AND state <> 'delivered'
"""
# A delivery with its event's type and ids, the event's columns aliased `o_*`.
SELECT_RECORD = """
    SELECT d.delivery_id, d.event_id, d.kind, d.destination_id, d.state, d.attempts,
        d.next_attempt_at, d.leased_until, d.last_error, d.delivered_at, d.dead_at,
        d.created_at, o.event_type AS o_event_type, o.submission_id AS o_submission_id,
        o.form_id AS o_form_id, o.workspace_id AS o_workspace_id
    FROM deliveries AS d JOIN outbox AS o ON o.event_id = d.event_id
"""
GET_RECORD = SELECT_RECORD + " WHERE d.delivery_id = ?"
# The outbox_submission index, then the deliveries' unique (event_id, ...) index.
SUBMISSION_RECORDS = (
    SELECT_RECORD + " WHERE o.submission_id = ? ORDER BY d.created_at, d.delivery_id"
)
# When each test (or confirmation) queued to one destination since a time was queued:
# what the throttle on sending them counts (domain/destination_limits.py). The
# deliveries_destination index leads with destination_id.
RECENT_DIRECT = """
    SELECT d.created_at FROM deliveries AS d
    JOIN outbox AS o ON o.event_id = d.event_id
    WHERE d.destination_id = ? AND d.kind = ? AND d.created_at > ?
        AND o.event_type IN ('webhook.test', 'mail.test', 'chat.test')
"""
# When each consent mail of a workspace was queued since a time (the outbox_consent
# index): what the workspace's consent windows count.
RECENT_CONSENTS = """
    SELECT created_at FROM outbox
    WHERE workspace_id = ? AND event_type = 'mail.confirm' AND created_at > ?
"""
INSERT_PUBLISHED_EVENT = """
    INSERT INTO outbox (
        event_id, event_type, submission_id, form_id, workspace_id, payload, created_at,
        next_attempt_at, published_at
    ) VALUES (
        :event_id, :event_type, :submission_id, :form_id, :workspace_id, :payload, :created_at,
        :next_attempt_at, :created_at
    )
"""
# Counted afresh, as RETRY_DEAD; the last error stays until the next attempt.
RETRY_ONE_DEAD = """
    UPDATE deliveries
    SET state = 'pending', attempts = 0, next_attempt_at = ?, leased_until = NULL,
        dead_at = NULL
    WHERE delivery_id = ? AND state = 'dead'
"""
RETRY_DEAD_TO = """
    UPDATE deliveries
    SET state = 'pending', attempts = 0, next_attempt_at = ?, leased_until = NULL,
        dead_at = NULL
    WHERE kind = ? AND destination_id = ? AND state = 'dead'
"""
# A lease held stays held: the relay holding it is sending now.
RETRY_ONE_PENDING = """
    UPDATE deliveries SET next_attempt_at = ? WHERE delivery_id = ? AND state = 'pending'
"""


def endpoint_records(
    endpoint_id: str,
    state: DeliveryState | None,
    after: DeliveryPosition | None,
    limit: int,
    moment: Callable[[datetime], object],
) -> tuple[str, dict[str, object]]:
    """An endpoint's deliveries newest first (the deliveries_destination index, read
    backwards), `state` only when given, after `after` when given: the statement with its
    named parameters, times written by the store's `moment`."""
    terms = ["d.kind = 'webhook'", "d.destination_id = :endpoint_id"]
    params: dict[str, object] = {"endpoint_id": endpoint_id, "limit": limit}
    if state is not None:
        terms.append("d.state = :state")
        params["state"] = state.value
    if after is not None:
        terms.append(
            "(d.created_at < :after_at OR (d.created_at = :after_at AND d.delivery_id < :after_id))"
        )
        params["after_at"] = moment(after.created_at)
        params["after_id"] = after.delivery_id
    query = (
        SELECT_RECORD
        + " WHERE "
        + " AND ".join(terms)
        + " ORDER BY d.created_at DESC, d.delivery_id DESC LIMIT :limit"
    )
    return query, params


def attempt_from_row(mapper: RowMapper, row: Row) -> DeliveryAttempt:
    return DeliveryAttempt(
        delivery_id=row["delivery_id"],
        attempted_at=mapper.codec.read_time(row["attempted_at"]),
        outcome=AttemptOutcome(row["outcome"]),
        status_code=row["status_code"],
        error=row["error"],
    )


def records_from_rows(
    mapper: RowMapper, rows: Sequence[Row], attempts: Sequence[DeliveryAttempt]
) -> list[DeliveryRecord]:
    """The deliveries of `rows` (read with SELECT_RECORD), each with its attempts out of
    `attempts` (in the order they were made)."""
    by_delivery: dict[str, list[DeliveryAttempt]] = {}
    for attempt in attempts:
        by_delivery.setdefault(attempt.delivery_id, []).append(attempt)
    return [
        DeliveryRecord(
            delivery=mapper.delivery_from_row(row),
            event_type=EventType(row["o_event_type"]),
            submission_id=row["o_submission_id"],
            form_id=row["o_form_id"],
            workspace_id=row["o_workspace_id"],
            attempts=tuple(by_delivery.get(row["delivery_id"], ())),
        )
        for row in rows
    ]
