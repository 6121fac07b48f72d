"""An erasure on request from the dashboard (docs/privacy.md, "Answering an erasure
request"): owners only. A first post shows what would go (a dry run); the second, with
`confirm`, erases it and shows the receipt. Each post carries the CSRF token."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.presentation.privacy import erasure_receipt_view
from intake.service.accounts import NotAllowed, SignedIn
from intake.service.admin import AdminError, NotFoundError

PATH = web.PREFIX + "/settings/erasure"


@web.requires_sign_in
async def erase(request: Request, signed: SignedIn) -> Response:
    try:
        form = await read_form(request, signed.csrf)
        workspace_id = signed.require_owner(text(form, "workspace"))
        email = text(form, "email")
        confirmed = text(form, "confirm") == "yes"
        admin = web.runtime(request).admin
        receipt = await admin.erase_person(workspace_id, email, dry_run=not confirmed)
        workspace = await admin.workspace(workspace_id)
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    except AdminError as error:
        refused: dict[str, Any] = {"csrf": signed.csrf, "email": signed.user.email}
        refused |= {"error": str(error), "asked": email}
        refused["workspace"] = await admin.workspace(workspace_id)
        return web.page(request, "erasure.html", refused, status=422)
    context: dict[str, Any] = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "workspace": workspace,
        "asked": email,
        "receipt": erasure_receipt_view(receipt),
        "names": {f.form_id: f.name for f in await admin.forms(workspace_id)},
        "error": None,
    }
    return web.page(request, "erasure.html", context)
