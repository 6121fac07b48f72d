from __future__ import annotations

from datetime import datetime
from typing import Protocol

from intake.domain.deliveries import NotificationRecipient, WebhookEndpoint


class DestinationRepository(Protocol):
    """A form's webhook endpoints and notification recipients."""

    async def add_endpoint(self, endpoint: WebhookEndpoint) -> None: ...

    async def get_endpoint(self, endpoint_id: str) -> WebhookEndpoint | None: ...

    async def list_endpoints(self, form_id: str) -> list[WebhookEndpoint]: ...

    async def remove_endpoint(self, endpoint_id: str) -> bool:
        """Removes the endpoint and, in the same transaction, its undelivered (pending
        or dead) deliveries; the delivered stay, for the record."""
        ...

    async def disable_endpoint(self, endpoint_id: str, when: datetime) -> None: ...

    async def add_recipient(self, recipient: NotificationRecipient) -> None: ...

    async def get_recipient(self, recipient_id: str) -> NotificationRecipient | None: ...

    async def list_recipients(self, form_id: str) -> list[NotificationRecipient]: ...

    async def remove_recipient(self, recipient_id: str) -> bool: ...
