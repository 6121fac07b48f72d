"""The chat sender: a message shaped for its app, posted over the webhook sender.

The webhook sender's rule on URLs (https, public addresses, checked at every delivery,
INTAKE_WEBHOOK_ALLOW_PRIVATE=true to lift it) therefore holds for every chat app.
"""

from __future__ import annotations

import json
import math

from attrs import evolve

from intake.adapters.chat.discord import discord_payload
from intake.adapters.chat.slack import slack_payload
from intake.adapters.chat.teams import teams_payload
from intake.adapters.chat.telegram import telegram_payload
from intake.domain.chat import ChatApp, ChatDestination, telegram_send_url
from intake.domain.chat_messages import ChatMessage
from intake.ports.senders import WebhookResponse, WebhookSender

# Identity: the answer's body is read as it comes (a 429's reason is in it).
_HEADERS = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
# Beyond any pause the relay honours; a larger number is taken as this.
_MAX_RETRY_AFTER = 10**9


class HttpChatSender:
    """Implements ChatSender."""

    def __init__(self, webhooks: WebhookSender, *, telegram_api_url: str) -> None:
        self._webhooks = webhooks
        self._telegram_api_url = telegram_api_url

    async def send(self, destination: ChatDestination, message: ChatMessage) -> WebhookResponse:
        url, payload = self._request(destination, message)
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        response = await self._webhooks.send(url, _HEADERS, body)
        if response.status == 429 and response.retry_after is None:
            # Telegram says how long to wait in its answer, not in a Retry-After header.
            response = evolve(response, retry_after=_retry_after_in(response.body))
        return response

    def _request(
        self, destination: ChatDestination, message: ChatMessage
    ) -> tuple[str, dict[str, object]]:
        match destination.app:
            case ChatApp.SLACK:
                return destination.secret, slack_payload(message)
            case ChatApp.DISCORD:
                return destination.secret, discord_payload(message)
            case ChatApp.TEAMS:
                return destination.secret, teams_payload(message)
            case ChatApp.TELEGRAM:
                url = telegram_send_url(self._telegram_api_url, destination.secret)
                return url, telegram_payload(message, destination.chat_id or "")


def _retry_after_in(body: bytes) -> float | None:
    """A Bot API answer's `parameters.retry_after` (seconds), or None."""
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    parameters = answer.get("parameters") if isinstance(answer, dict) else None
    seconds = parameters.get("retry_after") if isinstance(parameters, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return float(min(seconds, _MAX_RETRY_AFTER))
