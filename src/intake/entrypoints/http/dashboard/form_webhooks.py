"""A form's webhook endpoints, for its owners: add one (its signing secret shown on the
answer page once, never again), remove one (after a confirmation), send one a signed
test event, and read an endpoint's delivery log a page at a time, retrying a delivery or
every dead one at once."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from intake.domain.deliveries import DeliveryState, DestinationKind, WebhookEndpoint
from intake.domain.model import Form
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.form_owner import (
    every_item,
    for_owners,
    owner_context,
    owners_post,
    settings_path,
)
from intake.entrypoints.http.dashboard.forms import text
from intake.entrypoints.http.dashboard.told import tell
from intake.entrypoints.http.management.webhooks import MAX_URL
from intake.presentation.views import created_endpoint_view, delivery_record_view, endpoint_view
from intake.service.accounts import SignedIn
from intake.service.admin import AdminError, CreatedEndpoint, NotFoundError
from intake.service.admin.errors import TooSoon

PATH = web.PREFIX + "/forms/{form_id}/settings/webhooks"
ENDPOINT = PATH + "/{endpoint_id}"
LOG_PAGE = 25  # deliveries a page of the log shows
STATES = tuple(state.value for state in DeliveryState)
_NOTE = "webhook secret"  # what the add keeps for the page it leads to


async def _endpoint(request: Request, form: Form, endpoint_id: str) -> WebhookEndpoint:
    """One of this form's endpoints; NotFoundError for any other."""
    endpoint = await web.runtime(request).services.webhooks.owned(form.workspace_id, endpoint_id)
    if endpoint.form_id != form.form_id:
        raise NotFoundError(f"no webhook endpoint {endpoint_id!r}")
    return endpoint


def _endpoint_path(form: Form, endpoint: WebhookEndpoint) -> str:
    return settings_path(form, "webhooks/" + quote(endpoint.endpoint_id, safe=""))


@for_owners
async def webhooks_page(request: Request, signed: SignedIn, form: Form) -> Response:
    """With `created` (an endpoint's id), the page an add leads to: the new endpoint's
    secret, once; a reload, Back or Forward finds it taken and says so."""
    created_id = request.query_params.get("created")
    if not created_id:
        return await _list(request, signed, form)
    endpoint = await _endpoint(request, form, created_id)
    secret = await web.accounts(request).notes.take_secret(signed, _NOTE, endpoint.endpoint_id)
    created = None if secret is None else CreatedEndpoint(endpoint, secret)
    return await _list(request, signed, form, created=created, shown_before=created is None)


async def _list(
    request: Request,
    signed: SignedIn,
    form: Form,
    *,
    created: CreatedEndpoint | None = None,
    url: str = "",
    include_flagged: bool = False,
    error: str | None = None,
    confirm: WebhookEndpoint | None = None,
    shown_before: bool = False,
    status: int = 200,
) -> Response:
    services = web.runtime(request).services
    endpoints = await every_item(
        lambda limit, cursor: services.webhooks.page(form.workspace_id, form.form_id, limit, cursor)
    )
    context = owner_context(signed, form, "webhooks", settings_path(form, "webhooks")) | {
        "endpoints": [endpoint_view(e, full_url=True) for e in endpoints],
        # The one page that holds the secret: the add's own, shown once, never kept
        # (no-store).
        "created": created_endpoint_view(created) if created else None,
        "shown_before": shown_before,
        "url": url,
        "include_flagged": include_flagged,
        "error": error,
        "confirm": endpoint_view(confirm, full_url=True) if confirm else None,
    }
    return web.page(request, "form_webhooks.html", context, status=status)


@owners_post
async def add(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    url = text(posted, "url")
    include_flagged = text(posted, "include_flagged") == "yes"
    try:
        if len(url) > MAX_URL:  # as the API's reader refuses it
            raise AdminError(f"must be at most {MAX_URL} characters", field="url")
        created = await web.runtime(request).services.webhooks.add_owned(
            form.workspace_id, form.form_id, url, include_flagged=include_flagged
        )
    except AdminError as error:
        return await _list(
            request,
            signed,
            form,
            url=url,
            include_flagged=include_flagged,
            error=f"URL: {error}.",
            status=422,
        )
    # Post, redirect, get: the secret waits for the page, kept for this session alone,
    # in no URL; a reload of that page posts nothing and shows it no more.
    endpoint_id = created.endpoint.endpoint_id
    await web.accounts(request).notes.keep_secret(signed, _NOTE, endpoint_id, created.secret)
    query = urlencode({"created": endpoint_id})
    return web.see_other(f"{settings_path(form, 'webhooks')}?{query}")


@owners_post
async def remove(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    """A first post asks for confirmation; the second, with `confirm`, removes."""
    endpoint = await _endpoint(request, form, text(posted, "endpoint"))
    if text(posted, "confirm") != "yes":
        return await _list(request, signed, form, confirm=endpoint)
    await web.runtime(request).services.webhooks.remove_owned(
        form.workspace_id, endpoint.endpoint_id
    )
    said = f"Endpoint {endpoint.redacted_url} removed: nothing more is sent to it."
    return await tell(request, signed, settings_path(form, "webhooks"), said)


@for_owners
async def endpoint_page(request: Request, signed: SignedIn, form: Form) -> Response:
    endpoint = await _endpoint(request, form, request.path_params["endpoint_id"])
    return await _log(request, signed, form, endpoint)


async def _log(
    request: Request,
    signed: SignedIn,
    form: Form,
    endpoint: WebhookEndpoint,
    *,
    error: str | None = None,
    status: int = 200,
) -> Response:
    """The endpoint and a page of its deliveries, newest first (`state`, `cursor` in the
    URL); a bad or stale parameter is said, and the first page shown."""
    path = _endpoint_path(form, endpoint)
    state = request.query_params.get("state", "")
    state = state if state in STATES else ""
    cursor = request.query_params.get("cursor") or None
    services = web.runtime(request).services
    try:
        page = await services.deliveries.endpoint_page(
            form.workspace_id,
            endpoint.endpoint_id,
            state=state or None,
            cursor=cursor,
            limit=LOG_PAGE,
        )
    except AdminError:
        error, status = "This page link is not valid any more: the newest are shown.", 422
        page = await services.deliveries.endpoint_page(
            form.workspace_id, endpoint.endpoint_id, state=state or None, limit=LOG_PAGE
        )
    dead = await services.deliveries.endpoint_page(
        form.workspace_id, endpoint.endpoint_id, state=DeliveryState.DEAD.value, limit=1
    )
    kept = {"state": state} if state else {}
    next_url = None
    if page.next_cursor is not None:
        next_url = f"{path}?{urlencode({**kept, 'cursor': page.next_cursor})}"
    context = owner_context(signed, form, "webhooks", path) | {
        "endpoint": endpoint_view(endpoint, full_url=True),
        "deliveries": [delivery_record_view(r) for r in page.deliveries],
        "state": state,
        "states": [("", "all"), *((s, s) for s in STATES)],
        "next_url": next_url,
        "first_url": f"{path}?{urlencode(kept)}" if cursor else None,
        "error": error,
        "any_dead": bool(dead.deliveries),
        "retried": _retried(request),
    }
    return web.page(request, "form_webhook.html", context, status=status)


def _retried(request: Request) -> int | None:
    """How many dead deliveries the retry-all that led here made due (`retried` in the
    URL), to say so once; None when the page was not reached that way."""
    given = request.query_params.get("retried", "")
    return int(given) if given.isdigit() and len(given) < 10 else None


@owners_post
async def send_test(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    endpoint = await _endpoint(request, form, request.path_params["endpoint_id"])
    try:
        await web.runtime(request).services.webhooks.test_owned(
            form.workspace_id, endpoint.endpoint_id
        )
    except NotFoundError:
        raise  # answered as not found, not as a refusal below
    except TooSoon as error:
        return await _log(request, signed, form, endpoint, error=f"{error}.", status=429)
    except AdminError as error:  # disabled: the relay would not send it
        return await _log(request, signed, form, endpoint, error=f"{error}.", status=422)
    said = "Test event queued: the relay sends it on its next round."
    return await tell(request, signed, _endpoint_path(form, endpoint), said)


@owners_post
async def retry(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    """Makes one of this endpoint's deliveries due now (a dead one afresh)."""
    services = web.runtime(request).services
    endpoint = await _endpoint(request, form, request.path_params["endpoint_id"])
    record = await services.deliveries.owned(form.workspace_id, text(posted, "delivery"))
    delivery = record.delivery
    if (delivery.kind, delivery.destination_id) != (DestinationKind.WEBHOOK, endpoint.endpoint_id):
        raise NotFoundError(f"no delivery {delivery.delivery_id!r}")
    try:
        await services.deliveries.retry_owned(form.workspace_id, delivery.delivery_id)
    except NotFoundError:
        raise  # answered as not found, not as a refusal below
    except AdminError as error:  # delivered already
        return await _log(request, signed, form, endpoint, error=f"{error}.", status=422)
    said = "The delivery is due again: the relay sends it on its next round."
    return await tell(request, signed, _endpoint_path(form, endpoint), said)


@owners_post
async def retry_dead(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    """Makes every dead delivery of this endpoint due now, its attempts afresh."""
    endpoint = await _endpoint(request, form, request.path_params["endpoint_id"])
    retried = await web.runtime(request).services.deliveries.retry_dead_owned(
        form.workspace_id, endpoint.endpoint_id
    )
    return web.see_other(f"{_endpoint_path(form, endpoint)}?{urlencode({'retried': retried})}")
