"""A form's submissions over HTTP: the listing, newest first a page at a time, and the
export of the same filtered set as CSV or JSON lines, streamed."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from intake.domain.listing import MAX_TEXT, SubmissionFilter
from intake.domain.model import Scope, SubmissionStatus
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
from intake.presentation.exports import csv_text, jsonl_line
from intake.presentation.views import submission_view
from intake.service.admin import Admin, AdminError, submission_filter

_STATUSES = frozenset(status.value for status in SubmissionStatus)
_FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
# Lines are sent in chunks of about this many characters: far fewer writes than one per
# row, and the memory an export holds stays this small whatever the number of rows.
_CHUNK = 64 * 1024


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
    listed = await call.admin.submission_page(
        call.workspace_id, form_id, chosen, cursor=cursor, limit=limit
    )
    items = [submission_view(s, call.admin.files_view(s)) for s in listed.submissions]
    return page_response(items, listed.next_cursor)


@endpoint(Scope.READ)
async def export_submissions(request: Request, call: Call) -> Response:
    chosen = _filter(request)
    formats = query_choices(request, "format", _FORMATS)
    if len(formats) > 1:
        raise AdminError("Give one format.", field="format")
    fmt = formats[0] if formats else "csv"
    # Before the first byte: a form of another workspace is a 404, not a broken stream.
    form = await call.admin.owned_form(call.workspace_id, request.path_params["form_id"])
    write = _csv if fmt == "csv" else _jsonl
    lines = write(call.admin, form.form_id, chosen)
    disposition = f'attachment; filename="submissions-{form.form_id}.{fmt}"'
    return StreamingResponse(
        _chunks(lines),
        media_type=_FORMATS[fmt],
        headers={"Content-Disposition": disposition, "Cache-Control": "no-store"},
    )


async def _csv(admin: Admin, form_id: str, chosen: SubmissionFilter) -> AsyncIterator[str]:
    async for row in admin.export_csv_rows(form_id, chosen):
        yield csv_text(row)


async def _jsonl(admin: Admin, form_id: str, chosen: SubmissionFilter) -> AsyncIterator[str]:
    async for submission in admin.submissions(form_id, chosen):
        yield jsonl_line(submission, admin.files_view(submission)) + "\n"


async def _chunks(lines: AsyncIterator[str]) -> AsyncIterator[bytes]:
    pending: list[str] = []
    size = 0
    async for line in lines:
        pending.append(line)
        size += len(line)
        if size >= _CHUNK:
            yield "".join(pending).encode("utf-8")
            pending, size = [], 0
    if pending:
        yield "".join(pending).encode("utf-8")


ROUTES: list[Route] = [
    Route("/v1/forms/{form_id}/submissions", list_submissions, methods=["GET"]),
    Route("/v1/forms/{form_id}/export", export_submissions, methods=["GET"]),
]
