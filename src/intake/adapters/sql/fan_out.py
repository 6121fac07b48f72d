"""The relay's fan-out, for both SQL stores: in one transaction, the first unpublished
events, the destinations of their forms, their deliveries and the events marked
published. Each store takes the outbox's rows its own way (FanOutStatements): SQLite
under its write lock, so that a second relay process waits for the first; PostgreSQL
with SKIP LOCKED, so that relays fan out at once, each its own rows.

Its part for forms' messages (autoresponse_rules.py says what): notification recipients
left out where a form mails none, confirmations queued within their limits, forward-only
submissions queued for erasure. SQLite's write lock makes the counts exact across relays;
on PostgreSQL a transaction advisory lock per form (taken in form order, so two relays
never wait on each other in a circle) makes each count and the insert after it one step."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from attrs import frozen

from intake.adapters import autoresponse_rules as rules
from intake.adapters import chat_statements as chat_sql
from intake.adapters import sql_statements as sql
from intake.adapters.delivery_rules import FormDestinations, fan_out_rows
from intake.adapters.sql.executor import Executor, Transaction
from intake.domain.chat import ChatDestination
from intake.domain.deliveries import NotificationRecipient, WebhookEndpoint
from intake.domain.form_messages import FormMessages
from intake.domain.model import OutboxEvent

# A form's webhook endpoints, notification recipients and chat destinations, as found.
_Found = tuple[list[WebhookEndpoint], list[NotificationRecipient], list[ChatDestination]]

_PUBLISH = "UPDATE outbox SET published_at = :at WHERE event_id "


# The outbox_unpublished index (0001), in its order (next_attempt_at is the row's
# created_at, set so by the commit and never changed since delivery state moved to
# `deliveries`), so oldest first; `dead_at IS NULL` is always true now, written out as the
# partial index's term.
_UNPUBLISHED = """
    SELECT event_id, event_type, submission_id, form_id, workspace_id, payload, created_at,
        published_at
    FROM outbox
    WHERE published_at IS NULL AND dead_at IS NULL
    ORDER BY next_attempt_at, event_id LIMIT :limit
"""


@frozen
class FanOutStatements:
    # How the store takes the unpublished rows it reads, after the statement.
    taking: str
    # What follows a column to hold when its value is in the list :ids, as `listed` makes it.
    one_of: str
    listed: Callable[[Sequence[object]], object]

    @property
    def unpublished(self) -> str:
        return _UNPUBLISHED + self.taking


class SqlFanOut:
    def __init__(self, ex: Executor, statements: FanOutStatements) -> None:
        self._ex = ex
        self._statements = statements
        one_of = statements.one_of
        self._endpoints = sql.SELECT_ENDPOINT + " WHERE form_id " + one_of
        self._recipients = sql.SELECT_RECIPIENT + " WHERE form_id " + one_of
        self._chats = chat_sql.SELECT_CHAT + " WHERE form_id " + one_of
        self._publish = _PUBLISH + one_of

    async def fan_out(self, now: datetime, limit: int, autoresponse_limit: int) -> int:
        return await self._ex.transaction(self._fan_out, now, limit, autoresponse_limit)

    async def _fan_out(
        self, tx: Transaction, now: datetime, limit: int, autoresponse_limit: int
    ) -> int:
        rows = tx.rows
        listed = self._statements.listed
        found = await tx.fetch_all(self._statements.unpublished, {"limit": limit})
        events = [rows.outbox_row_from_row(row).event for row in found]
        if not events:
            return 0
        form_ids = {"ids": listed(sorted({event.form_id for event in events}))}
        forms: dict[str, _Found] = {event.form_id: ([], [], []) for event in events}
        for row in await tx.fetch_all(self._endpoints, form_ids):
            forms[row["form_id"]][0].append(rows.endpoint_from_row(row))
        for row in await tx.fetch_all(self._recipients, form_ids):
            forms[row["form_id"]][1].append(rows.recipient_from_row(row))
        for row in await tx.fetch_all(self._chats, form_ids):
            # Their ids only: the secret stays sealed.
            forms[row["form_id"]][2].append(rows.chat_from_row(row))
        deliveries = await _messages_fan_out(tx, events, forms, now, autoresponse_limit)
        if deliveries:
            await tx.execute_many(sql.INSERT_DELIVERY, deliveries)
        published = [event.event_id for event in events]
        await tx.execute(self._publish, {"at": rows.codec.time(now), "ids": listed(published)})
        return len(events)


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
_DeliveryRow = tuple[str, str, str, str, object, object]


async def _form_messages(tx: Transaction, form_ids: Sequence[str]) -> dict[str, FormMessages]:
    found = {}
    for form_id in form_ids:
        row = await tx.fetch_one(_FORM_MESSAGES, (form_id,))
        stored = None if row is None else row["messages"]
        found[form_id] = FormMessages.from_json(
            None if stored is None else tx.rows.codec.read_json(stored)
        )
    return found


async def _messages_fan_out(
    tx: Transaction,
    events: Sequence[OutboxEvent],
    forms: Mapping[str, FormDestinations],
    now: datetime,
    autoresponse_limit: int,
) -> list[_DeliveryRow]:
    """The fan-out's delivery rows, confirmations included; writes the confirmations'
    records and the forward-only erasure queue."""
    messages = await _form_messages(tx, sorted(forms))
    # A form that mails no notification: its recipients are left out of the fan-out.
    mailed: dict[str, FormDestinations] = {
        form_id: found if rules.mailed(messages.get(form_id)) else (found[0], (), *found[2:])
        for form_id, found in forms.items()
    }
    fanned_out_at = tx.rows.codec.time(now)
    rows: list[_DeliveryRow] = fan_out_rows(events, mailed, fanned_out_at)
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
