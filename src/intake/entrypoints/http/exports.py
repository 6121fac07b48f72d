"""An export of a form's submissions as a streamed HTTP answer, CSV or JSON lines: the
one the management API and the dashboard both serve."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.responses import StreamingResponse

from intake.domain.listing import SubmissionFilter
from intake.presentation.exports import csv_text, jsonl_line
from intake.service.admin import OwnerServices

EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
# Lines are sent in chunks of about this many characters: far fewer writes than one per
# row, and the memory an export holds stays this small whatever the number of rows.
_CHUNK = 64 * 1024


def export_response(
    services: OwnerServices, form_id: str, fmt: str, chosen: SubmissionFilter
) -> StreamingResponse:
    """The export of `form_id`'s submissions that `chosen` matches, in `fmt` (a key of
    EXPORT_TYPES). The caller has checked the form is the caller's: once the first byte
    is sent, nothing can turn into an error page."""
    write = _csv if fmt == "csv" else _jsonl
    disposition = f'attachment; filename="submissions-{form_id}.{fmt}"'
    return StreamingResponse(
        _chunks(write(services, form_id, chosen)),
        media_type=EXPORT_TYPES[fmt],
        headers={"Content-Disposition": disposition, "Cache-Control": "no-store"},
    )


async def _csv(
    services: OwnerServices, form_id: str, chosen: SubmissionFilter
) -> AsyncIterator[str]:
    async for row in services.exports.csv_rows(form_id, chosen):
        yield csv_text(row)


async def _jsonl(
    services: OwnerServices, form_id: str, chosen: SubmissionFilter
) -> AsyncIterator[str]:
    async for submission in services.exports.submissions(form_id, chosen):
        yield jsonl_line(submission, services.submissions.files_view(submission)) + "\n"


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
