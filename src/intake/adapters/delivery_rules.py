"""What the three stores do alike for delivery, written once: which destinations an
event goes to, the id of a delivery, and the reasons a delivery is parked without an
attempt."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from intake.domain import ids
from intake.domain.chat import ChatDestination
from intake.domain.deliveries import DestinationKind, NotificationRecipient, WebhookEndpoint
from intake.domain.model import EventType, OutboxEvent
from intake.domain.spam.opinion import AKISMET_DESTINATION

# A receiver's error text is kept this long at most: enough to tell what went wrong.
ERROR_LIMIT = 500

# Why claim_due parked a delivery without trying it: its destination is gone, or was
# disabled (a webhook receiver answered 410 Gone). No attempt is counted.
ENDPOINT_REMOVED = "endpoint removed"
ENDPOINT_DISABLED = "endpoint disabled"
RECIPIENT_REMOVED = "recipient removed"
CHAT_REMOVED = "chat destination removed"

# How a store writes a time: a datetime for PostgreSQL, ISO text for SQLite.
_Time = TypeVar("_Time")
# A form's webhook endpoints, notification recipients and chat destinations.
FormDestinations = tuple[
    Sequence[WebhookEndpoint], Sequence[NotificationRecipient], Sequence[ChatDestination]
]

_DELIVERY_ID_BYTES = 16  # 128 bits of a hash: no two deliveries ever share one


def delivery_id(event_id: str, kind: DestinationKind, destination_id: str) -> str:
    """The same for the same event and destination, so a fan-out run twice (a relay
    that died before its commit) makes no second delivery. A hash, not the three ids
    joined: those may hold any separator, and an id has a fixed width."""
    key = "\x00".join((event_id, kind.value, destination_id)).encode()
    digest = hashlib.sha256(key).digest()[:_DELIVERY_ID_BYTES]
    return ids.prefixed_id("dlv", digest)


def destinations(
    event: OutboxEvent,
    endpoints: Iterable[WebhookEndpoint],
    recipients: Iterable[NotificationRecipient],
    chats: Iterable[ChatDestination] = (),
) -> list[tuple[DestinationKind, str]]:
    """Where an event goes: the destinations of its form that want it and that were
    there when it was queued (`existed_for`); a report of triage, to Akismet alone."""
    kind = event.event_type
    if kind is EventType.AKISMET_REPORT:
        return [(DestinationKind.AKISMET, AKISMET_DESTINATION)]
    chosen = [
        (DestinationKind.WEBHOOK, e.endpoint_id)
        for e in endpoints
        if e.wants(kind) and existed_for(e.created_at, event)
    ]
    chosen += [
        (DestinationKind.EMAIL, r.recipient_id)
        for r in recipients
        if r.wants(kind) and existed_for(r.created_at, event)
    ]
    chosen += [
        (DestinationKind.CHAT, c.destination_id)
        for c in chats
        if c.wants(kind) and existed_for(c.created_at, event)
    ]
    return chosen


def existed_for(added_at: datetime | None, event: OutboxEvent) -> bool:
    """A destination gets only the events queued once it was there (relay.md): the
    backlog a relay finds when it starts late never floods one added meanwhile. Both
    times are the stores' own, written by the commit (the submission's arrival, a
    release's or an erasure's time) and by the destination's creation; one added in
    the same instant counts as there. A destination kept without a time (made before
    times were kept) was there before any event."""
    return added_at is None or added_at <= event.created_at


def error_text(error: str) -> str:
    """An error as kept: cut to ERROR_LIMIT, NUL (which PostgreSQL text cannot hold,
    and a receiver's answer may) replaced, in every store alike."""
    return error.replace("\x00", "\ufffd")[:ERROR_LIMIT]


def fan_out_rows(
    events: Iterable[OutboxEvent],
    forms: Mapping[str, FormDestinations],
    fanned_out_at: _Time,
) -> list[tuple[str, str, str, str, _Time, _Time]]:
    """The deliveries a fan-out makes, as INSERT_DELIVERY's parameters: one for each
    event and destination of its form that wants it, due at once."""
    return [
        (
            delivery_id(event.event_id, kind, destination_id),
            event.event_id,
            kind.value,
            destination_id,
            fanned_out_at,
            fanned_out_at,
        )
        for event in events
        for kind, destination_id in destinations(event, *forms[event.form_id])
    ]
