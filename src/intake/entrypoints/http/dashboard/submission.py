"""One submission in the dashboard: its fields in their order (long values folded), files
with fresh download links, the reply address, spam score and its reasons (which may quote
the visitor's words: shown as they are), status, every delivery named by where it goes,
with its attempts, and the same as JSON; triage (release, mark as spam, delete after a
confirmation) by members and owners; a delivery retried by owners."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from intake.domain.model import Submission
from intake.domain.validation import is_email
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.entrypoints.http.dashboard.submission_view import (
    KIND_NAMES,
    fields,
    target_name,
    timeline,
)
from intake.entrypoints.http.dashboard.told import tell
from intake.presentation.views import submission_detail_view
from intake.service.accounts import SignedIn
from intake.service.admin import (
    AdminError,
    DeliveryTargets,
    NotFoundError,
    OwnerServices,
)

PATH = web.PREFIX + "/submissions/{submission_id}"


def _path(submission_id: str) -> str:
    return f"{web.PREFIX}/submissions/{quote(submission_id, safe='')}"


def _inbox(form_id: str) -> str:
    return f"{web.PREFIX}/forms/{quote(form_id, safe='')}"


def _not_found(request: Request) -> Response:
    return web.page(request, "not_found.html", {}, status=404)


async def _find(services: OwnerServices, signed: SignedIn, submission_id: str) -> Submission:
    """The submission in one of the user's workspaces; any other is not found."""
    for membership in signed.memberships:
        try:
            return await services.submissions.owned(membership.workspace_id, submission_id)
        except NotFoundError:
            continue
    raise NotFoundError(f"no submission {submission_id!r}")


def _reply_link(reply_to: object) -> str | None:
    """A `mailto:` link only for an address that passes the same check as at intake."""
    if not isinstance(reply_to, str) or not is_email(reply_to):
        return None
    return "mailto:" + quote(reply_to.strip(), safe="@")


@web.requires_sign_in
async def submission_page(request: Request, signed: SignedIn) -> Response:
    services = web.runtime(request).services
    try:
        found = await _find(services, signed, request.path_params["submission_id"])
        detail = await services.submissions.detail(found.workspace_id, found.submission_id)
        form = await services.forms.owned(found.workspace_id, found.form_id)
        kinds = {d.delivery.kind for d in detail.deliveries}
        targets = (
            await services.deliveries.targets(found.workspace_id, found.form_id, kinds)
            if kinds
            else DeliveryTargets()
        )
    except NotFoundError:
        return _not_found(request)
    view = submission_detail_view(detail)
    deliveries = view["deliveries"]
    may_retry = signed.configures(found.workspace_id)
    context = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "form": form,
        "submission": view,
        "fields": fields(view["data"]),
        "deliveries": timeline(
            deliveries if isinstance(deliveries, list) else [], targets, may_retry=may_retry
        ),
        "reply_link": _reply_link(view["reply_to"]),
        "path": _path(found.submission_id),
        "json_url": _path(found.submission_id) + "/json",
        "inbox": _inbox(found.form_id),
    }
    return web.page(request, "submission.html", context)


@web.requires_sign_in
async def submission_json(request: Request, signed: SignedIn) -> Response:
    """The submission as `GET /v1/submissions/{id}` gives it, from the same service and
    view: what "Copy as JSON" copies."""
    services = web.runtime(request).services
    try:
        found = await _find(services, signed, request.path_params["submission_id"])
        detail = await services.submissions.detail(found.workspace_id, found.submission_id)
    except NotFoundError:
        return _not_found(request)
    response = JSONResponse(submission_detail_view(detail))
    response.headers.update(web.SECURITY_HEADERS)
    return response


@web.requires_sign_in
async def delete_form(request: Request, signed: SignedIn) -> Response:
    services = web.runtime(request).services
    try:
        found = await _find(services, signed, request.path_params["submission_id"])
        form = await services.forms.owned(found.workspace_id, found.form_id)
    except NotFoundError:
        return _not_found(request)
    context = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "form": form,
        "submission_id": found.submission_id,
        "path": _path(found.submission_id),
    }
    return web.page(request, "submission_delete.html", context)


# Where a triage leads, and what it says there.
Triage = Callable[[OwnerServices, Submission], Awaitable[tuple[str, str]]]


async def _triage(request: Request, signed: SignedIn, act: Triage) -> Response:
    """Every triage post: CSRF checked, the submission the user's; then 303."""
    services = web.runtime(request).services
    try:
        await read_form(request, signed.csrf)
        found = await _find(services, signed, request.path_params["submission_id"])
        await services.workspaces.acting(found.workspace_id)
        where, message = await act(services, found)
        return await tell(request, signed, where, message)
    except BadFormError:
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return _not_found(request)


async def _release(services: OwnerServices, submission: Submission) -> tuple[str, str]:
    await services.triage.release(submission)
    return _path(submission.submission_id), "Released: the submission is accepted."


async def _mark_spam(services: OwnerServices, submission: Submission) -> tuple[str, str]:
    await services.triage.mark_spam(submission)
    return _path(submission.submission_id), "Marked as spam."


async def _delete(services: OwnerServices, submission: Submission) -> tuple[str, str]:
    await services.triage.delete(submission)
    return _inbox(submission.form_id), "Submission deleted, with its files."


@web.requires_sign_in
async def release(request: Request, signed: SignedIn) -> Response:
    return await _triage(request, signed, _release)


@web.requires_sign_in
async def mark_spam(request: Request, signed: SignedIn) -> Response:
    return await _triage(request, signed, _mark_spam)


@web.requires_sign_in
async def delete(request: Request, signed: SignedIn) -> Response:
    return await _triage(request, signed, _delete)


@web.requires_sign_in
async def retry(request: Request, signed: SignedIn) -> Response:
    """One delivery of this submission due now (an owner's, as the API's `manage`
    retry), through the same service call; then the page says what was done."""
    services = web.runtime(request).services
    try:
        form_data = await read_form(request, signed.csrf)
        found = await _find(services, signed, request.path_params["submission_id"])
        if not signed.configures(found.workspace_id):
            return web.page(request, "refused.html", {}, status=403)
        record = await services.deliveries.owned(found.workspace_id, text(form_data, "delivery"))
        if record.submission_id != found.submission_id:
            raise NotFoundError("not a delivery of this submission")
    except BadFormError:
        return web.page(request, "refused.html", {}, status=403)
    except (NotFoundError, AdminError):
        return _not_found(request)
    delivery = record.delivery
    kind = delivery.kind.value
    targets = await services.deliveries.targets(found.workspace_id, found.form_id, {delivery.kind})
    where = target_name(kind, delivery.destination_id, targets) or "a removed destination"
    named = f"The {KIND_NAMES.get(kind, kind).lower()} delivery to {where}"
    try:
        await services.deliveries.retry_owned(found.workspace_id, delivery.delivery_id)
    except AdminError:  # delivered meanwhile
        message = f"{named} was delivered already: nothing to retry."
    else:
        message = f"{named} is due again: the relay sends it on its next round."
    return await tell(request, signed, _path(found.submission_id) + "#deliveries", message)
