"""GET /v1/spam: what the workspace's spam filter knows, as `intake spam stats` shows it
(docs/scoring.md, "What the filter knows"): counts only, never a word."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.model import Scope
from intake.entrypoints.http.management.common import Call, endpoint, json_response
from intake.presentation.spam import spam_summary_view


@endpoint(Scope.READ)
async def get_spam_filter(request: Request, call: Call) -> Response:
    summary = await call.services.spam.summary(call.workspace_id)
    return json_response(spam_summary_view(call.workspace_id, summary))


ROUTES: list[Route] = [Route("/v1/spam", get_spam_filter, methods=["GET"])]
