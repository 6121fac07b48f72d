"""What a visitor typed, as the mails carry it, from a real submission through the real
relay to a local SMTP server: a confirmation's subject never holds it and its body holds
it cut short and defanged (no link a client would make); the owner's notification holds
it as typed, without the marks that reorder text."""

from __future__ import annotations

from email.message import EmailMessage

from intake.adapters.mail_smtp import SmtpMailer
from intake.adapters.memory.senders import FakeWebhookSender
from intake.adapters.templates.pool import shared_renderer
from intake.domain.model import Scope
from intake.service.relay import Relay
from tests.http.conftest import Seeded
from tests.support.smtp_server import SmtpServer

VICTIM = "victim@example.com"
OWNER = "owner@example.com"
LURE = "Account team: your password expired, reset at https://evil.example/reset"


def _bodies(message: EmailMessage) -> tuple[str, str]:
    text = message.get_body(("plain",))
    html = message.get_body(("html",))
    assert text is not None
    assert html is not None
    return text.get_content(), html.get_content()


def _deliver(
    seeded: Seeded, smtp: SmtpServer, fields: dict[str, str], templates: dict[str, str]
) -> None:
    svc = seeded.svc
    key = svc.run(
        svc.services.keys.create, seeded.workspace.workspace_id, scopes=frozenset({Scope.MANAGE})
    )
    changed = svc.client.patch(
        f"/v1/forms/{seeded.form.form_id}",
        headers={"authorization": f"Bearer {key.secret}"},
        json={"autoresponse": True, "templates": templates},
    )
    assert changed.status_code == 200, changed.text
    svc.run(svc.services.recipients.add, seeded.form.form_id, OWNER)
    answer = svc.public(seeded.form.public_form_key, json=fields)
    assert answer.status_code == 201, answer.text
    relay = Relay(
        svc.store,
        FakeWebhookSender(),
        SmtpMailer(smtp.url),
        svc.clock,
        template_renderer=shared_renderer(),
    )
    svc.run(relay.run_once)


def test_a_confirmation_never_carries_a_lure_in_its_subject_nor_a_link_in_its_body(
    seeded: Seeded, smtp: SmtpServer
) -> None:
    templates = {
        "autoresponse_subject": "Thanks, {{ fields.name }} ({{ subject }})",
        "autoresponse_text": "Thanks, {{ fields.name }}. You wrote: {{ fields.message }}",
        "autoresponse_html": "<p>Thanks, {{ fields.name }}</p><p>{{ fields.message }}</p>",
    }
    fields = {
        "email": VICTIM,
        "name": LURE,
        "_subject": "URGENT verify at www.evil.example",
        "message": "x" * 500 + " mail me at help@evil.example",
    }

    _deliver(seeded, smtp, fields, templates)

    [mail] = [m for m in smtp.messages if m.rcpt_tos == (VICTIM,)]
    assert mail.message["Subject"] == "Thanks,  ()"
    text, html = _bodies(mail.message)
    for body in (text, html):
        assert "https[://]evil[.]example/reset" in body
        assert "evil.example" not in body
        assert "https://" not in body
        assert "x" * 200 not in body  # each value cut to 200 characters
        assert "x" * 199 + "…" in body
        assert "help[at]evil" not in body  # cut off with the rest
    assert "Account team: your password expired" in text  # readable, as text


def test_the_owners_mail_drops_the_marks_that_reorder_text(
    seeded: Seeded, smtp: SmtpServer
) -> None:
    fields = {
        "email": VICTIM,
        "name": "Invoice \u202egnp.exe",
        "_subject": "Invoice \u202egnp.exe\u2066 due",
        "note": "line one\u0007\nline two\u2067",
    }

    _deliver(seeded, smtp, fields, {})

    [mail] = [m for m in smtp.messages if m.rcpt_tos == (OWNER,)]
    assert mail.message["Subject"] == "Invoice gnp.exe due"
    text, html = _bodies(mail.message)
    for body in (text, html):
        assert "Invoice gnp.exe" in body
        for mark in ("\u202e", "\u2066", "\u2067", "\u0007"):
            assert mark not in body
    assert "note: line one\r\n  line two" in text  # the line break kept, indented
