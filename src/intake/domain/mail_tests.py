"""The test mail an owner sends to one notification recipient (`mail.test`): a short
text and HTML mail saying that it is a test from the form, with no submission data, so
the owner learns whether mail from intake reaches that mailbox."""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import UTC
from email.message import EmailMessage
from email.utils import format_datetime

from intake.domain.notifications import (
    MAX_SUBJECT_CHARS,
    message_id,
    one_line,
    payload_moment,
    payload_text,
)


def render_test_mail(
    event_payload: Mapping[str, object],
    *,
    event_id: str,
    form_name: str,
    mail_from: str,
    to: str,
    base_url: str | None,
) -> EmailMessage:
    """The test mail for `to`, from a `mail.test` event (`mail_test_event`): its id
    names the mail, so a retry after a lost answer is the same message."""
    form_id = payload_text(event_payload.get("form_id"))
    title = one_line(form_name) or form_id or "your form"
    created = payload_moment(event_payload.get("created_at"))

    message = EmailMessage()
    message["Subject"] = f"Test mail from {title}"[:MAX_SUBJECT_CHARS]
    message["From"] = one_line(mail_from)
    message["To"] = one_line(to)
    if created is not None:
        message["Date"] = format_datetime(created)
    message["Message-ID"] = message_id(event_id, to, mail_from)
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies

    lines = [
        f"This is a test from the form {title}.",
        "",
        "Notifications of its accepted submissions are sent to this address.",
        "No submission is attached: nothing else needs doing.",
    ]
    footer = [f"Form {form_id}"] if form_id else []
    if created is not None:
        footer.append(f"Sent {created.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S UTC')}")
    if base_url:
        footer.append(f"Sent by intake at {base_url}")
    message.set_content("\n".join([*lines, "", "--", *footer]) + "\n", charset="utf-8")
    paragraphs = "".join(f"<p>{html.escape(line)}</p>" for line in lines if line)
    notes = "<br>".join(html.escape(line) for line in footer)
    message.add_alternative(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        f"<h2>Test mail from {html.escape(title)}</h2>{paragraphs}"
        f'<p style="color:#666;font-size:small">{notes}</p>'
        "</body></html>\n",
        subtype="html",
        charset="utf-8",
    )
    return message
