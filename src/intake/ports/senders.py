from __future__ import annotations

from collections.abc import Mapping
from email.message import EmailMessage
from typing import Protocol

from attrs import field, frozen

from intake.domain.chat import ChatDestination
from intake.domain.chat_messages import ChatMessage


@frozen
class WebhookResponse:
    """What a receiver answered: a status, or an error when no answer came (timeout,
    refused connection, a URL the relay will not call)."""

    status: int | None
    retry_after: float | None = None
    error: str | None = None
    # The start of the answer's body (4 KiB at most), for an app that says in it how
    # long to wait (Telegram). Never logged nor kept.
    body: bytes = field(default=b"", repr=False, eq=False)

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def gone(self) -> bool:
        return self.status == 410


class WebhookSender(Protocol):
    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        """POSTs once, within the sender's timeout; never raises for the receiver's
        faults, which come back as the response's status or error."""
        ...


class ChatSender(Protocol):
    async def send(self, destination: ChatDestination, message: ChatMessage) -> WebhookResponse:
        """Posts the message, shaped for the destination's app, once; never raises for
        the app's faults (as WebhookSender)."""
        ...


class MailUnavailable(Exception):  # noqa: N818 - a condition the relay retries
    """The mail server could not be reached or refused for now: try again later."""


class MailRejected(Exception):  # noqa: N818 - a condition the relay does not retry
    """The mail server refused the message for good (a permanent 5xx)."""


class Mailer(Protocol):
    async def send(self, message: EmailMessage) -> None: ...
