"""The OpenAPI of a form's chat destinations: the ChatDestination object, and
GET and POST /v1/forms/{form_id}/destinations, DELETE /v1/destinations/{destination_id}
and POST /v1/destinations/{destination_id}/test."""

from __future__ import annotations

from typing import Any

from intake.domain.chat import ChatApp
from intake.domain.errors import ErrorCode
from intake.domain.model import Scope
from intake.entrypoints.http.management.chat import MAX_CHAT_ID, MAX_TOKEN, MAX_URL
from intake.entrypoints.http.openapi_operations import (
    BY_ID,
    HEADERS,
    PAGING,
    WITH_QUERY,
    answer,
    operation,
    page,
    path_id,
    ref,
)

_KINDS = [app.value for app in ChatApp]
_FORM_ID = path_id("form_id", "form")
_DESTINATION_ID = path_id("destination_id", "chat destination")

CHAT_DESTINATION: dict[str, Any] = {
    "type": "object",
    "required": [
        "destination_id", "form_id", "kind", "target", "include_flagged", "created_at",
    ],
    "properties": {
        "destination_id": {"type": "string"},
        "form_id": {"type": "string"},
        "kind": {"enum": _KINDS},
        "target": {
            "type": "string",
            "description": "The webhook URL's host, or the Telegram chat id: never the URL "
            "nor the bot token, which are taken once and not shown again.",
        },
        "include_flagged": {"type": "boolean"},
        "created_at": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
    },
}  # fmt: skip

CHAT_CREATE: dict[str, Any] = {
    "type": "object",
    "required": ["kind"],
    "properties": {
        "kind": {"enum": _KINDS},
        "url": {
            "type": "string",
            "maxLength": MAX_URL,
            "description": "slack, discord and teams: the incoming-webhook URL, https on a "
            "public address (the webhook URL rule).",
        },
        "telegram_token": {
            "type": "string",
            "maxLength": MAX_TOKEN,
            "description": "telegram: the bot's token, from BotFather.",
        },
        "telegram_chat_id": {
            "type": "string",
            "maxLength": MAX_CHAT_ID,
            "description": "telegram: the chat's id, or @channelusername.",
        },
        "include_flagged": {
            "type": "boolean",
            "description": "Also post spam and unverified submissions, marked as flagged.",
        },
    },
    "additionalProperties": False,
}

_DESTINATIONS = {
    "parameters": [_FORM_ID],
    "get": operation(
        "listChatDestinations",
        Scope.READ,
        "A form's chat destinations",
        {"200": answer("A page of them, newest first.", page("ChatDestination"))},
        parameters=PAGING,
        errors=(*BY_ID, *WITH_QUERY),
    ),
    "post": operation(
        "addChatDestination",
        Scope.MANAGE,
        "Add a Slack, Discord, Microsoft Teams or Telegram destination",
        {"201": answer("The destination, without its URL or token.", ref("ChatDestination"))},
        description="Each new accepted submission is posted as a message made for the app, "
        "what the visitor typed escaped so that it mentions no one and links nowhere. The "
        "webhook URL rule applies to the URL (and to Telegram's API); a bad field is named.",
        body=CHAT_CREATE,
        errors=BY_ID,
    ),
}

_DESTINATION = {
    "parameters": [_DESTINATION_ID],
    "delete": operation(
        "removeChatDestination",
        Scope.MANAGE,
        "Remove a chat destination",
        {"204": {"description": "Removed.", "headers": HEADERS}},
        description="Its undelivered messages are dropped.",
        errors=BY_ID,
    ),
}

_DESTINATION_TEST = {
    "parameters": [_DESTINATION_ID],
    "post": operation(
        "testChatDestination",
        Scope.MANAGE,
        "Send a test message to one chat destination",
        {"202": answer("The delivery, due now.", ref("Delivery"))},
        description="Queued for the relay, for this destination only: a `chat.test` event.",
        errors=(*BY_ID, ErrorCode.VALIDATION_FAILED),
        throttled=True,
    ),
}

CHAT_PATHS: dict[str, dict[str, Any]] = {
    "/v1/forms/{form_id}/destinations": _DESTINATIONS,
    "/v1/destinations/{destination_id}": _DESTINATION,
    "/v1/destinations/{destination_id}/test": _DESTINATION_TEST,
}
CHAT_SCHEMAS: dict[str, Any] = {"ChatDestination": CHAT_DESTINATION}
