"""The one mail a new notification recipient gets, asking them to confirm: intake's own
words, not the owner's. A fixed subject; in the body the form's and the workspace's names
and who added the address, each made inert as a visitor's text is (visitor_text.py),
since an owner chooses them; and the link (recipient_consent.py)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from email.message import EmailMessage
from email.utils import format_datetime

from intake.domain.notifications import message_id, one_line, payload_moment, payload_text
from intake.domain.recipient_consent import consent_link
from intake.domain.visitor_text import echoed

SUBJECT = "Please confirm: notifications of form submissions to this address"


def render_consent_mail(
    payload: Mapping[str, object],
    *,
    event_id: str,
    form_name: str,
    workspace_name: str,
    mail_from: str,
    to: str,
    base_url: str | None,
) -> EmailMessage:
    """The mail asking `to` to confirm, from a `mail.confirm` event's payload."""
    link = consent_link(base_url, payload_text(payload.get("token")))
    lines = [
        f"{echoed(payload_text(payload.get('added_by'))) or 'Someone'} added this address "
        f'to the notifications of the form "{echoed(form_name)}" in the workspace '
        f'"{echoed(workspace_name)}".',
        "",
        "Nothing is sent to it unless you confirm. To confirm, or to decline and hear "
        "nothing more, open:",
        link,
        "",
        "If you did not expect this, you can ignore this mail: nothing else will come.",
    ]
    message = EmailMessage()
    message["Subject"] = SUBJECT
    message["From"] = one_line(mail_from)
    message["To"] = one_line(to)
    created = payload_moment(payload.get("created_at"))
    if created is not None:
        message["Date"] = format_datetime(created)
    message["Message-ID"] = message_id(event_id, to, mail_from)
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies
    message.set_content("\n".join(lines) + "\n", charset="utf-8")
    paragraphs = "".join(
        f'<p><a href="{html.escape(line)}">{html.escape(line)}</a></p>'
        if line == link
        else f"<p>{html.escape(line)}</p>"
        for line in lines
        if line
    )
    message.add_alternative(
        f"<!doctype html><html><body>{paragraphs}</body></html>", subtype="html", charset="utf-8"
    )
    return message
