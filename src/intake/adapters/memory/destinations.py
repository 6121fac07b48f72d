"""A form's webhook endpoints, notification recipients and chat destinations in memory."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from attrs import evolve

from intake.adapters.memory.tables import Repository, Tables
from intake.domain.chat import ChatDestination
from intake.domain.deliveries import (
    DeliveryState,
    DestinationKind,
    NotificationRecipient,
    RecipientStatus,
    WebhookEndpoint,
)
from intake.domain.destination_limits import LimitReached
from intake.domain.webhook_targets import AlreadyAnEndpoint, same_endpoint_url


def oldest_first(created_at: datetime | None, item_id: str) -> tuple[bool, datetime, str]:
    # As the SQL stores' ORDER BY created_at NULLS FIRST, id.
    return (created_at is not None, created_at or datetime.min.replace(tzinfo=UTC), item_id)


class _OfForm(Protocol):
    @property
    def form_id(self) -> str: ...


_Destination = TypeVar("_Destination", bound=_OfForm)


def _check_room(existing: Iterable[_OfForm], form_id: str, at_most: int | None) -> None:
    """LimitReached when the form has `at_most` already (no await: atomic on the loop)."""
    if at_most is not None and sum(1 for each in existing if each.form_id == form_id) >= at_most:
        raise LimitReached(f"form {form_id} has {at_most} already")


class InMemoryDestinations(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)

    async def add_endpoint(self, endpoint: WebhookEndpoint, *, at_most: int | None = None) -> None:
        if any(
            e.form_id == endpoint.form_id and same_endpoint_url(e.url, endpoint.url)
            for e in self._t.endpoints.values()
        ):
            raise AlreadyAnEndpoint(f"form {endpoint.form_id} has an endpoint at this URL")
        _check_room(self._t.endpoints.values(), endpoint.form_id, at_most)
        self._t.endpoints[endpoint.endpoint_id] = endpoint

    async def get_endpoint(
        self, endpoint_id: str, *, workspace_id: str | None = None
    ) -> WebhookEndpoint | None:
        return self._in_workspace(self._t.endpoints.get(endpoint_id), workspace_id)

    async def list_endpoints(self, form_id: str) -> list[WebhookEndpoint]:
        endpoints = [e for e in self._t.endpoints.values() if e.form_id == form_id]
        return sorted(endpoints, key=lambda e: oldest_first(e.created_at, e.endpoint_id))

    async def remove_endpoint(self, endpoint_id: str) -> bool:
        if self._t.endpoints.pop(endpoint_id, None) is None:
            return False
        self._drop_undelivered(DestinationKind.WEBHOOK, endpoint_id)
        return True

    async def disable_endpoint(self, endpoint_id: str, when: datetime) -> None:
        endpoint = self._t.endpoints.get(endpoint_id)
        if endpoint is not None and endpoint.disabled_at is None:  # the first time stays
            self._t.endpoints[endpoint_id] = evolve(endpoint, disabled_at=when)

    async def add_recipient(
        self, recipient: NotificationRecipient, *, at_most: int | None = None
    ) -> None:
        _check_room(self._t.recipients.values(), recipient.form_id, at_most)
        if any(
            r.form_id == recipient.form_id and r.email == recipient.email
            for r in self._t.recipients.values()
        ):
            raise ValueError("already a recipient")
        # As the SQL stores: the link's hash is written, never read back with the row.
        self._t.recipients[recipient.recipient_id] = evolve(recipient, confirm_hash=None)
        if recipient.confirm_hash is not None:
            self._t.recipient_links[recipient.confirm_hash] = recipient.recipient_id

    async def get_recipient(
        self, recipient_id: str, *, workspace_id: str | None = None
    ) -> NotificationRecipient | None:
        return self._in_workspace(self._t.recipients.get(recipient_id), workspace_id)

    async def list_recipients(self, form_id: str) -> list[NotificationRecipient]:
        recipients = [r for r in self._t.recipients.values() if r.form_id == form_id]
        return sorted(recipients, key=lambda r: oldest_first(r.created_at, r.recipient_id))

    async def pending_recipient(self, confirm_hash: str) -> NotificationRecipient | None:
        found = self._t.recipients.get(self._t.recipient_links.get(confirm_hash, ""))
        return found if found is not None and found.status is RecipientStatus.PENDING else None

    async def answer_recipient(
        self, confirm_hash: str, status: RecipientStatus
    ) -> NotificationRecipient | None:
        found = await self.pending_recipient(confirm_hash)
        if found is None:
            return None
        answered = evolve(found, status=status)
        self._t.recipients[found.recipient_id] = answered
        del self._t.recipient_links[confirm_hash]
        return answered

    async def remove_recipient(self, recipient_id: str) -> bool:
        return self._t.recipients.pop(recipient_id, None) is not None

    async def add_chat(self, destination: ChatDestination, *, at_most: int | None = None) -> None:
        _check_room(self._t.chats.values(), destination.form_id, at_most)
        self._t.chats[destination.destination_id] = destination

    async def get_chat(
        self, destination_id: str, *, workspace_id: str | None = None
    ) -> ChatDestination | None:
        return self._in_workspace(self._t.chats.get(destination_id), workspace_id)

    def _in_workspace(
        self, found: _Destination | None, workspace_id: str | None
    ) -> _Destination | None:
        """`found`, unless `workspace_id` is given and its form is another workspace's."""
        if found is None or workspace_id is None:
            return found
        form = self._t.forms.get(found.form_id)
        return found if form is not None and form.workspace_id == workspace_id else None

    async def list_chats(self, form_id: str) -> list[ChatDestination]:
        chats = [c for c in self._t.chats.values() if c.form_id == form_id]
        return sorted(chats, key=lambda c: oldest_first(c.created_at, c.destination_id))

    async def remove_chat(self, destination_id: str) -> bool:
        if self._t.chats.pop(destination_id, None) is None:
            return False
        self._drop_undelivered(DestinationKind.CHAT, destination_id)
        return True

    def _drop_undelivered(self, kind: DestinationKind, destination_id: str) -> None:
        tables = self._t
        undelivered = [
            d.delivery_id
            for d in tables.deliveries.values()
            if d.kind is kind
            and d.destination_id == destination_id
            and d.state is not DeliveryState.DELIVERED
        ]
        for each in undelivered:
            del tables.deliveries[each]
            tables.leases.pop(each, None)
            tables.attempts.pop(each, None)
