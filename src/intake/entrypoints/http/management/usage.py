"""GET /v1/usage: the workspace's month, as `intake workspace show` counts it, with each
form's share and its filled honeypots."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.model import Scope
from intake.entrypoints.http.management.common import Call, endpoint, json_response
from intake.presentation.views import usage_view


@endpoint(Scope.READ)
async def get_usage(request: Request, call: Call) -> Response:
    return json_response(usage_view(await call.services.workspaces.usage(call.workspace_id)))


ROUTES: list[Route] = [Route("/v1/usage", get_usage, methods=["GET"])]
