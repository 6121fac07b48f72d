"""A form's chat destinations over HTTP: list, add, remove, and send a test message. The
webhook URL or bot token is taken once and never given back."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.model import Scope
from intake.entrypoints.http.management.common import (
    Call,
    accepted,
    endpoint,
    json_fields,
    json_response,
    no_content,
    page_cursor,
    page_limit,
    page_response,
)
from intake.presentation.chat_views import chat_view
from intake.presentation.views import delivery_record_view
from intake.service.admin import ChatRequest

_FIELDS = {"kind", "url", "telegram_token", "telegram_chat_id", "include_flagged"}
MAX_URL = 2048
MAX_TOKEN = 200
MAX_CHAT_ID = 64


@endpoint(Scope.READ)
async def list_chats(request: Request, call: Call) -> Response:
    page = await call.services.chats.page(
        call.workspace_id,
        request.path_params["form_id"],
        page_limit(request),
        page_cursor(request),
    )
    return page_response([chat_view(c) for c in page.items], page.next_cursor)


@endpoint(Scope.MANAGE)
async def add_chat(request: Request, call: Call) -> Response:
    body = await json_fields(request, _FIELDS)
    kind = body.text("kind", required=True, max_length=32)
    chat = ChatRequest(
        kind=kind or "",
        url=body.text("url", max_length=MAX_URL),
        telegram_token=body.text("telegram_token", max_length=MAX_TOKEN),
        telegram_chat_id=body.text("telegram_chat_id", max_length=MAX_CHAT_ID),
        include_flagged=bool(body.boolean("include_flagged")),
    )
    body.done()
    destination = await call.services.chats.add_owned(
        call.workspace_id, request.path_params["form_id"], chat
    )
    return json_response(chat_view(destination), status=201)


@endpoint(Scope.MANAGE)
async def remove_chat(request: Request, call: Call) -> Response:
    await call.services.chats.remove_owned(call.workspace_id, request.path_params["destination_id"])
    return no_content()


@endpoint(Scope.MANAGE)
async def test_chat(request: Request, call: Call) -> Response:
    record = await call.services.chats.test_owned(
        call.workspace_id, request.path_params["destination_id"]
    )
    return accepted(delivery_record_view(record))


ROUTES: list[Route] = [
    Route("/v1/forms/{form_id}/destinations", list_chats, methods=["GET"]),
    Route("/v1/forms/{form_id}/destinations", add_chat, methods=["POST"]),
    Route("/v1/destinations/{destination_id}", remove_chat, methods=["DELETE"]),
    Route("/v1/destinations/{destination_id}/test", test_chat, methods=["POST"]),
]
