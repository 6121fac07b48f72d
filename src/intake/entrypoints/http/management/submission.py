"""One submission over HTTP: its data, files with fresh download links, spam score, and
every webhook and mail delivery of its events with their attempts."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.model import Scope
from intake.entrypoints.http.management.common import Call, endpoint, json_response
from intake.presentation.views import submission_detail_view


@endpoint(Scope.READ)
async def get_submission(request: Request, call: Call) -> Response:
    detail = await call.services.submissions.detail(
        call.workspace_id, request.path_params["submission_id"]
    )
    return json_response(submission_detail_view(detail))


ROUTES: list[Route] = [
    Route("/v1/submissions/{submission_id}", get_submission, methods=["GET"]),
]
