"""The fan-out's part for forms' messages over PostgreSQL (autoresponse_rules.py says
what): notification recipients left out where a form mails none, confirmations queued
within their limits, forward-only submissions queued for erasure. Called inside the
fan-out's transaction. Relays fan out at once, each its own rows: a transaction
advisory lock per form (taken in form order, so two relays never wait on each other in
a circle) makes each count and the insert after it one step, exact across relays."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from intake.adapters import autoresponse_rules as rules
from intake.adapters.delivery_rules import FormDestinations, fan_out_rows
from intake.adapters.postgres import mapping
from intake.domain.form_messages import FormMessages
from intake.domain.model import OutboxEvent

_FORMS_MESSAGES = "SELECT form_id, messages FROM forms WHERE form_id = ANY (%s)"
_LOCK_FORM = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_SENT_BY_FORM = "SELECT count(*) AS sent FROM autoresponses WHERE form_id = %s AND queued_at > %s"
_SENT_TO_ADDRESS = """
    SELECT 1 FROM autoresponses WHERE form_id = %s AND address_hash = %s AND queued_at > %s
    LIMIT 1
"""
_INSERT_AUTORESPONSE = """
    INSERT INTO autoresponses (autoresponse_id, form_id, event_id, address_hash, queued_at)
    VALUES (%s, %s, %s, %s, %s) ON CONFLICT (autoresponse_id) DO NOTHING
"""
# Only submissions still kept: an owner may have erased one before its fan-out.
_QUEUE_ERASURES = """
    INSERT INTO forward_erasures (submission_id, queued_at)
    SELECT submission_id, %s FROM submissions WHERE submission_id = ANY (%s)
    ON CONFLICT (submission_id) DO NOTHING
"""

Row = tuple[str, str, str, str, datetime, datetime]


async def _form_messages(
    conn: AsyncConnection[Any], form_ids: Sequence[str]
) -> dict[str, FormMessages]:
    cursor = await conn.execute(_FORMS_MESSAGES, (list(form_ids),))
    return {
        row["form_id"]: FormMessages.from_json(row["messages"]) for row in await cursor.fetchall()
    }


async def messages_fan_out(
    conn: AsyncConnection[Any],
    events: Sequence[OutboxEvent],
    forms: Mapping[str, FormDestinations],
    now: datetime,
    autoresponse_limit: int,
) -> list[Row]:
    """The fan-out's delivery rows, confirmations included; writes the confirmations'
    records and the forward-only erasure queue."""
    messages = await _form_messages(conn, sorted(forms))
    # A form that mails no notification: its recipients are left out of the fan-out.
    mailed: dict[str, FormDestinations] = {
        form_id: found if rules.mailed(messages.get(form_id)) else (found[0], (), *found[2:])
        for form_id, found in forms.items()
    }
    fanned_out_at = mapping.moment(now)
    rows: list[Row] = fan_out_rows(events, mailed, fanned_out_at)
    since = mapping.moment(rules.window_start(now))
    chosen = rules.autoresponses(events, messages, autoresponse_limit)
    for form_id in sorted({item.form_id for item in chosen}):
        await conn.execute(_LOCK_FORM, (f"intake.autoresponse:{form_id}",))
    for item in chosen:
        cursor = await conn.execute(_SENT_BY_FORM, (item.form_id, since))
        counted = await cursor.fetchone()
        if counted is None or counted["sent"] >= item.hourly_limit:
            continue
        cursor = await conn.execute(_SENT_TO_ADDRESS, (item.form_id, item.address_hash, since))
        if await cursor.fetchone() is not None:
            continue
        await conn.execute(_INSERT_AUTORESPONSE, item.record_params(fanned_out_at))
        rows.append(item.delivery_row(fanned_out_at))
    forwarded = rules.forwarded(events, messages)
    if forwarded:
        await conn.execute(_QUEUE_ERASURES, (fanned_out_at, forwarded))
    return rows
