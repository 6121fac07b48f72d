"""Through the relay (in process, on the in-memory store and the fake senders): an owner's
`webhook.test` reaches that endpoint only, signed with its secret; each attempt is kept
with the receiver's status or the error; and a delivery retried goes out at once."""

from __future__ import annotations

from datetime import datetime

import pytest
from standardwebhooks import Webhook

from intake.adapters.memory import FakeClock, InMemoryStore, SeededIdSource
from intake.adapters.memory.senders import FakeMailer, FakeWebhookSender, SentWebhook
from intake.domain.deliveries import AttemptOutcome, DeliveryState
from intake.domain.model import Form, Scope
from intake.ports.senders import WebhookResponse
from intake.service.admin import owner_services
from intake.service.relay import Relay

pytestmark = pytest.mark.anyio

HOOK_A = "https://a.example.com/hooks"
HOOK_B = "https://b.example.com/hooks"


class World:
    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.clock = FakeClock()
        self.sender = FakeWebhookSender()
        self.services = owner_services(self.store, self.clock, SeededIdSource(3))
        self.relay = Relay(self.store, self.sender, FakeMailer(), self.clock, jitter=lambda: 0.0)

    async def form(self) -> Form:
        workspace = await self.services.workspaces.create("Acme")
        await self.services.keys.create(workspace.workspace_id, scopes=frozenset({Scope.MANAGE}))
        return await self.services.forms.create(workspace.workspace_id, name="Contact")


def verified(sent: SentWebhook, secret: str) -> bool:
    """Checked with the Standard Webhooks reference implementation, from the sent
    timestamp (the fake clock is not the real time its `verify` wants)."""
    moment = datetime.fromtimestamp(int(sent.headers["webhook-timestamp"]))
    expected = Webhook(secret).sign(sent.webhook_id, moment, sent.body.decode("utf-8"))
    return sent.headers["webhook-signature"] == expected


async def test_a_test_event_reaches_only_its_endpoint_signed() -> None:
    world = World()
    form = await world.form()
    a = await world.services.webhooks.add(form.form_id, HOOK_A)
    await world.services.webhooks.add(form.form_id, HOOK_B, include_flagged=True)
    await world.services.recipients.add(form.form_id, "owner@example.com")

    queued = await world.services.webhooks.test_owned(form.workspace_id, a.endpoint.endpoint_id)
    done = await world.relay.run_once()

    assert (done.delivered, done.failed, done.dead) == (1, 0, 0)
    [sent] = world.sender.sent
    assert sent.url == HOOK_A
    assert verified(sent, a.secret)
    assert sent.webhook_id == queued.delivery.event_id
    assert sent.payload() == {
        "type": "webhook.test",
        "endpoint_id": a.endpoint.endpoint_id,
        "form_id": form.form_id,
        "workspace_id": form.workspace_id,
        "created_at": world.clock.now().isoformat(),
    }
    record = await world.services.deliveries.owned(form.workspace_id, queued.delivery.delivery_id)
    assert record.delivery.state is DeliveryState.DELIVERED
    assert [(t.outcome, t.status_code) for t in record.attempts] == [
        (AttemptOutcome.DELIVERED, 200)
    ]


async def test_attempts_keep_the_status_and_a_retried_delivery_goes_out_at_once() -> None:
    world = World()
    form = await world.form()
    a = await world.services.webhooks.add(form.form_id, HOOK_A)
    world.sender.script(HOOK_A, WebhookResponse(status=410))
    queued = await world.services.webhooks.test_owned(form.workspace_id, a.endpoint.endpoint_id)
    delivery_id = queued.delivery.delivery_id

    await world.relay.run_once()
    dead = await world.services.deliveries.owned(form.workspace_id, delivery_id)
    # 410 disables the endpoint; a new one at the same URL is how an owner resumes, so
    # here the failing answer is a 500 on a second endpoint's test instead.
    b = await world.services.webhooks.add(form.form_id, HOOK_B)
    world.sender.script(HOOK_B, WebhookResponse(status=500, error="boom"))
    second = await world.services.webhooks.test_owned(form.workspace_id, b.endpoint.endpoint_id)
    await world.relay.run_once()
    failed = await world.services.deliveries.owned(form.workspace_id, second.delivery.delivery_id)

    assert dead.delivery.state is DeliveryState.DEAD
    assert [(t.outcome, t.error) for t in dead.attempts] == [
        (AttemptOutcome.FAILED, "HTTP 410 Gone: the endpoint is now disabled")
    ]
    assert [(t.status_code, t.error) for t in failed.attempts] == [(500, "HTTP 500: boom")]

    # Retried: due at once (not in 5 s), and this time the receiver takes it.
    await world.services.deliveries.retry_owned(form.workspace_id, second.delivery.delivery_id)
    world.clock.advance(1)
    await world.relay.run_once()
    again = await world.services.deliveries.owned(form.workspace_id, second.delivery.delivery_id)
    assert again.delivery.state is DeliveryState.DELIVERED
    assert [t.status_code for t in again.attempts] == [500, 200]
    assert [s.url for s in world.sender.sent] == [HOOK_A, HOOK_B, HOOK_B]
