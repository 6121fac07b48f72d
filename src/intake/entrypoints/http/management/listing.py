"""A form's submissions over HTTP: the listing, newest first a page at a time, and the
export of the same filtered set as CSV or JSON lines, streamed."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.listing import MAX_TEXT, SubmissionFilter
from intake.domain.model import Scope, SubmissionStatus
from intake.entrypoints.http.exports import EXPORT_TYPES, export_response
from intake.entrypoints.http.management.common import (
    Call,
    endpoint,
    page_cursor,
    page_limit,
    page_response,
    query_choices,
    query_text,
    query_time,
)
from intake.presentation.views import submission_view
from intake.service.admin import AdminError, submission_filter

_STATUSES = frozenset(status.value for status in SubmissionStatus)
_FORMATS = EXPORT_TYPES


def _filter(request: Request) -> SubmissionFilter:
    """The filters the listing and the export share; 422 naming a parameter that is wrong."""
    return submission_filter(
        query_choices(request, "status", _STATUSES),
        query_time(request, "since"),
        query_time(request, "until"),
        query_text(request, "q", max_length=MAX_TEXT),
    )


@endpoint(Scope.READ)
async def list_submissions(request: Request, call: Call) -> Response:
    chosen = _filter(request)
    limit = page_limit(request)
    cursor = page_cursor(request)
    form_id = request.path_params["form_id"]
    listed = await call.services.submissions.page(
        call.workspace_id, form_id, chosen, cursor=cursor, limit=limit
    )
    items = [
        submission_view(s, call.services.submissions.files_view(s)) for s in listed.submissions
    ]
    return page_response(items, listed.next_cursor)


@endpoint(Scope.READ, acts=True)  # a suspended workspace sends nothing out
async def export_submissions(request: Request, call: Call) -> Response:
    chosen = _filter(request)
    formats = query_choices(request, "format", _FORMATS)
    if len(formats) > 1:
        raise AdminError("Give one format.", field="format")
    fmt = formats[0] if formats else "csv"
    # Before the first byte: a form of another workspace is a 404, not a broken stream.
    form = await call.services.forms.owned(call.workspace_id, request.path_params["form_id"])
    return export_response(call.services, form.form_id, fmt, chosen)


ROUTES: list[Route] = [
    Route("/v1/forms/{form_id}/submissions", list_submissions, methods=["GET"]),
    Route("/v1/forms/{form_id}/export", export_submissions, methods=["GET"]),
]
