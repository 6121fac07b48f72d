"""An erasure on request from the dashboard (docs/privacy.md, "Answering an erasure
request"): owners only. A first post shows what would go (a dry run); the second, with
`confirm`, erases it and leads (post, redirect, get) to the receipt, shown once, so that
a reload erases nothing again. Each post carries the CSRF token."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.presentation.privacy import erasure_receipt_view
from intake.service.accounts import NotAllowed, SignedIn
from intake.service.admin import AdminError, NotFoundError

PATH = web.PREFIX + "/settings/erasure"
SETTINGS = web.PREFIX + "/settings"
_NOTE = "erasure receipt"  # what a confirmed erasure keeps for the page it leads to


@web.requires_sign_in
async def erase(request: Request, signed: SignedIn) -> Response:
    try:
        form = await read_form(request, signed.csrf)
        workspace_id = signed.require_owner(text(form, "workspace"))
        email = text(form, "email")
        confirmed = text(form, "confirm") == "yes"
        services = web.runtime(request).services
        receipt = await services.privacy.erase_person(workspace_id, email, dry_run=not confirmed)
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    except AdminError as error:
        refused: dict[str, Any] = {"csrf": signed.csrf, "email": signed.user.email}
        refused |= {"error": str(error), "asked": email}
        refused["workspace"] = await services.workspaces.get(workspace_id)
        return web.page(request, "erasure.html", refused, status=422)
    if confirmed:
        # The receipt waits for its page, for this session alone; a reload of that page
        # finds it taken and erases nothing again.
        shown = json.dumps({"asked": email, "receipt": erasure_receipt_view(receipt)})
        await web.accounts(request).notes.keep_secret(signed, _NOTE, workspace_id, shown)
        return web.see_other(f"{PATH}?{urlencode({'workspace': workspace_id})}")
    return await _page(request, signed, workspace_id, email, erasure_receipt_view(receipt))


@web.requires_sign_in
async def receipt_page(request: Request, signed: SignedIn) -> Response:
    """The receipt a confirmed erasure leads to, once; after that, the settings page."""
    workspace_id = request.query_params.get("workspace", "")
    if not signed.configures(workspace_id):
        return web.see_other(SETTINGS)
    kept = await web.accounts(request).notes.take_secret(signed, _NOTE, workspace_id)
    if kept is None:
        return web.see_other(f"{SETTINGS}?{urlencode({'workspace': workspace_id})}")
    shown = json.loads(kept)
    return await _page(request, signed, workspace_id, shown["asked"], shown["receipt"])


async def _page(
    request: Request, signed: SignedIn, workspace_id: str, asked: str, receipt: object
) -> Response:
    services = web.runtime(request).services
    context: dict[str, Any] = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "workspace": await services.workspaces.get(workspace_id),
        "asked": asked,
        "receipt": receipt,
        "names": {f.form_id: f.name for f in await services.forms.all(workspace_id)},
        "error": None,
    }
    return web.page(request, "erasure.html", context)
