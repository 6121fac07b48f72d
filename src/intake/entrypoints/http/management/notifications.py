"""A form's notification recipients over HTTP: the addresses mailed for each accepted
submission. List, add, remove, and send one a test mail."""

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
from intake.presentation.views import delivery_record_view, recipient_view

# RFC 5321's longest address.
MAX_EMAIL = 254


@endpoint(Scope.READ)
async def list_recipients(request: Request, call: Call) -> Response:
    page = await call.services.recipients.page(
        call.workspace_id,
        request.path_params["form_id"],
        page_limit(request),
        page_cursor(request),
    )
    return page_response([recipient_view(r) for r in page.items], page.next_cursor)


@endpoint(Scope.MANAGE)
async def add_recipient(request: Request, call: Call) -> Response:
    body = await json_fields(request, {"email"})
    email = body.text("email", required=True, max_length=MAX_EMAIL)
    body.done()
    assert email is not None  # required: done() refused its absence
    recipient = await call.services.recipients.add_owned(
        call.workspace_id,
        request.path_params["form_id"],
        email,
        added_by=f"A program with an API key of the workspace ({call.key.key_id})",
    )
    return json_response(recipient_view(recipient), status=201)


@endpoint(Scope.MANAGE)
async def remove_recipient(request: Request, call: Call) -> Response:
    await call.services.recipients.remove_owned(
        call.workspace_id, request.path_params["recipient_id"]
    )
    return no_content()


@endpoint(Scope.MANAGE)
async def test_recipient(request: Request, call: Call) -> Response:
    record = await call.services.recipients.test_owned(
        call.workspace_id, request.path_params["recipient_id"]
    )
    return accepted(delivery_record_view(record))


ROUTES: list[Route] = [
    Route("/v1/forms/{form_id}/notifications", list_recipients, methods=["GET"]),
    Route("/v1/forms/{form_id}/notifications", add_recipient, methods=["POST"]),
    Route("/v1/notifications/{recipient_id}", remove_recipient, methods=["DELETE"]),
    Route("/v1/notifications/{recipient_id}/test", test_recipient, methods=["POST"]),
]
