"""The fan-out's part for forms' messages, for both SQL stores (autoresponse_rules.py says
what): notification recipients left out where a form mails none, confirmations queued
within their limits, forward-only submissions queued for erasure. Called inside the
fan-out's transaction. On SQLite, its write lock (BEGIN IMMEDIATE) makes the counts exact
across relays. On PostgreSQL relays fan out at once, each its own rows: a transaction
advisory lock per form (taken in form order, so two relays never wait on each other in a
circle) makes each count and the insert after it one step, exact across relays."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from intake.adapters import autoresponse_rules as rules
from intake.adapters.delivery_rules import FormDestinations, fan_out_rows
from intake.adapters.sql.executor import Transaction
from intake.domain.form_messages import FormMessages
from intake.domain.model import OutboxEvent

_FORM_MESSAGES = "SELECT messages FROM forms WHERE form_id = ?"
_LOCK_FORM = "SELECT pg_advisory_xact_lock(hashtextextended('intake.autoresponse:' || ?, 0))"
# A confirmation's record, queued only while the form has sent fewer than its hourly limit
# in the window and none to this address: one statement, so one hop, whose WHERE is the
# rule, read under the form's lock.
_QUEUE_AUTORESPONSE = """
    INSERT INTO autoresponses (autoresponse_id, form_id, event_id, address_hash, queued_at)
    SELECT :autoresponse_id, :form_id, :event_id, :address_hash, :queued_at
    WHERE (SELECT count(*) FROM autoresponses WHERE form_id = :form_id AND queued_at > :since)
            < :hourly_limit
        AND NOT EXISTS (
            SELECT 1 FROM autoresponses
            WHERE form_id = :form_id AND address_hash = :address_hash AND queued_at > :since
        )
    ON CONFLICT (autoresponse_id) DO NOTHING
"""
# Only a submission still kept: an owner may have erased it before its fan-out.
_QUEUE_ERASURE = """
    INSERT INTO forward_erasures (submission_id, queued_at)
    SELECT submission_id, ? FROM submissions WHERE submission_id = ?
    ON CONFLICT (submission_id) DO NOTHING
"""

# INSERT_DELIVERY's parameters (delivery_rules.fan_out_rows), times as the store holds them.
DeliveryRow = tuple[str, str, str, str, object, object]


async def _form_messages(tx: Transaction, form_ids: Sequence[str]) -> dict[str, FormMessages]:
    found = {}
    for form_id in form_ids:
        row = await tx.fetch_one(_FORM_MESSAGES, (form_id,))
        stored = None if row is None else row["messages"]
        found[form_id] = FormMessages.from_json(
            None if stored is None else tx.rows.codec.read_json(stored)
        )
    return found


async def messages_fan_out(
    tx: Transaction,
    events: Sequence[OutboxEvent],
    forms: Mapping[str, FormDestinations],
    now: datetime,
    autoresponse_limit: int,
) -> list[DeliveryRow]:
    """The fan-out's delivery rows, confirmations included; writes the confirmations'
    records and the forward-only erasure queue."""
    messages = await _form_messages(tx, sorted(forms))
    # A form that mails no notification: its recipients are left out of the fan-out.
    mailed: dict[str, FormDestinations] = {
        form_id: found if rules.mailed(messages.get(form_id)) else (found[0], (), *found[2:])
        for form_id, found in forms.items()
    }
    fanned_out_at = tx.rows.codec.time(now)
    rows: list[DeliveryRow] = fan_out_rows(events, mailed, fanned_out_at)
    since = tx.rows.codec.time(rules.window_start(now))
    chosen = rules.autoresponses(events, messages, autoresponse_limit)
    if tx.locks_rows:
        for form_id in sorted({item.form_id for item in chosen}):
            await tx.execute(_LOCK_FORM, (form_id,))
    for item in chosen:
        queued = {
            "autoresponse_id": item.autoresponse_id,
            "form_id": item.form_id,
            "event_id": item.event_id,
            "address_hash": item.address_hash,
            "queued_at": fanned_out_at,
            "since": since,
            "hourly_limit": item.hourly_limit,
        }
        if await tx.execute(_QUEUE_AUTORESPONSE, queued) > 0:
            rows.append(item.delivery_row(fanned_out_at))
    erasures = [(fanned_out_at, sid) for sid in rules.forwarded(events, messages)]
    if erasures:
        await tx.execute_many(_QUEUE_ERASURE, erasures)
    return rows
