"""What a form's owner-only pages share (mail recipients, webhooks): the form, reached
only by an owner of its workspace, and the pages of a refusal."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from intake.domain.listing import MAX_PAGE
from intake.domain.model import Form
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.inbox import owned_form
from intake.service.accounts import SignedIn
from intake.service.admin.short_lists import ShortPage

T = TypeVar("T")


async def owners_form(request: Request, signed: SignedIn, form_id: str) -> Form:
    """The form, when the user owns its workspace: NotFoundError when it is in none of
    theirs, NotAllowed when they are a member there (destinations are the owner's)."""
    form = await owned_form(request, signed, form_id)
    signed.require_owner(form.workspace_id)
    return form


def settings_path(form: Form, tail: str) -> str:
    return f"{web.PREFIX}/forms/{quote(form.form_id, safe='')}/settings/{tail}"


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
