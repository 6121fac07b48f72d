"""A workspace's webhooks, notification recipients and deliveries, as its programs manage
them over the API: each object reached through the key's workspace (another workspace's
is not found, exactly as a missing one), on the rules `DestinationAdmin` applies for the
`intake` command. Also a test event to one endpoint or one recipient, the retry of one
delivery, and of every dead delivery to one endpoint."""

from __future__ import annotations

from attrs import frozen

from intake.domain.deliveries import (
    DeliveryCursorError,
    DeliveryPosition,
    DeliveryState,
    DestinationKind,
    NotificationRecipient,
    WebhookEndpoint,
    decode_delivery_cursor,
    encode_delivery_cursor,
)
from intake.domain.listing import DEFAULT_PAGE
from intake.domain.model import Submission
from intake.ports.deliveries import DeliveryRecord
from intake.service.admin.destinations import CreatedEndpoint, DestinationAdmin
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.inputs import check_page_limit, page_after
from intake.service.admin.ownership import (
    OwnershipAdmin,
    check_plausible_id,
    owned,
    owned_in,
    workspace_of,
)
from intake.service.admin.queued_tests import QueuedTestAdmin
from intake.service.admin.short_lists import NO_TIME, Position, ShortPage, short_page
from intake.service.admin.submissions import SubmissionAdmin
from intake.service.admin.triage import TriageAdmin

STATE, DELIVERY_ID = "state", "delivery_id"


@frozen
class DeliveryPage:
    """A page of an endpoint's deliveries, newest first; `next_cursor` None: the last."""

    deliveries: tuple[DeliveryRecord, ...]
    next_cursor: str | None


@frozen
class SubmissionDetail:
    """One submission as its owner reads it: its files with fresh links, and every
    delivery of its events with their attempts."""

    submission: Submission
    files: list[dict[str, object]]
    deliveries: list[DeliveryRecord]


class WebhookAdmin(SubmissionAdmin, DestinationAdmin, OwnershipAdmin, TriageAdmin, QueuedTestAdmin):
    async def owned_endpoint(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        return await owned_in(workspace_id, endpoint_id, "webhook endpoint", self._endpoint_in)

    async def owned_recipient(self, workspace_id: str, recipient_id: str) -> NotificationRecipient:
        return await owned_in(
            workspace_id, recipient_id, "notification recipient", self._recipient_in
        )

    async def _endpoint_in(self, endpoint_id: str, workspace_id: str) -> WebhookEndpoint | None:
        return await self._store.destinations.get_endpoint(endpoint_id, workspace_id=workspace_id)

    async def _recipient_in(
        self, recipient_id: str, workspace_id: str
    ) -> NotificationRecipient | None:
        destinations = self._store.destinations
        return await destinations.get_recipient(recipient_id, workspace_id=workspace_id)

    async def owned_delivery(self, workspace_id: str, delivery_id: str) -> DeliveryRecord:
        """One of the workspace's deliveries to its own destinations; a report to
        Akismet, the operator's, is not found, as `submission_detail` does not show it."""
        record = await owned(
            workspace_id, delivery_id, "delivery", self._store.deliveries.get_delivery, workspace_of
        )
        if record.delivery.kind is DestinationKind.AKISMET:
            raise NotFoundError(f"no delivery {delivery_id!r}")
        return record

    async def submission_detail(self, workspace_id: str, submission_id: str) -> SubmissionDetail:
        submission = await self.owned_submission(workspace_id, submission_id)
        deliveries = [
            record
            for record in await self._store.deliveries.submission_deliveries(submission_id)
            # Reports to Akismet are the operator's (`intake outbox list`), not the owner's.
            if record.delivery.kind is not DestinationKind.AKISMET
        ]
        return SubmissionDetail(submission, self.files_view(submission), deliveries)

    async def owned_webhooks(
        self, workspace_id: str, form_id: str, limit: int = DEFAULT_PAGE, cursor: str | None = None
    ) -> ShortPage[WebhookEndpoint]:
        await self.owned_form(workspace_id, form_id)
        endpoints = await self._store.destinations.list_endpoints(form_id)
        return short_page(endpoints, _endpoint_position, limit, cursor)

    async def add_owned_webhook(
        self, workspace_id: str, form_id: str, url: str, *, include_flagged: bool = False
    ) -> CreatedEndpoint:
        await self.owned_form(workspace_id, form_id)
        return await self.add_webhook(form_id, url, include_flagged=include_flagged)

    async def remove_owned_webhook(self, workspace_id: str, endpoint_id: str) -> None:
        """Removes the endpoint; its undelivered deliveries are dropped with it."""
        endpoint = await self.owned_endpoint(workspace_id, endpoint_id)
        await self.remove_webhook(endpoint.endpoint_id)

    async def test_webhook(self, workspace_id: str, endpoint_id: str) -> DeliveryRecord:
        """Queues a signed `webhook.test` event to this endpoint only (`QueuedTestAdmin`)."""
        endpoint = await self.owned_endpoint(workspace_id, endpoint_id)
        return await self._queue_webhook_test(endpoint, workspace_id)

    async def test_endpoint(self, endpoint_id: str) -> DeliveryRecord:
        """`test_webhook` for an operator (`intake webhook test`): any workspace's."""
        endpoint = await self._endpoint(endpoint_id)
        form = await self.form(endpoint.form_id)
        return await self._queue_webhook_test(endpoint, form.workspace_id)

    async def test_owned_recipient(self, workspace_id: str, recipient_id: str) -> DeliveryRecord:
        """Queues a `mail.test` to this recipient only (`QueuedTestAdmin`)."""
        recipient = await self.owned_recipient(workspace_id, recipient_id)
        return await self._queue_mail_test(recipient, workspace_id)

    async def test_recipient(self, recipient_id: str) -> DeliveryRecord:
        """`test_owned_recipient` for an operator (`intake notify test`): any workspace's."""
        check_plausible_id(recipient_id, "notification recipient")
        recipient = await self._store.destinations.get_recipient(recipient_id)
        if recipient is None:
            raise NotFoundError(f"no notification recipient {recipient_id!r}")
        form = await self.form(recipient.form_id)
        return await self._queue_mail_test(recipient, form.workspace_id)

    async def _endpoint(self, endpoint_id: str) -> WebhookEndpoint:
        check_plausible_id(endpoint_id, "webhook endpoint")
        endpoint = await self._store.destinations.get_endpoint(endpoint_id)
        if endpoint is None:
            raise NotFoundError(f"no webhook endpoint {endpoint_id!r}")
        return endpoint

    async def endpoint_delivery_page(
        self,
        workspace_id: str,
        endpoint_id: str,
        *,
        state: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE,
    ) -> DeliveryPage:
        """A page of the endpoint's deliveries (in `state`, when given), newest first,
        after the page whose `next_cursor` is `cursor`."""
        endpoint = await self.owned_endpoint(workspace_id, endpoint_id)
        return await self._delivery_page(endpoint, state, cursor, limit)

    async def endpoint_deliveries(
        self,
        endpoint_id: str,
        *,
        state: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE,
    ) -> DeliveryPage:
        """`endpoint_delivery_page` for an operator (`intake webhook deliveries`)."""
        return await self._delivery_page(await self._endpoint(endpoint_id), state, cursor, limit)

    async def _delivery_page(
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

    async def retry_owned_delivery(self, workspace_id: str, delivery_id: str) -> DeliveryRecord:
        await self.owned_delivery(workspace_id, delivery_id)
        await self.retry_delivery(delivery_id)
        return await self.owned_delivery(workspace_id, delivery_id)

    async def retry_delivery(self, delivery_id: str) -> None:
        """Makes a dead delivery due now, its attempts counted afresh, or a pending one
        due now. A delivered one is refused (naming `delivery_id`): it reached its
        destination; an unknown one is not found."""
        check_plausible_id(delivery_id, "delivery")
        retried = await self._store.deliveries.retry_delivery(delivery_id, self._clock.now())
        if retried is None:
            raise NotFoundError(f"no delivery {delivery_id!r}")
        if retried.state is DeliveryState.DELIVERED:
            raise AdminError("the delivery was delivered already", field=DELIVERY_ID)

    async def retry_dead_webhook(self, workspace_id: str, endpoint_id: str) -> int:
        """Makes every dead delivery to this endpoint due now, its attempts counted
        afresh, in one transaction; returns how many (0: none was dead). Its pending and
        delivered ones are left as they are."""
        endpoint = await self.owned_endpoint(workspace_id, endpoint_id)
        return await self._retry_dead_to(endpoint)

    async def retry_dead_endpoint(self, endpoint_id: str) -> int:
        """`retry_dead_webhook` for an operator (`intake webhook retry-dead`)."""
        return await self._retry_dead_to(await self._endpoint(endpoint_id))

    async def _retry_dead_to(self, endpoint: WebhookEndpoint) -> int:
        return await self._store.deliveries.retry_dead_to(
            DestinationKind.WEBHOOK, endpoint.endpoint_id, self._clock.now()
        )

    async def owned_recipients(
        self, workspace_id: str, form_id: str, limit: int = DEFAULT_PAGE, cursor: str | None = None
    ) -> ShortPage[NotificationRecipient]:
        await self.owned_form(workspace_id, form_id)
        recipients = await self._store.destinations.list_recipients(form_id)
        return short_page(recipients, _recipient_position, limit, cursor)

    async def remove_owned_recipient(self, workspace_id: str, recipient_id: str) -> None:
        recipient = await self.owned_recipient(workspace_id, recipient_id)
        await self.remove_recipient(recipient.recipient_id)


def _endpoint_position(endpoint: WebhookEndpoint) -> Position:
    return (endpoint.created_at or NO_TIME, endpoint.endpoint_id)


def _recipient_position(recipient: NotificationRecipient) -> Position:
    return (recipient.created_at or NO_TIME, recipient.recipient_id)


def _state(name: str | None) -> DeliveryState | None:
    if name is None:
        return None
    try:
        return DeliveryState(name)
    except ValueError:
        allowed = ", ".join(state.value for state in DeliveryState)
        raise AdminError(f"must be one of {allowed}", field=STATE) from None
