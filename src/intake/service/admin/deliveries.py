"""Deliveries as their owners and the operator see them: one delivery, an endpoint's
deliveries a page at a time, where a form's deliveries go, the outbox; and retrying a
delivery, every dead one to an endpoint, or every dead one of an event."""

from __future__ import annotations

from collections.abc import Collection

from attrs import frozen

from intake.domain.deliveries import (
    DeliveryCursorError,
    DeliveryPosition,
    DeliveryState,
    DestinationKind,
    WebhookEndpoint,
    decode_delivery_cursor,
    encode_delivery_cursor,
)
from intake.domain.listing import DEFAULT_PAGE
from intake.ports.clock import Clock
from intake.ports.deliveries import DeliveryRecord
from intake.ports.store import Store
from intake.service.admin.delivery_targets import DeliveryTargets
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.inputs import check_page_limit, page_after
from intake.service.admin.outbox import Outbox
from intake.service.admin.ownership import Ownership, check_plausible_id
from intake.service.admin.webhooks import Webhooks

STATE, DELIVERY_ID = "state", "delivery_id"


@frozen
class DeliveryPage:
    """A page of an endpoint's deliveries, newest first; `next_cursor` None: the last."""

    deliveries: tuple[DeliveryRecord, ...]
    next_cursor: str | None


class Deliveries:
    def __init__(
        self, store: Store, clock: Clock, ownership: Ownership, webhooks: Webhooks
    ) -> None:
        self._store = store
        self._clock = clock
        self._owned = ownership
        self._webhooks = webhooks

    async def owned(self, workspace_id: str, delivery_id: str) -> DeliveryRecord:
        """One of the workspace's deliveries to its own destinations, with its attempts."""
        return await self._owned.delivery(workspace_id, delivery_id)

    async def endpoint_page(
        self,
        workspace_id: str,
        endpoint_id: str,
        *,
        state: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE,
    ) -> DeliveryPage:
        """A page of the workspace's endpoint's deliveries (in `state`, when given),
        newest first, after the page whose `next_cursor` is `cursor`."""
        endpoint = await self._owned.endpoint(workspace_id, endpoint_id)
        return await self._page(endpoint, state, cursor, limit)

    async def of_endpoint(
        self,
        endpoint_id: str,
        *,
        state: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE,
    ) -> DeliveryPage:
        """`endpoint_page` for an operator (`intake webhook deliveries`): any
        workspace's endpoint."""
        return await self._page(await self._webhooks.get(endpoint_id), state, cursor, limit)

    async def targets(
        self, workspace_id: str, form_id: str, kinds: Collection[DestinationKind]
    ) -> DeliveryTargets:
        """Where the workspace's form's deliveries go, for a page that names each one's
        destination beside it: its destinations of `kinds` by id (one query a kind, none
        for a kind not asked). A destination removed since is in none of them."""
        await self._owned.form(workspace_id, form_id)
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

    async def retry_owned(self, workspace_id: str, delivery_id: str) -> DeliveryRecord:
        """`retry` for the workspace's delivery; the delivery as it is after."""
        await self.owned(workspace_id, delivery_id)
        await self.retry(delivery_id)
        return await self.owned(workspace_id, delivery_id)

    async def retry(self, delivery_id: str) -> None:
        """Makes a dead delivery due now, its attempts counted afresh, or a pending one
        due now. A delivered one is refused (naming `delivery_id`): it reached its
        destination; an unknown one is not found."""
        check_plausible_id(delivery_id, "delivery")
        retried = await self._store.deliveries.retry_delivery(delivery_id, self._clock.now())
        if retried is None:
            raise NotFoundError(f"no delivery {delivery_id!r}")
        if retried.state is DeliveryState.DELIVERED:
            raise AdminError("the delivery was delivered already", field=DELIVERY_ID)

    async def retry_dead_owned(self, workspace_id: str, endpoint_id: str) -> int:
        """Makes every dead delivery to the workspace's endpoint due now, its attempts
        counted afresh, in one transaction; returns how many (0: none was dead). Its
        pending and delivered ones are left as they are."""
        endpoint = await self._owned.endpoint(workspace_id, endpoint_id)
        return await self._retry_dead_to(endpoint)

    async def retry_dead(self, endpoint_id: str) -> int:
        """`retry_dead_owned` for an operator (`intake webhook retry-dead`)."""
        return await self._retry_dead_to(await self._webhooks.get(endpoint_id))

    async def outbox(self, *, dead_only: bool = False, limit: int = 100) -> Outbox:
        """The deliveries (only the dead ones with `dead_only`) and, without it, the
        outbox rows as well: the operator's `intake outbox list`."""
        deliveries = await self._store.deliveries.list_deliveries(dead_only=dead_only, limit=limit)
        events = [] if dead_only else await self._store.submissions.outbox(limit)
        counts = await self._store.deliveries.counts()
        total = counts.dead if dead_only else counts.pending + counts.delivered + counts.dead
        return Outbox(events, deliveries, total=total, waiting=counts.unpublished)

    async def retry_event(self, event_id: str) -> int:
        """Makes an event's dead deliveries due now; returns how many. An unknown event
        (or one purged) and an event with nothing dead are refused, each saying so."""
        count = await self._store.deliveries.retry_dead(event_id, self._clock.now())
        if count is None:
            raise NotFoundError(f"no event {event_id!r} in the outbox")
        if count == 0:
            raise AdminError(f"event {event_id!r} has no dead deliveries")
        return count

    async def _retry_dead_to(self, endpoint: WebhookEndpoint) -> int:
        return await self._store.deliveries.retry_dead_to(
            DestinationKind.WEBHOOK, endpoint.endpoint_id, self._clock.now()
        )

    async def _page(
        self, endpoint: WebhookEndpoint, state: str | None, cursor: str | None, limit: int
    ) -> DeliveryPage:
        chosen = _state(state)
        check_page_limit(limit)
        after = page_after(cursor, decode_delivery_cursor, DeliveryCursorError)
        found = await self._store.deliveries.endpoint_deliveries(
            endpoint.endpoint_id, state=chosen, after=after, limit=limit + 1
        )
        page = tuple(found[:limit])
        next_cursor = None
        if len(found) > limit:
            last = page[-1].delivery
            next_cursor = encode_delivery_cursor(
                DeliveryPosition(last.created_at, last.delivery_id)
            )
        return DeliveryPage(page, next_cursor)


def _state(name: str | None) -> DeliveryState | None:
    if name is None:
        return None
    try:
        return DeliveryState(name)
    except ValueError:
        allowed = ", ".join(state.value for state in DeliveryState)
        raise AdminError(f"must be one of {allowed}", field=STATE) from None
