"""Test events an owner queues to one destination only: a signed `webhook.test` to a
webhook endpoint, a `mail.test` to a notification recipient. Each is an outbox row
already published (no fan-out takes it) and one delivery, which the relay sends as any
other, so the owner sees it in the delivery log and can retry it. Tests to one
destination are throttled (domain/destination_limits.py): an owner cannot send a mailbox
or an endpoint test after test."""

from __future__ import annotations

import logging

from intake.domain.chat import ChatDestination, chat_test_event
from intake.domain.deliveries import (
    DestinationKind,
    NotificationRecipient,
    WebhookEndpoint,
    mail_test_event,
    webhook_test_event,
)
from intake.domain.destination_limits import SendThrottled
from intake.domain.model import OutboxEvent
from intake.ports.clock import Clock
from intake.ports.deliveries import DeliveryRecord
from intake.ports.store import Store
from intake.service.admin.errors import AdminError, NotFoundError, TooSoon
from intake.service.admin.mint import IdMint

log = logging.getLogger("intake.webhooks")

ENDPOINT_ID = "endpoint_id"
# The field a throttled test names: the id of the destination it was for.
_ID_FIELDS = {
    DestinationKind.WEBHOOK: ENDPOINT_ID,
    DestinationKind.EMAIL: "recipient_id",
    DestinationKind.CHAT: "destination_id",
}
TEST_RATES = "one a minute and five an hour"


class DestinationTests:
    """Queues a test to one destination (the module's rule); the webhook endpoints, the
    mail recipients and the chat destinations each ask it for their own."""

    def __init__(self, store: Store, clock: Clock, mint: IdMint) -> None:
        self._store = store
        self._clock = clock
        self._mint = mint

    async def webhook(self, endpoint: WebhookEndpoint, workspace_id: str) -> DeliveryRecord:
        """A disabled endpoint is refused: the relay would not send to it."""
        if not endpoint.enabled:
            raise AdminError(
                "the endpoint is disabled (it answered 410 Gone); add it again to resume",
                field=ENDPOINT_ID,
            )
        now = self._clock.now()
        event = webhook_test_event(self._mint.event_id(), endpoint, workspace_id, now)
        return await self.queue(event, DestinationKind.WEBHOOK, endpoint.endpoint_id)

    async def mail(self, recipient: NotificationRecipient, workspace_id: str) -> DeliveryRecord:
        """Whatever events the recipient is mailed about: a test is for the mailbox,
        once it asked for mail (a pending or declined address gets no test either)."""
        if not recipient.confirmed:
            raise AdminError(
                f"this address is {recipient.status.value}: it gets no mail, tests "
                "included, until its owner confirms through the mail it was sent",
                field="recipient_id",
            )
        now = self._clock.now()
        event = mail_test_event(self._mint.event_id(), recipient, workspace_id, now)
        return await self.queue(event, DestinationKind.EMAIL, recipient.recipient_id)

    async def chat(self, destination: ChatDestination, workspace_id: str) -> DeliveryRecord:
        now = self._clock.now()
        event = chat_test_event(self._mint.event_id(), destination, workspace_id, now)
        return await self.queue(event, DestinationKind.CHAT, destination.destination_id)

    async def queue(
        self, event: OutboxEvent, kind: DestinationKind, destination_id: str
    ) -> DeliveryRecord:
        now = self._clock.now()
        try:
            delivery = await self._store.deliveries.queue_direct(
                event, kind, destination_id, now, throttled=True
            )
        except SendThrottled as throttled:
            raise TooSoon(
                f"this destination had its test messages for now ({TEST_RATES}): "
                f"try again in {throttled.retry_after} s",
                field=_ID_FIELDS[kind],
                retry_after=throttled.retry_after,
            ) from None
        log.info(
            "test event queued",
            extra={
                "event_type": event.event_type.value,
                "destination_id": destination_id,
                "delivery_id": delivery.delivery_id,
            },
        )
        record = await self._store.deliveries.get_delivery(delivery.delivery_id)
        if record is None:  # purged at once: only a clock far off could do it
            raise NotFoundError(f"no delivery {delivery.delivery_id!r}")
        return record
