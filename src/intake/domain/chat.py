"""Chat destinations: a form's Slack, Discord or Microsoft Teams incoming webhook, or a
Telegram bot and chat, each told of new submissions in a message made for its app."""

from __future__ import annotations

import enum
from datetime import datetime
from urllib.parse import urlsplit

from attrs import field, frozen

from intake.domain.model import EventType, OutboxEvent

# Telegram's Bot API, unless INTAKE_TELEGRAM_API_URL names another (a test's fake).
DEFAULT_TELEGRAM_API_URL = "https://api.telegram.org"


class ChatApp(enum.StrEnum):
    SLACK = "slack"
    DISCORD = "discord"
    TEAMS = "teams"
    TELEGRAM = "telegram"

    @property
    def by_url(self) -> bool:
        """Reached at an incoming-webhook URL the owner copies from the app."""
        return self is not ChatApp.TELEGRAM


@frozen
class ChatDestination:
    destination_id: str
    form_id: str
    app: ChatApp
    # The incoming-webhook URL (Slack, Discord, Teams) or the bot token (Telegram):
    # whoever holds it can post to the channel, so it is a secret, kept in a column of
    # its own and never shown again after it is added.
    secret: str = field(repr=False)
    chat_id: str | None = None  # Telegram's chat: a number, or @channelusername
    include_flagged: bool = False
    created_at: datetime | None = None

    @property
    def shown_target(self) -> str:
        """What may be shown of where it posts: the webhook URL's host (its path is the
        secret), or the Telegram chat."""
        if self.app is ChatApp.TELEGRAM:
            return self.chat_id or ""
        return urlsplit(self.secret).hostname or ""

    def wants(self, event_type: EventType) -> bool:
        # A message once posted cannot be taken back, so deletions are not told.
        if event_type is EventType.FLAGGED:
            return self.include_flagged
        return event_type is EventType.CREATED


def telegram_send_url(api_url: str, token: str) -> str:
    """Where a Telegram message is posted: the Bot API's sendMessage for this bot."""
    return f"{api_url.rstrip('/')}/bot{token}/sendMessage"


def chat_test_event(
    event_id: str, destination: ChatDestination, workspace_id: str, now: datetime
) -> OutboxEvent:
    """A `chat.test` event for one destination: ids and the time, nothing submitted (its
    submission id is empty)."""
    payload: dict[str, object] = {
        "type": EventType.CHAT_TEST.value,
        "destination_id": destination.destination_id,
        "form_id": destination.form_id,
        "workspace_id": workspace_id,
        "created_at": now.isoformat(),
    }
    return OutboxEvent(
        event_id=event_id,
        event_type=EventType.CHAT_TEST,
        submission_id="",
        form_id=destination.form_id,
        workspace_id=workspace_id,
        payload=payload,
        created_at=now,
    )
