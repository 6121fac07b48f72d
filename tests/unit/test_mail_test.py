"""The test mail an owner sends to one recipient: what it says (a test from the form, no
submission data, headers safe from a hostile form name), and its way through the relay
(in process, on the in-memory store): to that recipient only, whatever it is mailed
about, and parked as other mail is without a mail server."""

from __future__ import annotations

from datetime import UTC, datetime
from email.message import EmailMessage

import pytest

from intake.adapters.memory import FakeClock, InMemoryStore, SeededIdSource
from intake.adapters.memory.senders import FakeMailer, FakeWebhookSender
from intake.domain.deliveries import DeliveryState, NotificationRecipient, mail_test_event
from intake.domain.mail_tests import render_test_mail
from intake.domain.model import EventType, Form
from intake.service.admin import NotFoundError, owner_services
from intake.service.delivery_sending import NO_MAILER
from intake.service.relay import Relay

NOW = datetime(2026, 11, 25, 14, 3, 7, tzinfo=UTC)


def _body(message: EmailMessage, subtype: str) -> str:
    part = message.get_body(preferencelist=(subtype,))
    assert isinstance(part, EmailMessage)
    return str(part.get_content())


def test_the_test_mail_says_it_is_a_test_from_the_form_and_nothing_more() -> None:
    recipient = NotificationRecipient("rcpt_1", "frm_1", "owner@example.com")
    event = mail_test_event("evt_1", recipient, "ws_1", NOW)

    message = render_test_mail(
        event.payload,
        event_id=event.event_id,
        form_name="Contact\r\nBcc: evil@example.com <b>",
        mail_from="intake@example.com",
        to="owner@example.com",
        base_url="https://forms.example.com",
    )

    assert event.event_type is EventType.MAIL_TEST
    assert set(event.payload) == {"type", "recipient_id", "form_id", "workspace_id", "created_at"}
    assert message["Subject"] == "Test mail from Contact Bcc: evil@example.com <b>"
    assert message["Bcc"] is None  # the form's name added no header
    assert (message["To"], message["From"]) == ("owner@example.com", "intake@example.com")
    assert message["Auto-Submitted"] == "auto-generated"
    assert message["Message-ID"].startswith("<evt_1.")
    plain, html = _body(message, "plain"), _body(message, "html")
    assert "This is a test from the form Contact Bcc: evil@example.com <b>." in plain
    assert "Sent by intake at https://forms.example.com" in plain
    assert "&lt;b&gt;" in html
    assert "<b>" not in html
    assert "submission" not in message["Subject"].lower()


class World:
    def __init__(self, mailer: FakeMailer | None) -> None:
        self.store = InMemoryStore()
        self.clock = FakeClock()
        self.mailer = mailer
        self.services = owner_services(self.store, self.clock, SeededIdSource(5))
        self.relay = Relay(self.store, FakeWebhookSender(), mailer, self.clock)

    async def form(self) -> Form:
        workspace = await self.services.workspaces.create("Acme")
        return await self.services.forms.create(workspace.workspace_id, name="Contact")


@pytest.mark.anyio
async def test_a_test_mail_reaches_that_recipient_only() -> None:
    world = World(FakeMailer())
    form = await world.form()
    chosen = await world.services.recipients.add(form.form_id, "owner@example.com")
    await world.services.recipients.add(form.form_id, "other@example.com")
    await world.services.webhooks.add(form.form_id, "https://hooks.example.com/h")

    queued = await world.services.recipients.test_owned(form.workspace_id, chosen.recipient_id)
    done = await world.relay.run_once()

    # A recipient is mailed about accepted submissions only; a test reaches it anyway.
    assert not chosen.wants(EventType.MAIL_TEST)
    assert (queued.event_type, queued.submission_id) == (EventType.MAIL_TEST, "")
    assert (done.fanned_out, done.delivered, done.dead) == (0, 1, 0)
    assert world.mailer is not None
    [sent] = world.mailer.sent
    assert sent["To"] == "owner@example.com"
    assert sent["Subject"] == "Test mail from Contact"
    record = await world.services.deliveries.owned(form.workspace_id, queued.delivery.delivery_id)
    assert record.delivery.state is DeliveryState.DELIVERED


@pytest.mark.anyio
async def test_without_a_mail_server_the_test_is_parked_and_a_retry_sends_it_later() -> None:
    world = World(None)
    form = await world.form()
    recipient = await world.services.recipients.add(form.form_id, "owner@example.com")

    queued = await world.services.recipients.test(recipient.recipient_id)  # the operator's way
    await world.relay.run_once()

    record = await world.services.deliveries.owned(form.workspace_id, queued.delivery.delivery_id)
    assert (record.delivery.state, record.delivery.last_error) == (DeliveryState.DEAD, NO_MAILER)


@pytest.mark.anyio
async def test_another_workspaces_recipient_cannot_be_tested() -> None:
    world = World(FakeMailer())
    form = await world.form()
    recipient = await world.services.recipients.add(form.form_id, "owner@example.com")
    other = await world.services.workspaces.create("Other")

    with pytest.raises(NotFoundError):
        await world.services.recipients.test_owned(other.workspace_id, recipient.recipient_id)
    with pytest.raises(NotFoundError):
        await world.services.recipients.test("rcpt_missing")
