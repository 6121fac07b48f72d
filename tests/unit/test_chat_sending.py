"""What a chat app's answer means for a delivery (service/chat_sending.py), and the wait a
Telegram 429 asks for in its JSON answer (adapters/chat/sender.py)."""

from __future__ import annotations

import json

import anyio
import pytest

from intake.adapters.chat.sender import HttpChatSender
from intake.adapters.memory.senders import FakeWebhookSender
from intake.domain.chat import ChatApp, ChatDestination
from intake.domain.chat_messages import ChatMessage
from intake.ports.senders import WebhookResponse
from intake.service.chat_sending import verdict

TELEGRAM = ChatDestination("chat_1", "frm_1", ChatApp.TELEGRAM, "1:tok", chat_id="-1")
API = "https://api.telegram.example"
SEND = f"{API}/bot1:tok/sendMessage"
MESSAGE = ChatMessage(title="New", fields=(("a", "b"),), footer="")


@pytest.mark.parametrize(
    ("response", "delivered", "retry"),
    [
        (WebhookResponse(200), True, False),
        (WebhookResponse(204), True, False),
        (WebhookResponse(429, retry_after=30), False, True),
        (WebhookResponse(408), False, True),
        (WebhookResponse(500), False, True),
        (WebhookResponse(503), False, True),
        (WebhookResponse(None, error="timed out"), False, True),
        (WebhookResponse(None, error="refused: not a public address"), False, True),
        (WebhookResponse(400), False, False),
        (WebhookResponse(401), False, False),
        (WebhookResponse(403), False, False),
        (WebhookResponse(404), False, False),
        (WebhookResponse(410), False, False),
        (WebhookResponse(302, error="redirect not followed"), False, False),
    ],
)
def test_what_an_answer_means(response: WebhookResponse, delivered: bool, retry: bool) -> None:
    found = verdict(response)

    assert (found.delivered, found.retry) == (delivered, retry)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"ok":false,"error_code":429,"parameters":{"retry_after":41}}', 41.0),
        (b'{"ok":false,"parameters":{"retry_after":"41"}}', None),
        (b'{"ok":false,"parameters":{"retry_after":-1}}', None),
        (b'{"ok":false,"parameters":{"retry_after":true}}', None),
        (b"not json", None),
        (b"[]", None),
    ],
)
def test_a_telegram_429_says_how_long_to_wait_in_its_answer(
    body: bytes, expected: float | None
) -> None:
    webhooks = FakeWebhookSender()
    webhooks.script(SEND, WebhookResponse(429, body=body))
    sender = HttpChatSender(webhooks, telegram_api_url=API)

    response = anyio.run(sender.send, TELEGRAM, MESSAGE)

    assert response.retry_after == expected
    [sent] = webhooks.sent
    assert json.loads(sent.body)["chat_id"] == "-1"
    assert sent.headers["Content-Type"] == "application/json"


def test_a_retry_after_header_is_kept_as_it_is() -> None:
    webhooks = FakeWebhookSender()
    body = b'{"parameters":{"retry_after":41}}'
    webhooks.script(SEND, WebhookResponse(429, retry_after=5.0, body=body))

    response = anyio.run(HttpChatSender(webhooks, telegram_api_url=API).send, TELEGRAM, MESSAGE)

    assert response.retry_after == 5.0
