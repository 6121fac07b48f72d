from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from attrs import frozen

from intake.domain.chat import ChatDestination
from intake.domain.deliveries import (
    Delivery,
    DeliveryAttempt,
    DeliveryPosition,
    DeliveryState,
    DestinationKind,
    NotificationRecipient,
    WebhookEndpoint,
)
from intake.domain.form_messages import DEFAULT_AUTORESPONSE_HOURLY_LIMIT
from intake.domain.model import EventType, OutboxEvent


@frozen
class ClaimedDelivery:
    """A delivery leased to one relay until `leased_until`, with what it needs to send."""

    delivery: Delivery
    event: OutboxEvent
    endpoint: WebhookEndpoint | None  # for webhook deliveries
    recipient: NotificationRecipient | None  # for email deliveries
    leased_until: datetime
    chat: ChatDestination | None = None  # for chat deliveries


@frozen
class Claim:
    """What one claim did: the deliveries it leased, and how many it parked as dead
    without an attempt, their destination being gone (see `claim_due`)."""

    leased: list[ClaimedDelivery]
    parked: int = 0


@frozen
class DeliveryCounts:
    """Where every kept event stands: outbox rows not yet fanned out, and deliveries by
    state. What `intake purge` deleted is no longer counted."""

    unpublished: int = 0
    pending: int = 0
    delivered: int = 0
    dead: int = 0


@frozen
class DeliveryRecord:
    """A delivery as an owner reads it: with its event's type and ids (the workspace
    tells whose it is) and every attempt, oldest first."""

    delivery: Delivery
    event_type: EventType
    submission_id: str  # "" for a webhook.test or mail.test event
    form_id: str
    workspace_id: str
    attempts: tuple[DeliveryAttempt, ...] = ()


class DeliveryRepository(Protocol):
    async def fan_out(
        self, now: datetime, limit: int, autoresponse_limit: int = DEFAULT_AUTORESPONSE_HOURLY_LIMIT
    ) -> int:
        """Takes up to `limit` unpublished outbox rows, creates one pending delivery
        (due now) per destination that wants each event, and marks the rows published,
        in one transaction. Safe with several relays at once. Returns the rows taken.

        In the same transaction, by the form's messages (autoresponse_rules.py): no
        delivery to the notification recipients of a form that mails none; one `email`
        delivery of a confirmation to the submitter, its record kept, within one per
        address per form and the form's limit (its own, else `autoresponse_limit`) in
        the past hour, exactly, whatever relays run at once; a forward-only form's
        submission queued for erasure."""
        ...

    async def claim_due(self, now: datetime, lease: timedelta, limit: int) -> Claim:
        """Leases pending deliveries that are due and not leased to another relay, the
        earliest due first, `limit` at most. A relay that dies leaves its lease to
        expire; another then redelivers.

        A delivery whose endpoint was removed or disabled, or whose recipient or chat
        destination was removed, is never returned: any among the first `limit` due is
        parked as dead in the same transaction (no attempt counted; last_error "endpoint
        removed", "endpoint disabled", "recipient removed" or "chat destination
        removed"), and `retry_dead` can revive it; the claim says how many. So a short
        batch means nothing else sendable was due.

        A delivery of a suspended workspace's event is neither returned nor parked: it
        stays pending, no attempt counted, and goes once the workspace is active."""
        ...

    async def record_success(
        self, delivery_id: str, now: datetime, status_code: int | None = None
    ) -> None:
        """Delivered: once (a second report counts no second attempt), whatever the
        delivery's state before; the lease ends. The attempt is kept (a
        `DeliveryAttempt`, with the receiver's status) in the same transaction."""
        ...

    async def record_failure(
        self,
        delivery_id: str,
        now: datetime,
        error: str,
        next_attempt_at: datetime | None,
        status_code: int | None = None,
    ) -> None:
        """Counts the attempt and ends the lease; None parks the delivery as dead.
        Only a pending delivery changes: a relay whose lease ran out cannot undo what
        the relay that took over recorded. The error is kept to 500 characters, and
        the attempt (error and status) in the same transaction."""
        ...

    async def get_delivery(self, delivery_id: str) -> DeliveryRecord | None:
        """The delivery with its event's ids and its attempts, or None."""
        ...

    async def submission_deliveries(self, submission_id: str) -> list[DeliveryRecord]:
        """Every delivery of the submission's events, with attempts, oldest first."""
        ...

    async def endpoint_deliveries(
        self,
        endpoint_id: str,
        *,
        state: DeliveryState | None = None,
        after: DeliveryPosition | None = None,
        limit: int = 50,
    ) -> list[DeliveryRecord]:
        """A webhook endpoint's deliveries (in `state`, if given), newest first by
        fan-out time then id, those past `after` only, with attempts."""
        ...

    async def queue_direct(
        self,
        event: OutboxEvent,
        kind: DestinationKind,
        destination_id: str,
        now: datetime,
        *,
        throttled: bool = False,
    ) -> Delivery:
        """Keeps `event` as an outbox row already published (so no fan-out takes it) and
        one pending delivery of it to that one destination (a webhook endpoint or a mail
        recipient), due now, in one transaction.

        `throttled`: in the same transaction, the tests queued to the destination within
        TEST_LOOKBACK are counted against TEST_WINDOWS (domain/destination_limits.py),
        and SendThrottled, saying how long to wait, queues nothing when they are full;
        so tests at the same moment never pass the windows together."""
        ...

    async def retry_delivery(self, delivery_id: str, now: datetime) -> Delivery | None:
        """A dead delivery pending again, due now, its attempts counted afresh (as
        `retry_dead`); a pending one due now (a lease held stays held). A delivered one
        is left as it is. Returns the delivery as it is after, or None if unknown."""
        ...

    async def retry_dead_to(self, kind: DestinationKind, destination_id: str, now: datetime) -> int:
        """Makes every dead delivery to that one destination pending and due now, their
        attempts counted afresh (as `retry_dead`), in one transaction; returns how many.
        Pending and delivered ones are left as they are."""
        ...

    async def list_deliveries(self, *, dead_only: bool = False, limit: int = 100) -> list[Delivery]:
        """Newest first (by the time of the fan-out)."""
        ...

    async def retry_dead(self, event_id: str, now: datetime) -> int | None:
        """Makes an event's dead deliveries pending and due now, their attempts counted
        afresh; returns how many, or None when there is no such event in the outbox."""
        ...

    async def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        """Undelivered outbox rows and pending deliveries, and the oldest one's time."""
        ...

    async def counts(self) -> DeliveryCounts:
        """Read only: unpublished outbox rows (as `backlog` counts them) and deliveries
        by state."""
        ...
