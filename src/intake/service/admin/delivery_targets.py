"""Where a form's deliveries go (`Deliveries.targets`)."""

from __future__ import annotations

from attrs import Factory, frozen

from intake.domain.chat import ChatDestination
from intake.domain.deliveries import NotificationRecipient, WebhookEndpoint


@frozen
class DeliveryTargets:
    """A form's webhook endpoints, mail recipients and chat destinations, by id."""

    webhooks: dict[str, WebhookEndpoint] = Factory(dict)
    recipients: dict[str, NotificationRecipient] = Factory(dict)
    chats: dict[str, ChatDestination] = Factory(dict)
