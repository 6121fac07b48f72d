"""Triage over HTTP: PATCH /v1/submissions/{submission_id} releases a submission
(`{"status": "accepted"}`) or marks it as spam (`{"status": "spam"}`); DELETE erases it
(management-api.md, "Status changes and events")."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.model import Scope
from intake.domain.triage import TriageStatus
from intake.entrypoints.http.management.common import (
    BodyFields,
    Call,
    endpoint,
    json_fields,
    json_response,
    no_content,
)
from intake.presentation.views import submission_view

_PATCH_FIELDS = frozenset({"status"})
_STATUSES = ", ".join(f'"{status.value}"' for status in TriageStatus)


@endpoint(Scope.MANAGE)
async def change_submission(request: Request, call: Call) -> Response:
    status = _wanted_status(await json_fields(request, _PATCH_FIELDS))
    submission = await call.services.submissions.owned(
        call.workspace_id, request.path_params["submission_id"]
    )
    changed = await call.services.triage.set_status(submission, status)
    return json_response(submission_view(changed, call.services.submissions.files_view(changed)))


def _wanted_status(body: BodyFields) -> TriageStatus:
    text = body.text("status", required=True)
    wanted = next((status for status in TriageStatus if status.value == text), None)
    if text is not None and wanted is None:
        body.fail("status", f"Must be one of {_STATUSES}.")
    body.done()  # refuses a status missing, null, not a string or unknown
    assert wanted is not None
    return wanted


@endpoint(Scope.MANAGE)
async def delete_submission(request: Request, call: Call) -> Response:
    submission = await call.services.submissions.owned(
        call.workspace_id, request.path_params["submission_id"]
    )
    await call.services.triage.delete(submission)
    return no_content()


ROUTES: list[Route] = [
    Route("/v1/submissions/{submission_id}", change_submission, methods=["PATCH"]),
    Route("/v1/submissions/{submission_id}", delete_submission, methods=["DELETE"]),
]
