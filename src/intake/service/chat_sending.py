"""Sending one chat delivery: the message made from the event, posted by the chat
sender, and what the app's answer means for the delivery.

A chat app's answer says more than a webhook receiver's: 429 asks to wait (its
Retry-After is honoured, as the relay's schedule allows); 408 and any 5xx, or no
answer, are worth another try on the schedule; any other 4xx means the message will
never be taken (the webhook deleted, the bot removed from the chat, a payload the app
refuses), so the delivery is parked as dead at once rather than retried for a day.
"""

from __future__ import annotations

from attrs import frozen

from intake.domain.chat import ChatDestination
from intake.domain.chat_messages import ChatMessage, submission_message, test_message
from intake.domain.model import EventType, OutboxEvent
from intake.ports.senders import WebhookResponse

_RETRIED_CLIENT_ERRORS = frozenset({408, 429})


@frozen
class ChatVerdict:
    """What an answer means: delivered, worth another try, or dead for good."""

    delivered: bool
    retry: bool
    error: str


def chat_message(
    event: OutboxEvent, destination: ChatDestination, form_name: str, base_url: str | None
) -> ChatMessage | None:
    """The message for `event`, or None when the destination does not want it (a flagged
    submission, unless it asked for them). A test is sent whatever it wants."""
    if event.event_type is EventType.CHAT_TEST:
        return test_message(event.payload, form_name=form_name)
    if not destination.wants(event.event_type):
        return None
    return submission_message(event.payload, form_name=form_name, base_url=base_url)


def verdict(response: WebhookResponse) -> ChatVerdict:
    status = response.status
    if response.delivered:
        return ChatVerdict(delivered=True, retry=False, error=f"HTTP {status}")
    error = response.error or f"HTTP {status}"
    if response.error and status is not None:
        error = f"HTTP {status}: {response.error}"
    permanent = status is not None and 300 <= status < 500
    if status in _RETRIED_CLIENT_ERRORS:
        permanent = False
    return ChatVerdict(delivered=False, retry=not permanent, error=error)
