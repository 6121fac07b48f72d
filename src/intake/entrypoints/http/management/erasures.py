"""An erasure on request over HTTP: POST /v1/erasures erases every submission of the key's
workspace that holds an email address, and answers the receipt (docs/privacy.md,
"Answering an erasure request"); `"dry_run": true` lists what would go."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.model import Scope
from intake.entrypoints.http.management.common import (
    Call,
    endpoint,
    json_fields,
    json_response,
)
from intake.presentation.privacy import erasure_receipt_view

EMAIL = "email"
DRY_RUN = "dry_run"
_FIELDS = frozenset({EMAIL, DRY_RUN})
MAX_EMAIL_LENGTH = 320  # characters: the longest address a mail system passes on


@endpoint(Scope.MANAGE, acts=False)  # a privacy duty: not held by a suspension
async def create_erasure(request: Request, call: Call) -> Response:
    body = await json_fields(request, _FIELDS)
    email = body.text(EMAIL, required=True, max_length=MAX_EMAIL_LENGTH)
    dry_run = body.boolean(DRY_RUN)
    body.done()  # refuses an email missing, null or not a string
    assert email is not None
    receipt = await call.services.privacy.erase_person(
        call.workspace_id, email, dry_run=bool(dry_run)
    )
    return json_response(erasure_receipt_view(receipt))


ROUTES: list[Route] = [Route("/v1/erasures", create_erasure, methods=["POST"])]
