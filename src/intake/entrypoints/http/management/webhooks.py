"""A form's webhook endpoints over HTTP: list, add (the signing secret shown once),
remove, send a signed test event, and an endpoint's deliveries with their attempts,
the retry of one delivery, and of every dead delivery to one endpoint."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.deliveries import DeliveryState
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
    query_choices,
)
from intake.presentation.views import (
    created_endpoint_view,
    delivery_record_view,
    endpoint_view,
    retried_dead_view,
)
from intake.service.admin import AdminError

_STATES = frozenset(state.value for state in DeliveryState)
# Longer than any URL a receiver needs; the URL rule checks the rest.
MAX_URL = 2048


@endpoint(Scope.READ)
async def list_webhooks(request: Request, call: Call) -> Response:
    page = await call.services.webhooks.page(
        call.workspace_id,
        request.path_params["form_id"],
        page_limit(request),
        page_cursor(request),
    )
    # A URL may carry the receiver's token: shown whole only to a key that may manage
    # webhooks, as its scheme and host to a `read` key.
    full_url = call.key.allows(Scope.MANAGE)
    views = [endpoint_view(e, full_url=full_url) for e in page.items]
    return page_response(views, page.next_cursor)


@endpoint(Scope.MANAGE)
async def add_webhook(request: Request, call: Call) -> Response:
    body = await json_fields(request, {"url", "include_flagged"})
    url = body.text("url", required=True, max_length=MAX_URL)
    include_flagged = body.boolean("include_flagged")
    body.done()
    assert url is not None  # required: done() refused its absence
    created = await call.services.webhooks.add_owned(
        call.workspace_id,
        request.path_params["form_id"],
        url,
        include_flagged=bool(include_flagged),
    )
    return json_response(created_endpoint_view(created), status=201)


@endpoint(Scope.MANAGE)
async def remove_webhook(request: Request, call: Call) -> Response:
    await call.services.webhooks.remove_owned(call.workspace_id, request.path_params["endpoint_id"])
    return no_content()


@endpoint(Scope.MANAGE)
async def test_webhook(request: Request, call: Call) -> Response:
    record = await call.services.webhooks.test_owned(
        call.workspace_id, request.path_params["endpoint_id"]
    )
    return accepted(delivery_record_view(record))


@endpoint(Scope.READ)
async def list_deliveries(request: Request, call: Call) -> Response:
    states = query_choices(request, "state", _STATES)
    if len(states) > 1:
        raise AdminError("Give one state.", field="state")
    limit = page_limit(request)
    cursor = page_cursor(request)
    page = await call.services.deliveries.endpoint_page(
        call.workspace_id,
        request.path_params["endpoint_id"],
        state=states[0] if states else None,
        cursor=cursor,
        limit=limit,
    )
    return page_response([delivery_record_view(r) for r in page.deliveries], page.next_cursor)


@endpoint(Scope.MANAGE)
async def retry_delivery(request: Request, call: Call) -> Response:
    record = await call.services.deliveries.retry_owned(
        call.workspace_id, request.path_params["delivery_id"]
    )
    return accepted(delivery_record_view(record))


@endpoint(Scope.MANAGE)
async def retry_dead(request: Request, call: Call) -> Response:
    endpoint_id = request.path_params["endpoint_id"]
    retried = await call.services.deliveries.retry_dead_owned(call.workspace_id, endpoint_id)
    return accepted(retried_dead_view(endpoint_id, retried))


ROUTES: list[Route] = [
    Route("/v1/forms/{form_id}/webhooks", list_webhooks, methods=["GET"]),
    Route("/v1/forms/{form_id}/webhooks", add_webhook, methods=["POST"]),
    Route("/v1/webhooks/{endpoint_id}", remove_webhook, methods=["DELETE"]),
    Route("/v1/webhooks/{endpoint_id}/test", test_webhook, methods=["POST"]),
    Route("/v1/webhooks/{endpoint_id}/deliveries", list_deliveries, methods=["GET"]),
    Route("/v1/webhooks/{endpoint_id}/retry-dead", retry_dead, methods=["POST"]),
    Route("/v1/deliveries/{delivery_id}/retry", retry_delivery, methods=["POST"]),
]
