"""At send time a template that fails, however it fails (saved before a limit tightened:
a recursive macro, a runaway power, a value past the caps), is replaced by the default
and the mail goes out; the other forms' webhooks are delivered in the same round. Through
the library's relay, as every composition builds it (make_relay), so with the worker
processes that bound rendering."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from attrs import evolve

from intake.adapters.memory import FakeClock, InMemoryStore
from intake.adapters.memory.senders import FakeMailer, FakeWebhookSender
from intake.config import Settings
from intake.domain.form_messages import Templates
from intake.domain.model import FieldValue
from intake.entrypoints.library import Intake
from intake.library_runtime import open_runtime

pytestmark = pytest.mark.anyio

RUNAWAY = Templates(
    notification_subject="{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(1) }}",
    notification_text="{% set x = (((9**64)**64)**64)**64 %}{{ x > 1 }}",
    notification_html='{% set a = "x" * 100000 %}{{ a ~ a }}',
    autoresponse_subject="{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}",
    autoresponse_text='{{ "x"|center(999999999) }}',
)


def _text(message: EmailMessage) -> str:
    part = message.get_body(("plain",))
    assert isinstance(part, EmailMessage)
    return str(part.get_content())


async def test_runaway_templates_fall_back_to_the_defaults_and_others_are_delivered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mailer, hooks = FakeMailer(), FakeWebhookSender()
    settings = Settings.from_env(
        {"INTAKE_DATABASE_URL": "sqlite:///:memory:", "INTAKE_SMTP_URL": "smtp://mail.test"}
    )
    async with open_runtime(
        settings, store=InMemoryStore(), clock=FakeClock(), mailer=mailer, webhook_sender=hooks
    ) as runtime:
        services = runtime.services
        workspace = await services.workspaces.create("Acme")
        hostile = await services.forms.create(workspace.workspace_id, name="Hostile")
        other = await services.forms.create(workspace.workspace_id, name="Other")
        await services.recipients.add(hostile.form_id, "owner@example.com")
        await services.webhooks.add(other.form_id, "https://hooks.example.com/in")
        # Saved before the limits were what they are: the store takes it as it is.
        stored = await runtime.store.forms.get(hostile.form_id)
        assert stored is not None
        messages = evolve(stored.messages, templates=RUNAWAY, autoresponse=True)
        await runtime.store.forms.update(evolve(stored, messages=messages))
        intake = Intake(runtime)
        fields: dict[str, FieldValue] = {"name": "Ada", "email": "ada@example.com", "message": "Hi"}
        for form in (hostile, other):
            result = await intake.submit(form.public_form_key, fields, client_ip="198.51.100.7")
            assert result.ok, result

        done = await runtime.relay.run_once()

    assert (done.delivered, done.failed, done.dead) == (3, 0, 0)
    assert len(hooks.sent) == 1
    by_recipient = {str(message["To"]): message for message in mailer.sent}
    notification = by_recipient["owner@example.com"]
    assert notification["Subject"] == "New submission to Hostile"
    assert "Ada" in _text(notification)
    confirmation = by_recipient["ada@example.com"]
    assert confirmation["Subject"] == "We received your message"
    assert "thank you for writing to Hostile" in _text(confirmation)
    failed = {getattr(record, "templates", None) for record in caplog.records}
    assert "notification_subject,notification_text,notification_html" in failed
    assert "autoresponse_subject,autoresponse_text" in failed
