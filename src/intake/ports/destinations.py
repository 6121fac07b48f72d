from __future__ import annotations

from datetime import datetime
from typing import Protocol

from intake.domain.chat import ChatDestination
from intake.domain.deliveries import NotificationRecipient, RecipientStatus, WebhookEndpoint


class DestinationRepository(Protocol):
    """A form's webhook endpoints, notification recipients and chat destinations.

    Each `add_*` given `at_most` adds nothing, and raises LimitReached, when the form
    has that many of the kind already: counted and added in one transaction, so adds
    at once never pass the bound together."""

    async def add_endpoint(self, endpoint: WebhookEndpoint, *, at_most: int | None = None) -> None:
        """Adds it, unless its form has an endpoint at the same URL already
        (`same_endpoint_url`: AlreadyAnEndpoint) or `at_most` endpoints (LimitReached),
        checked in the insert's own transaction, so two adds at once add one."""
        ...

    async def get_endpoint(
        self, endpoint_id: str, *, workspace_id: str | None = None
    ) -> WebhookEndpoint | None:
        """The endpoint; None when there is none, or when `workspace_id` is given and its
        form is another workspace's: one lookup either way, so that another workspace's
        id costs what a missing one does (as `get_recipient` and `get_chat`)."""
        ...

    async def list_endpoints(self, form_id: str) -> list[WebhookEndpoint]: ...

    async def remove_endpoint(self, endpoint_id: str) -> bool:
        """Removes the endpoint and, in the same transaction, its undelivered (pending
        or dead) deliveries; the delivered stay, for the record."""
        ...

    async def disable_endpoint(self, endpoint_id: str, when: datetime) -> None: ...

    async def add_recipient(
        self, recipient: NotificationRecipient, *, at_most: int | None = None
    ) -> None:
        """ValueError when the form has a recipient with this address already."""
        ...

    async def get_recipient(
        self, recipient_id: str, *, workspace_id: str | None = None
    ) -> NotificationRecipient | None: ...

    async def list_recipients(self, form_id: str) -> list[NotificationRecipient]: ...

    async def pending_recipient(self, confirm_hash: str) -> NotificationRecipient | None:
        """The pending recipient whose link secret hashes to `confirm_hash`, or None (an
        unknown link, or one answered already)."""
        ...

    async def answer_recipient(
        self, confirm_hash: str, status: RecipientStatus
    ) -> NotificationRecipient | None:
        """The pending recipient of `confirm_hash` set to `status` (confirmed or
        declined) and its link spent, in one statement, so a link answers once; None
        when no pending recipient has it."""
        ...

    async def remove_recipient(self, recipient_id: str) -> bool: ...

    async def add_chat(
        self, destination: ChatDestination, *, at_most: int | None = None
    ) -> None: ...

    async def get_chat(
        self, destination_id: str, *, workspace_id: str | None = None
    ) -> ChatDestination | None: ...

    async def list_chats(self, form_id: str) -> list[ChatDestination]:
        """Oldest first."""
        ...

    async def remove_chat(self, destination_id: str) -> bool:
        """Removes the destination and, in the same transaction, its undelivered
        deliveries (as `remove_endpoint`)."""
        ...
