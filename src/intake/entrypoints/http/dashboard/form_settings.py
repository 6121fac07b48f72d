"""A form's settings, for the owners of its workspace: name, allowed origins, challenge,
redirect, spam threshold, rules and uploads, saved together through the service call of
PATCH /v1/forms/{form_id} with the API's own checks (form_settings_input.py); pause and
resume; a new public key after a warning; and the HTML to paste into a site. A member
is refused (403): only owners change forms. Mail and webhooks have pages of their own."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from intake.domain.model import ChallengeProvider, Form
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.form_owner import for_owners, not_found, owner_context
from intake.entrypoints.http.dashboard.form_settings_input import (
    CONTROLS,
    WHOLE_FORM,
    RefusedSettingsError,
    changes_of,
    posted,
    sentence,
    shown,
)
from intake.entrypoints.http.dashboard.forms import read_form
from intake.entrypoints.http.dashboard.inbox import FORMS
from intake.entrypoints.http.dashboard.snippet import form_action, form_snippet
from intake.entrypoints.http.dashboard.told import tell
from intake.presentation.views import form_view
from intake.service.accounts import SignedIn
from intake.service.admin import AdminError, FormChanges, NotFoundError

PATH = FORMS + "/{form_id}/settings"
# The settings a refusal can name, each shown next to its control.
_SETTINGS = frozenset(
    {"name", "allowed_origins", "challenge", "redirect_url", "spam_threshold", "rules", "uploads"}
    | {"retention_days"}
)


def _path(form: Form) -> str:
    return f"{FORMS}/{quote(form.form_id, safe='')}/settings"


def base_url(request: Request) -> str:
    """Where sites post to: INTAKE_BASE_URL when set, else this request's own address."""
    configured = web.runtime(request).settings.base_url
    return (configured or str(request.base_url)).rstrip("/")


def _context(request: Request, signed: SignedIn, form: Form) -> dict[str, Any]:
    """What every page of a form's settings shows; never the challenge's secret."""
    base = base_url(request)
    return owner_context(signed, form_view(form), "settings", _path(form)) | {
        "action": form_action(base, form),
        "snippet": form_snippet(base, form),
        "client_snippet": form_snippet(base, form, client=True),
    }


def _render(
    request: Request,
    signed: SignedIn,
    form: Form,
    entered: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
) -> Response:
    errors = errors or {}
    context = _context(request, signed, form) | {
        "entered": entered,
        "errors": errors,
        "other_errors": [message for name, message in errors.items() if name not in _SETTINGS],
        "providers": [provider.value for provider in ChallengeProvider],
        "has_secret": form.challenge is not None,
        # What the last post did, as its redirect says (?saved=1, ?rotated=1).
        "saved": not errors and request.query_params.get("saved") == "1",
        "rotated": not errors and request.query_params.get("rotated") == "1",
        "created": not errors and request.query_params.get("created") == "1",
        "duplicated": not errors and request.query_params.get("duplicated") == "1",
    }
    return web.page(request, "form_settings.html", context, status=422 if errors else 200)


@for_owners
async def settings_page(request: Request, signed: SignedIn, form: Form) -> Response:
    return _render(request, signed, form, shown(form))


@for_owners
async def save(request: Request, signed: SignedIn, form: Form) -> Response:
    """Every setting at once, or none: a refused value shows the page again (422) with
    what was typed (but a secret) and the reason next to its control."""
    entered = posted(await read_form(request, signed.csrf, max_fields=len(CONTROLS) + 1))
    try:
        changes = changes_of(entered, form)
        await web.runtime(request).services.forms.update_owned(
            form.workspace_id, form.form_id, changes
        )
    except NotFoundError:  # deleted meanwhile
        return not_found(request)
    except RefusedSettingsError as refusal:
        return _render(request, signed, form, entered, errors=refusal.errors)
    except AdminError as failed:  # what needs the stored form: uploads without a store
        errors = {failed.field or WHOLE_FORM: sentence(str(failed))}
        return _render(request, signed, form, entered, errors=errors)
    return web.see_other(_path(form) + "?saved=1")


async def _set_enabled(request: Request, signed: SignedIn, form: Form, enabled: bool) -> Response:
    await read_form(request, signed.csrf)
    await web.runtime(request).services.forms.update_owned(
        form.workspace_id, form.form_id, FormChanges(enabled=enabled)
    )
    said = (
        "Form resumed: it accepts submissions again."
        if enabled
        else "Form paused: it accepts no submission until it is resumed."
    )
    return await tell(request, signed, _path(form), said)


@for_owners
async def pause(request: Request, signed: SignedIn, form: Form) -> Response:
    """The form refuses submissions (form_disabled) until resumed; nothing else changes."""
    return await _set_enabled(request, signed, form, enabled=False)


@for_owners
async def resume(request: Request, signed: SignedIn, form: Form) -> Response:
    return await _set_enabled(request, signed, form, enabled=True)


@for_owners
async def rotate_form(request: Request, signed: SignedIn, form: Form) -> Response:
    """The warning first: the old key stops working at once, everywhere."""
    return web.page(request, "form_rotate.html", _context(request, signed, form))


@for_owners
async def rotate(request: Request, signed: SignedIn, form: Form) -> Response:
    """A new public key; the settings page then shows it, with the snippet that carries
    it (a redirect: reloading that page must not rotate the key again)."""
    await read_form(request, signed.csrf)
    await web.runtime(request).services.forms.rotate_owned_key(form.workspace_id, form.form_id)
    return web.see_other(_path(form) + "?rotated=1")
