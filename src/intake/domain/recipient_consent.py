"""A recipient's consent: the event of the one mail a new notification recipient gets,
asking them to confirm (or decline) before anything else is sent to them (its words:
consent_mail.py), and the link it carries, which opens a page that asks, so a mail
scanner fetching it answers nothing (docs/dashboard.md)."""

from __future__ import annotations

import hashlib
from datetime import datetime
from urllib.parse import quote

from intake.domain.deliveries import NotificationRecipient
from intake.domain.model import EventType, OutboxEvent

CONSENT_PATH = "/dashboard/notifications/"


def link_hash(token: str) -> str:
    """What the store keeps of a link's secret: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def consent_link(base_url: str | None, token: str) -> str:
    return f"{(base_url or '').rstrip('/')}{CONSENT_PATH}{quote(token, safe='')}"


def consent_event(
    event_id: str,
    recipient: NotificationRecipient,
    workspace_id: str,
    *,
    token: str,
    added_by: str,
    now: datetime,
) -> OutboxEvent:
    """The `mail.confirm` event for a pending recipient: its link's secret travels to the
    relay in the payload (never shown to an owner: no view prints a payload)."""
    payload: dict[str, object] = {
        "type": EventType.MAIL_CONFIRM.value,
        "recipient_id": recipient.recipient_id,
        "form_id": recipient.form_id,
        "workspace_id": workspace_id,
        "created_at": now.isoformat(),
        "token": token,
        "added_by": added_by,
    }
    return OutboxEvent(
        event_id=event_id,
        event_type=EventType.MAIL_CONFIRM,
        submission_id="",
        form_id=recipient.form_id,
        workspace_id=workspace_id,
        payload=payload,
        created_at=now,
    )
