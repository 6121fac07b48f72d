"""Where committed events go, and how delivery is retried (decisions.md "Commit and
events"; the Standard Webhooks retry schedule)."""

from __future__ import annotations

import base64
import binascii
import enum
import math
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from attrs import field, frozen

from intake.domain.model import EventType, OutboxEvent

# Standard Webhooks: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after
# the attempt before. After the last one the delivery is parked as dead.
RETRY_SCHEDULE: tuple[timedelta, ...] = (
    timedelta(0),
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
    timedelta(hours=10),
)
MAX_ATTEMPTS = len(RETRY_SCHEDULE)
# A delay is stretched by up to this fraction at random, so a receiver that comes back
# is not hit by every retry at the same second.
JITTER = 0.2
# A receiver asking for a longer pause than this is not waited for beyond it.
MAX_RETRY_AFTER = timedelta(hours=10)


# The sender of notification mail when INTAKE_MAIL_FROM is not set.
DEFAULT_MAIL_FROM = "intake@localhost"


class DestinationKind(enum.StrEnum):
    WEBHOOK = "webhook"
    EMAIL = "email"
    CHAT = "chat"
    # The operator's Akismet, told of owners' triage (one destination, AKISMET_DESTINATION).
    AKISMET = "akismet"


class DeliveryState(enum.StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    DEAD = "dead"


class AttemptOutcome(enum.StrEnum):
    DELIVERED = "delivered"
    FAILED = "failed"


@frozen
class DeliveryAttempt:
    """One attempt at a delivery: when, how it ended, and the receiver's HTTP status
    (webhooks) or a short error. Never the destination's URL nor the payload."""

    delivery_id: str
    attempted_at: datetime
    outcome: AttemptOutcome
    status_code: int | None = None
    error: str | None = None


@frozen
class WebhookEndpoint:
    endpoint_id: str
    form_id: str
    url: str
    secret: str = field(repr=False)  # `whsec_` + base64 of the signing key
    include_flagged: bool = False
    created_at: datetime | None = None
    disabled_at: datetime | None = None  # set when the receiver answered 410 Gone

    @property
    def enabled(self) -> bool:
        return self.disabled_at is None

    @property
    def redacted_url(self) -> str:
        """The URL as a reader who may not manage webhooks sees it: its scheme, host and
        port, and `/…` in place of the path and query, which may carry the receiver's
        token (a user:password@ is left out too)."""
        return redacted_url(self.url)

    def wants(self, event_type: EventType) -> bool:
        # A deletion goes to every endpoint, so that any receiver that kept a copy erases it.
        if event_type is EventType.DELETED:
            return self.enabled
        flagged = self.include_flagged and event_type is EventType.FLAGGED
        return self.enabled and (event_type is EventType.CREATED or flagged)


REDACTED_PATH = "/…"


def redacted_url(url: str) -> str:
    """`scheme://host[:port]/…` of a URL; `…` alone for what does not parse."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return REDACTED_PATH.lstrip("/")
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    shown_port = "" if port is None else f":{port}"
    return f"{parts.scheme}://{host}{shown_port}{REDACTED_PATH}"


class RecipientStatus(enum.StrEnum):
    """Whether a recipient asked for the mail: one an owner adds is `pending` until they
    confirm through the one mail they are sent (`mail.confirm`), and gets nothing else
    meanwhile; `declined` gets nothing, ever."""

    PENDING = "pending"
    CONFIRMED = "confirmed"
    DECLINED = "declined"


@frozen
class NotificationRecipient:
    recipient_id: str
    form_id: str
    email: str
    created_at: datetime | None = None
    status: RecipientStatus = RecipientStatus.CONFIRMED
    # The SHA-256 (hex) of a pending recipient's link secret: written, never read back.
    confirm_hash: str | None = field(default=None, repr=False)

    @property
    def confirmed(self) -> bool:
        return self.status is RecipientStatus.CONFIRMED

    def wants(self, event_type: EventType) -> bool:
        # Mail goes out for accepted submissions only (never for spam or unverified),
        # and only to an address that asked for it.
        return self.confirmed and event_type is EventType.CREATED


@frozen
class Delivery:
    """One event on its way to one destination."""

    delivery_id: str
    event_id: str
    kind: DestinationKind
    destination_id: str
    state: DeliveryState
    attempts: int
    next_attempt_at: datetime | None
    created_at: datetime
    last_error: str | None = None
    delivered_at: datetime | None = None
    dead_at: datetime | None = None


def next_attempt_at(
    attempts_made: int,
    now: datetime,
    jitter: float,
    retry_after: float | None = None,
) -> datetime | None:
    """When to try again after `attempts_made` failed attempts, or None: parked as dead.

    `jitter` is a number in [0, 1) (random in production); a receiver's Retry-After is
    honoured when it asks for longer than the schedule, up to MAX_RETRY_AFTER."""
    if attempts_made >= MAX_ATTEMPTS:
        return None
    delay = RETRY_SCHEDULE[attempts_made].total_seconds() * (1 + JITTER * jitter)
    if retry_after is not None and math.isfinite(retry_after) and retry_after > delay:
        delay = min(retry_after, MAX_RETRY_AFTER.total_seconds())
    return now + timedelta(seconds=delay)


def webhook_test_event(
    event_id: str, endpoint: WebhookEndpoint, workspace_id: str, now: datetime
) -> OutboxEvent:
    """A `webhook.test` event for one endpoint: ids and the time, nothing submitted (no
    submission: its submission id is empty)."""
    destination = ("endpoint_id", endpoint.endpoint_id)
    return _test_event(
        EventType.WEBHOOK_TEST,
        destination,
        event_id,
        form_id=endpoint.form_id,
        workspace_id=workspace_id,
        now=now,
    )


def mail_test_event(
    event_id: str, recipient: NotificationRecipient, workspace_id: str, now: datetime
) -> OutboxEvent:
    """A `mail.test` event for one recipient: ids and the time, neither the address nor
    anything submitted (its submission id is empty)."""
    destination = ("recipient_id", recipient.recipient_id)
    return _test_event(
        EventType.MAIL_TEST,
        destination,
        event_id,
        form_id=recipient.form_id,
        workspace_id=workspace_id,
        now=now,
    )


def _test_event(
    event_type: EventType,
    destination: tuple[str, str],
    event_id: str,
    *,
    form_id: str,
    workspace_id: str,
    now: datetime,
) -> OutboxEvent:
    """A test event for one destination (`destination`: its id's name and value)."""
    id_name, id_value = destination
    payload: dict[str, object] = {
        "type": event_type.value,
        id_name: id_value,
        "form_id": form_id,
        "workspace_id": workspace_id,
        "created_at": now.isoformat(),
    }
    return OutboxEvent(
        event_id=event_id,
        event_type=event_type,
        submission_id="",
        form_id=form_id,
        workspace_id=workspace_id,
        payload=payload,
        created_at=now,
    )


@frozen
class DeliveryPosition:
    """Where a page of deliveries newest first ended: the last one's fan-out time and
    id. The next page holds those strictly older (or as old, with a smaller id), so rows
    added or deleted meanwhile move no row across pages."""

    created_at: datetime
    delivery_id: str


class DeliveryCursorError(ValueError):
    pass


_CURSOR_VERSION = "d1"


def encode_delivery_cursor(position: DeliveryPosition) -> str:
    """Opaque to clients: base64url of a versioned text naming the last delivery seen."""
    text = f"{_CURSOR_VERSION}|{position.created_at.isoformat()}|{position.delivery_id}"
    return base64.urlsafe_b64encode(text.encode()).decode("ascii").rstrip("=")


def decode_delivery_cursor(cursor: str) -> DeliveryPosition:
    """The position a cursor names; DeliveryCursorError for anything
    `encode_delivery_cursor` did not make."""
    refused = DeliveryCursorError("is not a cursor of this listing")
    if not 1 <= len(cursor) <= 200 or not cursor.isascii():
        raise refused
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        version, moment, delivery_id = text.split("|")
        created_at = datetime.fromisoformat(moment)
    except (binascii.Error, ValueError):
        raise refused from None
    if version != _CURSOR_VERSION or created_at.utcoffset() is None or not delivery_id:
        raise refused
    return DeliveryPosition(created_at, delivery_id)
