"""Bulk triage from a form's inbox: release, mark as spam or delete the selected
submissions. Every id must be a submission of this form, in one of the user's
workspaces, or nothing is done; a delete is confirmed first, on a page of its own."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from intake.domain.model import Form, Submission
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.entrypoints.http.dashboard.inbox import (
    FORMS,
    KEPT,
    PAGE_SIZES,
    owned_form,
    read_query,
    render,
)
from intake.entrypoints.http.dashboard.told import tell
from intake.service.accounts import SignedIn
from intake.service.admin import NotFoundError, OwnerServices

ACTIONS = ("release", "spam", "delete")
MAX_IDS = max(PAGE_SIZES)  # one page's rows at most


@web.requires_sign_in
async def bulk(request: Request, signed: SignedIn) -> Response:
    try:
        form_data = await read_form(request, signed.csrf, max_fields=MAX_IDS + 10)
    except BadFormError:
        return web.page(request, "refused.html", {}, status=403)
    ids = list(dict.fromkeys(v for v in form_data.getlist("id") if isinstance(v, str)))
    action = text(form_data, "action")
    query = read_query({name: text(form_data, name) for name in KEPT if text(form_data, name)})
    services = web.runtime(request).services
    try:
        form = await owned_form(request, signed, request.path_params["form_id"])
        await services.workspaces.acting(form.workspace_id)
        if action not in ACTIONS or not 1 <= len(ids) <= MAX_IDS:
            return await render(request, signed, form, query, [_refusal(action, len(ids))])
        chosen = await _selected(services, form, ids)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    back = query.url(f"{FORMS}/{form.form_id}")
    if action == "delete" and text(form_data, "confirm") != "yes":
        context = {
            "csrf": signed.csrf,
            "email": signed.user.email,
            "form": form,
            "path": f"{FORMS}/{form.form_id}",
            "ids": [s.submission_id for s in chosen],
            "kept": query.params(),
            "back": back,
        }
        return web.page(request, "bulk_confirm.html", context)
    await _apply(services, action, chosen)
    return await tell(request, signed, back, _done(action, len(chosen)))


_DONE = {"release": "released (accepted)", "spam": "marked as spam", "delete": "deleted"}


def _done(action: str, count: int) -> str:
    """What the inbox says once the action is done, e.g. 2 submissions marked as spam."""
    return f"{count} submission{'' if count == 1 else 's'} {_DONE[action]}."


def _refusal(action: str, selected: int) -> str:
    if action not in ACTIONS:
        return "Choose an action."
    return "Select submissions first." if not selected else f"Select at most {MAX_IDS}."


async def _selected(services: OwnerServices, form: Form, ids: list[str]) -> list[Submission]:
    """The submissions named, each checked to be of the form's workspace and the form:
    NotFoundError for any other, before anything is changed."""
    chosen = []
    for submission_id in ids:
        submission = await services.submissions.owned(form.workspace_id, submission_id)
        if submission.form_id != form.form_id:
            raise NotFoundError(f"no submission {submission_id!r}")
        chosen.append(submission)
    return chosen


async def _apply(services: OwnerServices, action: str, chosen: list[Submission]) -> None:
    for submission in chosen:
        try:
            if action == "release":
                await services.triage.release(submission)
            elif action == "spam":
                await services.triage.mark_spam(submission)
            else:
                await services.triage.delete(submission)
        except NotFoundError:
            continue  # erased meanwhile (another tab, the API): nothing left to do
