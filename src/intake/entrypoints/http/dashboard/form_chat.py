"""A form's chat destinations, for its owners: the Slack, Discord, Microsoft Teams and
Telegram chats told of each accepted submission; add one (its URL or token is never
shown again), remove one (after a confirmation), and send one a test message, whose
delivery the page then shows."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from intake.domain.chat import ChatApp, ChatDestination
from intake.domain.model import EventType, Form
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.form_owner import (
    every_item,
    for_owners,
    owner_context,
    owners_post,
    settings_path,
    shown_test,
    to_shown_test,
)
from intake.entrypoints.http.dashboard.forms import text
from intake.entrypoints.http.dashboard.told import tell
from intake.presentation.chat_views import chat_view
from intake.service.accounts import SignedIn
from intake.service.admin import AdminError, ChatRequest, NotFoundError
from intake.service.admin.errors import TooSoon

PATH = web.PREFIX + "/forms/{form_id}/settings/chat"
_LABELS = {
    "kind": "Chat app",
    "url": "Webhook URL",
    "telegram_token": "Bot token",
    "telegram_chat_id": "Chat id",
}


@for_owners
async def chat_page(request: Request, signed: SignedIn, form: Form) -> Response:
    return await _page(request, signed, form, test_id=request.query_params.get("test", ""))


async def _page(
    request: Request,
    signed: SignedIn,
    form: Form,
    *,
    kind: str = "",
    chat_id: str = "",
    error: str | None = None,
    confirm: ChatDestination | None = None,
    test_id: str = "",
    status: int = 200,
) -> Response:
    services = web.runtime(request).services
    chats = await every_item(
        lambda limit, cursor: services.chats.page(form.workspace_id, form.form_id, limit, cursor)
    )
    context = owner_context(signed, form, "chat", settings_path(form, "chat")) | {
        "destinations": [chat_view(c) for c in chats],
        "names": {c.destination_id: f"{c.app.value} ({c.shown_target})" for c in chats},
        "kinds": [app.value for app in ChatApp],
        "kind": kind,
        "chat_id": chat_id,
        "error": error,
        "confirm": chat_view(confirm) if confirm else None,
        "test": await shown_test(request, form, test_id, EventType.CHAT_TEST),
    }
    return web.page(request, "form_chat.html", context, status=status)


async def _destination(request: Request, form: Form, destination_id: str) -> ChatDestination:
    """One of this form's chat destinations; NotFoundError for any other."""
    services = web.runtime(request).services
    destination = await services.chats.owned(form.workspace_id, destination_id)
    if destination.form_id != form.form_id:
        raise NotFoundError(f"no chat destination {destination_id!r}")
    return destination


@owners_post
async def add(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    kind = text(posted, "kind")
    chat_id = text(posted, "telegram_chat_id")
    by_url = kind != ChatApp.TELEGRAM.value
    chat = ChatRequest(
        kind=kind,
        url=text(posted, "url") if by_url else None,
        telegram_token=None if by_url else text(posted, "telegram_token"),
        telegram_chat_id=None if by_url else chat_id,
        include_flagged=text(posted, "include_flagged") == "yes",
    )
    try:
        added = await web.runtime(request).services.chats.add_owned(
            form.workspace_id, form.form_id, chat
        )
    except AdminError as error:
        # The URL and token typed are not put back into the page: they are secrets.
        message = f"{_LABELS.get(error.field or '', 'Destination')}: {error}."
        return await _page(
            request, signed, form, kind=kind, chat_id=chat_id, error=message, status=422
        )
    said = f"Added: {added.app.value} ({added.shown_target}) is told of each submission."
    return await tell(request, signed, settings_path(form, "chat"), said)


@owners_post
async def remove(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    """A first post asks for confirmation; the second, with `confirm`, removes."""
    destination = await _destination(request, form, text(posted, "destination"))
    if text(posted, "confirm") != "yes":
        return await _page(request, signed, form, confirm=destination)
    await web.runtime(request).services.chats.remove_owned(
        form.workspace_id, destination.destination_id
    )
    said = f"Removed: {destination.app.value} ({destination.shown_target}) is told nothing more."
    return await tell(request, signed, settings_path(form, "chat"), said)


@owners_post
async def send_test(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    """Queues a test message to one destination; the page it leads to shows how it went."""
    destination = await _destination(request, form, text(posted, "destination"))
    try:
        record = await web.runtime(request).services.chats.test_owned(
            form.workspace_id, destination.destination_id
        )
    except TooSoon as error:
        return await _page(request, signed, form, error=f"{error}.", status=429)
    return to_shown_test(form, "chat", record.delivery.delivery_id)
