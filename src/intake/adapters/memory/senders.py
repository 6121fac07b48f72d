"""Fakes of the relay's senders: they record what would have gone out and answer as
scripted. Part of the product, as httpx's MockTransport is: a library user runs the relay
on them to see what their receivers would get, without a network."""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Mapping
from email.message import EmailMessage
from typing import Any

from attrs import frozen

from intake.ports.senders import MailRejected, MailUnavailable, WebhookResponse

OK = WebhookResponse(status=200)


@frozen
class SentWebhook:
    """One POST the relay made, and the answer the fake gave it."""

    url: str
    headers: Mapping[str, str]
    body: bytes
    response: WebhookResponse

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]

    def payload(self) -> Any:
        return json.loads(self.body)


class FakeWebhookSender:
    """Implements WebhookSender. Each URL answers its scripted responses in turn, then
    `default` (200 unless told otherwise). Every call is kept in `sent`."""

    def __init__(self, default: WebhookResponse = OK) -> None:
        self.default = default
        self.sent: list[SentWebhook] = []
        self._scripts: defaultdict[str, deque[WebhookResponse]] = defaultdict(deque)

    def script(self, url: str, *responses: WebhookResponse) -> None:
        """Queues answers for the next calls to `url`, after any already queued."""
        self._scripts[url].extend(responses)

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        queued = self._scripts.get(url)
        response = queued.popleft() if queued else self.default
        self.sent.append(SentWebhook(url, dict(headers), body, response))
        return response

    def delivered(self, url: str | None = None) -> list[SentWebhook]:
        """The calls answered with a 2xx, to `url` or to any URL."""
        return [s for s in self.sent if s.response.delivered and url in (None, s.url)]


# What FakeMailer.script takes per attempt: None accepts the message.
MailOutcome = MailUnavailable | MailRejected | None


class FakeMailer:
    """Implements Mailer. Each call takes the next scripted outcome (accept when none is
    left): `attempts` keeps every message offered, `sent` only those accepted."""

    def __init__(self) -> None:
        self.attempts: list[EmailMessage] = []
        self.sent: list[EmailMessage] = []
        self._script: deque[MailOutcome] = deque()

    def script(self, *outcomes: MailOutcome) -> None:
        self._script.extend(outcomes)

    async def send(self, message: EmailMessage) -> None:
        self.attempts.append(message)
        outcome = self._script.popleft() if self._script else None
        if outcome is not None:
            raise outcome
        self.sent.append(message)
