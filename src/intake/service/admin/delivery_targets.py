"""Where a form's deliveries go, for a page that names each one's destination beside it
(the dashboard's delivery timeline): the form's webhook endpoints, mail recipients and
chat destinations, by id. A destination removed since is in none of them."""

from __future__ import annotations

from collections.abc import Collection

from attrs import Factory, frozen

from intake.domain.chat import ChatDestination
from intake.domain.deliveries import DestinationKind, NotificationRecipient, WebhookEndpoint
from intake.service.admin.ownership import OwnershipAdmin


@frozen
class DeliveryTargets:
    webhooks: dict[str, WebhookEndpoint] = Factory(dict)
    recipients: dict[str, NotificationRecipient] = Factory(dict)
    chats: dict[str, ChatDestination] = Factory(dict)


class DeliveryTargetAdmin(OwnershipAdmin):
    async def delivery_targets(
        self, workspace_id: str, form_id: str, kinds: Collection[DestinationKind]
    ) -> DeliveryTargets:
        """The form's destinations of `kinds` (one query a kind, none for a kind not
        asked); NotFoundError for a form of another workspace."""
        await self.owned_form(workspace_id, form_id)
        destinations = self._store.destinations
        webhooks, recipients, chats = [], [], []
        if DestinationKind.WEBHOOK in kinds:
            webhooks = await destinations.list_endpoints(form_id)
        if DestinationKind.EMAIL in kinds:
            recipients = await destinations.list_recipients(form_id)
        if DestinationKind.CHAT in kinds:
            chats = await destinations.list_chats(form_id)
        return DeliveryTargets(
            {e.endpoint_id: e for e in webhooks},
            {r.recipient_id: r for r in recipients},
            {c.destination_id: c for c in chats},
        )
