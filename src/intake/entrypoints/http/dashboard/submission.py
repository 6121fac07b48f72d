"""One submission in the dashboard: its fields in their order, files with fresh download
links, the reply address, spam score, status and every delivery with its attempts; and
triage (release, mark as spam, delete after a confirmation). Members and owners alike."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from intake.domain.model import Submission
from intake.domain.validation import is_email
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form
from intake.presentation.views import submission_detail_view
from intake.service.accounts import SignedIn
from intake.service.admin import Admin, NotFoundError

PATH = web.PREFIX + "/submissions/{submission_id}"


def _path(submission_id: str) -> str:
    return f"{web.PREFIX}/submissions/{quote(submission_id, safe='')}"


def _inbox(form_id: str) -> str:
    return f"{web.PREFIX}/forms/{quote(form_id, safe='')}"


def _not_found(request: Request) -> Response:
    return web.page(request, "not_found.html", {}, status=404)


async def _find(admin: Admin, signed: SignedIn, submission_id: str) -> Submission:
    """The submission in one of the user's workspaces; any other is not found."""
    for membership in signed.memberships:
        try:
            return await admin.owned_submission(membership.workspace_id, submission_id)
        except NotFoundError:
            continue
    raise NotFoundError(f"no submission {submission_id!r}")


def _fields(data: dict[str, object]) -> list[dict[str, object]]:
    # In the order the visitor sent them; a repeated field's values stay a list.
    return [
        {"name": name, "values": value if isinstance(value, list) else None, "value": value}
        for name, value in data.items()
    ]


def _reply_link(reply_to: object) -> str | None:
    """A `mailto:` link only for an address that passes the same check as at intake."""
    if not isinstance(reply_to, str) or not is_email(reply_to):
        return None
    return "mailto:" + quote(reply_to.strip(), safe="@")


@web.requires_sign_in
async def submission_page(request: Request, signed: SignedIn) -> Response:
    admin = web.runtime(request).admin
    try:
        found = await _find(admin, signed, request.path_params["submission_id"])
        detail = await admin.submission_detail(found.workspace_id, found.submission_id)
    except NotFoundError:
        return _not_found(request)
    view = submission_detail_view(detail)
    data = view["data"]
    context = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "submission": view,
        "fields": _fields(data if isinstance(data, dict) else {}),
        "reply_link": _reply_link(view["reply_to"]),
        "path": _path(found.submission_id),
        "inbox": _inbox(found.form_id),
    }
    return web.page(request, "submission.html", context)


@web.requires_sign_in
async def delete_form(request: Request, signed: SignedIn) -> Response:
    try:
        found = await _find(
            web.runtime(request).admin, signed, request.path_params["submission_id"]
        )
    except NotFoundError:
        return _not_found(request)
    context = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "submission_id": found.submission_id,
        "path": _path(found.submission_id),
    }
    return web.page(request, "submission_delete.html", context)


Triage = Callable[[Admin, Submission], Awaitable[str]]


async def _triage(request: Request, signed: SignedIn, act: Triage) -> Response:
    """Every triage post: CSRF checked, the submission the user's; then 303."""
    admin = web.runtime(request).admin
    try:
        await read_form(request, signed.csrf)
        found = await _find(admin, signed, request.path_params["submission_id"])
        await admin.acting_workspace(found.workspace_id)
        return web.see_other(await act(admin, found))
    except BadFormError:
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return _not_found(request)


async def _release(admin: Admin, submission: Submission) -> str:
    await admin.release(submission)
    return _path(submission.submission_id)


async def _mark_spam(admin: Admin, submission: Submission) -> str:
    await admin.mark_spam(submission)
    return _path(submission.submission_id)


async def _delete(admin: Admin, submission: Submission) -> str:
    await admin.delete_submission(submission)
    return _inbox(submission.form_id)


@web.requires_sign_in
async def release(request: Request, signed: SignedIn) -> Response:
    return await _triage(request, signed, _release)


@web.requires_sign_in
async def mark_spam(request: Request, signed: SignedIn) -> Response:
    return await _triage(request, signed, _mark_spam)


@web.requires_sign_in
async def delete(request: Request, signed: SignedIn) -> Response:
    return await _triage(request, signed, _delete)
