"""Forms made and unmade in the dashboard, by the owners of their workspace: a new form
from the Forms page (its name, then its settings page with the HTML to paste); a copy
of a form's settings; and a form deleted once its name is typed. Each post leads to a
page that says what it did (a redirect: reloading never does it twice). A member is
refused (403)."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from intake.domain.model import Form
from intake.entrypoints.http.dashboard import home, web
from intake.entrypoints.http.dashboard.form_owner import (
    for_owners,
    not_found,
    owner_context,
    refused,
)
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.entrypoints.http.dashboard.inbox import FORMS
from intake.entrypoints.http.dashboard.shown_text import plain
from intake.service.accounts import NotAllowed, SignedIn
from intake.service.admin import AdminError, NotFoundError

NEW_FORM = FORMS + "/new"
WORKSPACE = "workspace"
NAME = "name"
CONFIRM = "confirm"


def settings_path(form: Form) -> str:
    return f"{FORMS}/{quote(form.form_id, safe='')}/settings"


def confirmation_word(form: Form) -> str:
    """What an owner types to delete the form: its name as the page shows it (`plain`:
    no invisible character, no run of spaces, which no one could type from the page),
    or its id when it has none."""
    return plain(form.name) or form.form_id


@web.requires_sign_in
async def create(request: Request, signed: SignedIn) -> Response:
    try:
        posted = await read_form(request, signed.csrf)
        workspace_id = text(posted, WORKSPACE)
        signed.require_owner(workspace_id)
    except (BadFormError, NotAllowed):
        return refused(request)
    except NotFoundError:  # a workspace not theirs
        return not_found(request)
    services = web.runtime(request).services
    name = text(posted, NAME)
    try:
        await services.workspaces.acting(workspace_id)
        form = await services.forms.create(workspace_id, name=name)
    except AdminError as failed:
        attempt = home.NewFormAttempt(workspace_id, name, str(failed))
        return await home.render(request, signed, attempt, status=422)
    return web.see_other(settings_path(form) + "?created=1")


@for_owners
async def duplicate(request: Request, signed: SignedIn, form: Form) -> Response:
    """A new form with this one's settings, named as typed or as a copy; its settings
    page then shows it, with its own HTML."""
    posted = await read_form(request, signed.csrf)
    name = text(posted, NAME).strip() or None
    services = web.runtime(request).services
    try:
        copy = await services.forms.duplicate_owned(form.workspace_id, form.form_id, name)
    except AdminError as failed:
        return _delete_or_copy_page(request, signed, form, copy_error=str(failed))
    return web.see_other(settings_path(copy) + "?duplicated=1")


@for_owners
async def delete_page(request: Request, signed: SignedIn, form: Form) -> Response:
    """The warning, and the form's name to type."""
    return _delete_or_copy_page(request, signed, form)


@for_owners
async def delete(request: Request, signed: SignedIn, form: Form) -> Response:
    posted = await read_form(request, signed.csrf)
    typed = text(posted, CONFIRM)
    if plain(typed) != confirmation_word(form):
        message = "That is not the form's name: nothing was deleted."
        return _delete_or_copy_page(request, signed, form, typed=typed, delete_error=message)
    await web.runtime(request).services.forms.delete_owned(form.workspace_id, form.form_id)
    return web.see_other(web.PREFIX + "?deleted=1")


def _delete_or_copy_page(
    request: Request,
    signed: SignedIn,
    form: Form,
    *,
    typed: str = "",
    delete_error: str = "",
    copy_error: str = "",
) -> Response:
    context = owner_context(signed, form, "settings", settings_path(form)) | {
        "word": confirmation_word(form),
        "typed": typed,
        "delete_error": delete_error,
        "copy_error": copy_error,
    }
    status = 422 if delete_error or copy_error else 200
    return web.page(request, "form_delete.html", context, status=status)
