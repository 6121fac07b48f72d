"""A form's messages, for its owners: whether its recipients are mailed, whether the
person who wrote in gets a confirmation (and how many an hour at most), whether the form
keeps nothing once forwarded, and its own mail templates, saved together through the
service call of PATCH /v1/forms/{form_id} with its checks; and a preview of the mail the
templates make of a sample submission, typed or saved. A refused template is named next
to its box, with why, and nothing is saved."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from intake.domain.form_messages import TEMPLATE_NAMES
from intake.domain.model import Form
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.form_owner import (
    for_owners,
    not_found,
    owner_context,
    settings_path,
)
from intake.entrypoints.http.dashboard.forms import read_form, text
from intake.presentation.views import form_view, mail_preview_view
from intake.service.accounts import SignedIn
from intake.service.admin import AdminError, FormChanges, NotFoundError
from intake.service.admin.message_changes import (
    AUTORESPONSE_HOURLY_LIMIT,
    PREVIEW_KINDS,
    MessageChanges,
)

PATH = web.PREFIX + "/forms/{form_id}/settings/messages"
_SWITCHES = ("mail_notifications", "forward_only", "autoresponse")
_FIELDS = (*_SWITCHES, AUTORESPONSE_HOURLY_LIMIT, *TEMPLATE_NAMES, "kind")


def _shown(form: Form) -> dict[str, str]:
    view = form_view(form)
    templates = view["templates"]
    assert isinstance(templates, dict)
    limit = view[AUTORESPONSE_HOURLY_LIMIT]
    return {
        **{name: "on" if view[name] else "" for name in _SWITCHES},
        AUTORESPONSE_HOURLY_LIMIT: "" if limit is None else str(limit),
        **{name: templates[name] or "" for name in TEMPLATE_NAMES},
        "kind": PREVIEW_KINDS[0],
    }


def _entered(posted: FormData) -> dict[str, str]:
    # Browsers send CRLF line ends: a template is kept with LF.
    return {name: text(posted, name).replace("\r\n", "\n") for name in _FIELDS}


def _render(
    request: Request,
    signed: SignedIn,
    form: Form,
    entered: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    preview: dict[str, object] | None = None,
) -> Response:
    context = owner_context(signed, form_view(form), "messages", settings_path(form, "messages"))
    context |= {
        "entered": entered,
        "errors": errors or {},
        "templates": TEMPLATE_NAMES,
        "kinds": PREVIEW_KINDS,
        "preview": preview,
        "saved": not errors and request.query_params.get("saved") == "1",
        "default_limit": web.runtime(request).settings.autoresponse_hourly_limit,
    }
    status = 422 if errors else 200
    return web.page(request, "form_settings_messages.html", context, status=status)


def _changes(entered: dict[str, str]) -> MessageChanges:
    """Every setting as the page shows it: an empty box is the default."""
    limit_text = entered[AUTORESPONSE_HOURLY_LIMIT].strip()
    limit: int | None = None
    if limit_text:
        if not limit_text.isdigit():
            raise AdminError("must be a whole number", field=AUTORESPONSE_HOURLY_LIMIT)
        limit = int(limit_text)
    return MessageChanges(
        mail_notifications=entered["mail_notifications"] == "on",
        forward_only=entered["forward_only"] == "on",
        autoresponse=entered["autoresponse"] == "on",
        autoresponse_hourly_limit=limit,
        templates={name: entered[name] or None for name in TEMPLATE_NAMES},
    )


def _refused(error: AdminError) -> dict[str, str]:
    name = (error.field or "form").removeprefix("templates.")
    return {name: str(error)}


@for_owners
async def messages_page(request: Request, signed: SignedIn, form: Form) -> Response:
    return _render(request, signed, form, _shown(form))


@for_owners
async def save(request: Request, signed: SignedIn, form: Form) -> Response:
    entered = _entered(await read_form(request, signed.csrf, max_fields=len(_FIELDS) + 1))
    try:
        changes = FormChanges(messages=_changes(entered))
        await web.runtime(request).services.forms.update_owned(
            form.workspace_id, form.form_id, changes
        )
    except NotFoundError:
        return not_found(request)
    except AdminError as error:
        return _render(request, signed, form, entered, errors=_refused(error))
    return web.see_other(settings_path(form, "messages") + "?saved=1")


@for_owners
async def preview(request: Request, signed: SignedIn, form: Form) -> Response:
    """The mail the templates as typed (not saved) make of a sample submission."""
    entered = _entered(await read_form(request, signed.csrf, max_fields=len(_FIELDS) + 1))
    kind = entered["kind"] if entered["kind"] in PREVIEW_KINDS else PREVIEW_KINDS[0]
    typed = {name: entered[name] or None for name in TEMPLATE_NAMES}
    services = web.runtime(request).services
    try:
        await services.forms.owned(form.workspace_id, form.form_id)
        parts = await services.forms.preview_mail(form.form_id, kind, typed)
    except NotFoundError:
        return not_found(request)
    except AdminError as error:
        return _render(request, signed, form, entered, errors=_refused(error))
    shown: dict[str, Any] = mail_preview_view(kind, parts)
    return _render(request, signed, form, entered, preview=shown)
