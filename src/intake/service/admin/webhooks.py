"""A form's webhook endpoints: added once their URL passes the rule the relay applies
(targets.py), listed, removed with their undelivered deliveries, and sent a signed test
event on request; for an operator (`intake webhook`), who reaches any form's by id, and
for a workspace's programs and owners, who reach their own only (another workspace's is
not found, exactly as a missing one)."""

from __future__ import annotations

from attrs import frozen

from intake.domain import ids
from intake.domain.deliveries import WebhookEndpoint
from intake.domain.destination_limits import DestinationLimits, LimitReached
from intake.domain.listing import DEFAULT_PAGE
from intake.domain.webhook_targets import AlreadyAnEndpoint
from intake.ports.clock import Clock
from intake.ports.deliveries import DeliveryRecord
from intake.ports.store import Store
from intake.service.admin.bounds import WEBHOOKS_BOUND, form_full
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.forms import live_form
from intake.service.admin.mint import IdMint
from intake.service.admin.ownership import Ownership, check_plausible_id
from intake.service.admin.queued_tests import DestinationTests
from intake.service.admin.short_lists import NO_TIME, Position, ShortPage, short_page
from intake.service.admin.targets import TargetCheck

ALREADY_AN_ENDPOINT = "this form has an endpoint at this URL already"


@frozen
class CreatedEndpoint:
    endpoint: WebhookEndpoint
    secret: str  # shown once; kept to sign with, never printed again


class Webhooks:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        mint: IdMint,
        *,
        ownership: Ownership,
        targets: TargetCheck,
        tests: DestinationTests,
        limits: DestinationLimits,
    ) -> None:
        self._store = store
        self._clock = clock
        self._mint = mint
        self._owned = ownership
        self._targets = targets
        self._tests = tests
        self._limits = limits

    async def add(
        self, form_id: str, url: str, *, include_flagged: bool = False
    ) -> CreatedEndpoint:
        """A new endpoint of the form, with its signing secret (shown once).
        `include_flagged`: it is sent spam-flagged submissions too."""
        await live_form(self._store.forms, form_id)
        text = url.strip()
        await self._targets.check(text, "url")
        secret = ids.webhook_secret(self._mint.random_bytes(ids.SECRET_RANDOM_BYTES))
        endpoint = WebhookEndpoint(
            endpoint_id=self._mint.id("wh"),
            form_id=form_id,
            url=text,
            secret=secret,
            include_flagged=include_flagged,
            created_at=self._clock.now(),
        )
        bound = self._limits.webhooks
        try:
            await self._store.destinations.add_endpoint(endpoint, at_most=bound)
        except LimitReached:
            raise form_full("webhook endpoints", bound, WEBHOOKS_BOUND, "url") from None
        except AlreadyAnEndpoint:
            # Two would deliver every event twice. Never the URL: it may hold a token.
            raise AdminError(ALREADY_AN_ENDPOINT, field="url") from None
        return CreatedEndpoint(endpoint, secret)

    async def all(self, form_id: str) -> list[WebhookEndpoint]:
        """The form's endpoints (their secrets included: the operator's view)."""
        await live_form(self._store.forms, form_id)
        return await self._store.destinations.list_endpoints(form_id)

    async def remove(self, endpoint_id: str) -> None:
        """Removes the endpoint; its undelivered deliveries are dropped with it."""
        if not await self._store.destinations.remove_endpoint(endpoint_id):
            raise NotFoundError(f"no webhook endpoint {endpoint_id!r}")

    async def test(self, endpoint_id: str) -> DeliveryRecord:
        """Queues a signed `webhook.test` to this endpoint only (queued_tests.py): any
        workspace's, for an operator (`intake webhook test`)."""
        endpoint = await self.get(endpoint_id)
        form = await live_form(self._store.forms, endpoint.form_id)
        return await self._tests.webhook(endpoint, form.workspace_id)

    async def get(self, endpoint_id: str) -> WebhookEndpoint:
        """Any workspace's endpoint, by id (the operator's)."""
        check_plausible_id(endpoint_id, "webhook endpoint")
        endpoint = await self._store.destinations.get_endpoint(endpoint_id)
        if endpoint is None:
            raise NotFoundError(f"no webhook endpoint {endpoint_id!r}")
        return endpoint

    async def owned(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        """The workspace's endpoint `endpoint_id` (ownership.py's rule)."""
        return await self._owned.endpoint(workspace_id, endpoint_id)

    async def page(
        self, workspace_id: str, form_id: str, limit: int = DEFAULT_PAGE, cursor: str | None = None
    ) -> ShortPage[WebhookEndpoint]:
        """`limit` of the workspace's form's endpoints after `cursor`, newest first."""
        await self._owned.form(workspace_id, form_id)
        endpoints = await self._store.destinations.list_endpoints(form_id)
        return short_page(endpoints, _position, limit, cursor)

    async def add_owned(
        self, workspace_id: str, form_id: str, url: str, *, include_flagged: bool = False
    ) -> CreatedEndpoint:
        """`add` to the workspace's form."""
        await self._owned.form(workspace_id, form_id)
        return await self.add(form_id, url, include_flagged=include_flagged)

    async def remove_owned(self, workspace_id: str, endpoint_id: str) -> None:
        """Removes the endpoint; its undelivered deliveries are dropped with it."""
        endpoint = await self.owned(workspace_id, endpoint_id)
        await self.remove(endpoint.endpoint_id)

    async def test_owned(self, workspace_id: str, endpoint_id: str) -> DeliveryRecord:
        """Queues a signed `webhook.test` to the workspace's endpoint only."""
        endpoint = await self.owned(workspace_id, endpoint_id)
        return await self._tests.webhook(endpoint, workspace_id)


def _position(endpoint: WebhookEndpoint) -> Position:
    return (endpoint.created_at or NO_TIME, endpoint.endpoint_id)
