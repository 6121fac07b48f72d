"""The page a notification recipient's consent link opens: what it asks (the form, its
workspace, the address), and two buttons, to confirm or to decline. A GET answers
nothing: mail scanners fetch links, and would confirm for the address. The post carries
the pre-sign-in form cookie's token (double submit), as the sign-in page's does."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from intake.domain.recipient_consent import CONSENT_PATH
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.service.admin.recipients import ConsentAsked

PATH = CONSENT_PATH.rstrip("/") + "/{token}"


def _page(request: Request, context: dict[str, object], status: int = 200) -> Response:
    token = web.form_token(request)
    response = web.page(request, "consent.html", {"csrf": token, **context}, status=status)
    return web.with_form_cookie(response, request, token)


def _shown(asked: ConsentAsked) -> dict[str, object]:
    return {
        "email": asked.recipient.email,
        "form_name": asked.form.name,
        "workspace_name": asked.workspace.name,
    }


def _gone(request: Request) -> Response:
    """An unknown link, or one answered already: 410, as a used sign-in link."""
    return _page(request, {"answered": None, "asked": None}, status=410)


async def consent_form(request: Request) -> Response:
    asked = await web.runtime(request).services.recipients.consent_asked(
        request.path_params["token"]
    )
    if asked is None:
        return _gone(request)
    return _page(request, {"answered": None, "asked": _shown(asked)})


async def answer(request: Request) -> Response:
    try:
        form = await read_form(request, web.form_cookie(request))
    except BadFormError:
        return web.page(request, "refused.html", {}, status=403)
    choice = text(form, "answer")
    if choice not in {"confirm", "decline"}:
        return web.page(request, "refused.html", {}, status=403)
    services = web.runtime(request).services
    token: str = request.path_params["token"]
    answered = await services.recipients.answer_consent(token, accept=choice == "confirm")
    if answered is None:
        return _gone(request)
    return _page(request, {"answered": answered.recipient.status.value, "asked": _shown(answered)})
