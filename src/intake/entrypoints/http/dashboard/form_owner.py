"""What a form's owner-only pages share (settings, mail recipients, webhooks): the form,
reached only by an owner of its workspace, the pages of a refusal, and the routes that
answer with them."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from intake.domain.listing import MAX_PAGE
from intake.domain.model import EventType, Form
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form
from intake.entrypoints.http.dashboard.inbox import owned_form
from intake.presentation.views import delivery_record_view
from intake.service.accounts import NotAllowed, SignedIn
from intake.service.admin import NotFoundError
from intake.service.admin.short_lists import ShortPage

T = TypeVar("T")
Route = Callable[[Request], Awaitable[Response]]
FormHandler = Callable[[Request, SignedIn, Form], Awaitable[Response]]
PostHandler = Callable[[Request, SignedIn, Form, FormData], Awaitable[Response]]


async def owners_form(request: Request, signed: SignedIn, form_id: str) -> Form:
    """The form, when the user owns its workspace: NotFoundError when it is in none of
    theirs, NotAllowed when they are a member there (destinations are the owner's);
    for a post, WorkspaceSuspended when the workspace is suspended."""
    form = await owned_form(request, signed, form_id)
    signed.require_owner(form.workspace_id)
    if request.method == "POST":  # a change, or a test sent: not in a suspended workspace
        await web.runtime(request).services.workspaces.acting(form.workspace_id)
    return form


def settings_path(form: Form, tail: str) -> str:
    return f"{web.PREFIX}/forms/{quote(form.form_id, safe='')}/settings/{tail}"


def owner_context(signed: SignedIn, form: object, current: str, path: str) -> dict[str, Any]:
    """What every owner page of a form shows around its own part (`form` as its template
    reads it; `current`, the tab it is)."""
    return {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "form": form,
        "current": current,
        "owner": True,
        "path": path,
    }


def for_owners(handler: FormHandler) -> Route:
    """A route of the form `form_id` names, for its owners: the handler gets the form
    (and reads a post itself); a bad post or a member is refused (403), a form or item
    out of the user's reach is not found (404), whichever step finds it."""

    @functools.wraps(handler)
    async def route(request: Request, signed: SignedIn) -> Response:
        form = await owners_form(request, signed, request.path_params["form_id"])
        return await handler(request, signed, form)

    return _refusals_answered(route)


def owners_post(handler: PostHandler) -> Route:
    """As `for_owners`, for a post read (its CSRF token checked) before the form is."""

    @functools.wraps(handler)
    async def route(request: Request, signed: SignedIn) -> Response:
        posted = await read_form(request, signed.csrf)
        form = await owners_form(request, signed, request.path_params["form_id"])
        return await handler(request, signed, form, posted)

    return _refusals_answered(route)


def _refusals_answered(route: web.SignedInHandler) -> Route:
    @functools.wraps(route)
    async def answered(request: Request, signed: SignedIn) -> Response:
        try:
            return await route(request, signed)
        except (BadFormError, NotAllowed):
            return refused(request)
        except NotFoundError:
            return not_found(request)

    return web.requires_sign_in(answered)


def refused(request: Request) -> Response:
    return web.page(request, "refused.html", {}, status=403)


def not_found(request: Request) -> Response:
    return web.page(request, "not_found.html", {}, status=404)


async def every_item(list_page: Callable[[int, str | None], Awaitable[ShortPage[T]]]) -> list[T]:
    """Every item of a short listing (a form's recipients or endpoints), page by page."""
    items: list[T] = []
    cursor: str | None = None
    while True:
        page = await list_page(MAX_PAGE, cursor)
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor


def to_shown_test(form: Form, page: str, delivery_id: str) -> Response:
    """The way to a settings page showing how a test delivery went (`shown_test`)."""
    query = urlencode({"test": delivery_id})
    return web.see_other(f"{settings_path(form, page)}?{query}#test")


async def shown_test(
    request: Request, form: Form, delivery_id: str, event_type: EventType
) -> dict[str, object] | None:
    """The test delivery a redirect names, as it stands now: only one of `event_type`
    and of this form (a mail.test on the Mail page, a chat.test on the Chat page)."""
    if not delivery_id:
        return None
    try:
        record = await web.runtime(request).services.deliveries.owned(
            form.workspace_id, delivery_id
        )
    except NotFoundError:
        return None
    if record.event_type is not event_type or record.form_id != form.form_id:
        return None
    return delivery_record_view(record)
