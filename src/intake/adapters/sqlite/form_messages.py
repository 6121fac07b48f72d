"""The fan-out's part for forms' messages over SQLite (autoresponse_rules.py says what):
notification recipients left out where a form mails none, confirmations queued within
their limits, forward-only submissions queued for erasure. Called inside the fan-out's
transaction, whose write lock (BEGIN IMMEDIATE) makes the counts exact across relays."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime

from intake.adapters import autoresponse_rules as rules
from intake.adapters.delivery_rules import FormDestinations, fan_out_rows
from intake.adapters.sqlite import mapping
from intake.domain.form_messages import FormMessages
from intake.domain.model import OutboxEvent

_FORM_MESSAGES = "SELECT messages FROM forms WHERE form_id = ?"
_SENT_BY_FORM = "SELECT count(*) FROM autoresponses WHERE form_id = ? AND queued_at > ?"
_SENT_TO_ADDRESS = """
    SELECT 1 FROM autoresponses WHERE form_id = ? AND address_hash = ? AND queued_at > ?
    LIMIT 1
"""
_INSERT_AUTORESPONSE = """
    INSERT INTO autoresponses (autoresponse_id, form_id, event_id, address_hash, queued_at)
    VALUES (?, ?, ?, ?, ?) ON CONFLICT (autoresponse_id) DO NOTHING
"""
# Only a submission still kept: an owner may have erased it before its fan-out.
_QUEUE_ERASURE = """
    INSERT INTO forward_erasures (submission_id, queued_at)
    SELECT submission_id, ? FROM submissions WHERE submission_id = ?
    ON CONFLICT (submission_id) DO NOTHING
"""

Row = tuple[str, str, str, str, str, str]


def form_messages(conn: sqlite3.Connection, form_ids: Sequence[str]) -> dict[str, FormMessages]:
    found = {}
    for form_id in form_ids:
        row = conn.execute(_FORM_MESSAGES, (form_id,)).fetchone()
        value = (
            None if row is None or row[0] is None else mapping.ROW_MAPPER.codec.read_json(row[0])
        )
        found[form_id] = FormMessages.from_json(value)
    return found


def messages_fan_out(
    conn: sqlite3.Connection,
    events: Sequence[OutboxEvent],
    forms: Mapping[str, FormDestinations],
    now: datetime,
    autoresponse_limit: int,
) -> list[Row]:
    """The fan-out's delivery rows, confirmations included; writes the confirmations'
    records and the forward-only erasure queue."""
    messages = form_messages(conn, sorted(forms))
    # A form that mails no notification: its recipients are left out of the fan-out.
    mailed: dict[str, FormDestinations] = {
        form_id: found if rules.mailed(messages.get(form_id)) else (found[0], (), *found[2:])
        for form_id, found in forms.items()
    }
    fanned_out_at = mapping.time_text(now)
    rows: list[Row] = fan_out_rows(events, mailed, fanned_out_at)
    since = mapping.time_text(rules.window_start(now))
    for item in rules.autoresponses(events, messages, autoresponse_limit):
        (sent,) = conn.execute(_SENT_BY_FORM, (item.form_id, since)).fetchone()
        if sent >= item.hourly_limit:
            continue
        if conn.execute(_SENT_TO_ADDRESS, (item.form_id, item.address_hash, since)).fetchone():
            continue
        conn.execute(_INSERT_AUTORESPONSE, item.record_params(fanned_out_at))
        rows.append(item.delivery_row(fanned_out_at))
    conn.executemany(
        _QUEUE_ERASURE, [(fanned_out_at, sid) for sid in rules.forwarded(events, messages)]
    )
    return rows
