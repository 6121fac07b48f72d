"""What every route of the management API shares: the key check, reading JSON bodies and
query parameters, and answering in the spec's envelope. A route reads its input with
these, calls one service (service/admin) and answers with a view of intake.presentation."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Mapping

from attrs import frozen
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from intake.domain.errors import (
    MANAGEMENT_ERRORS,
    WORKSPACE_SUSPENDED,
    ErrorCode,
    IntakeError,
    Rejection,
    StorageUnavailable,
)
from intake.domain.model import ApiKey, Scope
from intake.entrypoints.http.management.inputs import (
    BodyFields,
    page_cursor,
    page_limit,
    query_choices,
    query_text,
    query_time,
)
from intake.entrypoints.http.rendering import error_response
from intake.service.admin import (
    AdminError,
    NotFoundError,
    OwnerServices,
    WorkspaceSuspended,
)
from intake.service.admin.errors import TooSoon
from intake.service.api_access import ApiAccess

__all__ = [
    "BodyFields",
    "Call",
    "accepted",
    "endpoint",
    "json_fields",
    "json_response",
    "no_content",
    "page_cursor",
    "page_limit",
    "page_response",
    "query_choices",
    "query_text",
    "query_time",
]

# A management request's JSON is a few fields; anything larger is no honest request.
MAX_BODY_BYTES = 256 * 1024
_JSON_TYPES = frozenset({"application/json"})


@frozen
class Call:
    """An authorized request: the key, its workspace, and the services a route calls."""

    key: ApiKey
    services: OwnerServices
    request_id: str

    @property
    def workspace_id(self) -> str:
        return self.key.workspace_id


Handler = Callable[[Request, Call], Awaitable[Response]]


def endpoint(
    scope: Scope, *, acts: bool | None = None
) -> Callable[[Handler], Callable[[Request], Awaitable[Response]]]:
    """A route that needs `scope`: the key is checked first, and every refusal, from the
    key check, the input readers or the service, answers in the spec's envelope. A route
    that `acts` (changes or sends something: by default, every `manage` route) is
    refused in a suspended workspace."""
    acting = scope is Scope.MANAGE if acts is None else acts

    def wrap(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        @functools.wraps(handler)
        async def route(request: Request) -> Response:
            request_id: str = request.state.request_id
            runtime = request.app.state.runtime
            try:
                access = ApiAccess(
                    runtime.store.api_keys,
                    runtime.rate_limiter,
                    runtime.clock,
                    runtime.settings.rate_limits,
                )
                key = await access.authorize(request.headers.get("authorization"), scope)
                if acting:
                    await runtime.services.workspaces.acting(key.workspace_id)
                return await handler(request, Call(key, runtime.services, request_id))
            except WorkspaceSuspended:
                rejection = Rejection(ErrorCode.FORBIDDEN, spec=WORKSPACE_SUSPENDED)
                return error_response(rejection, request_id)
            except (IntakeError, AdminError, StorageUnavailable) as refused:
                rejection = _rejection(refused)
                # A refused key is told which scheme to authenticate with.
                challenge = {"WWW-Authenticate": "Bearer"} if rejection.status == 401 else None
                return error_response(rejection, request_id, headers=challenge)

        return route

    return wrap


def _rejection(refused: IntakeError | AdminError | StorageUnavailable) -> Rejection:
    """The refusal, in the API's own words where it has them (MANAGEMENT_ERRORS)."""
    return _refusal(refused).worded(MANAGEMENT_ERRORS)


def _refusal(refused: IntakeError | AdminError | StorageUnavailable) -> Rejection:
    if isinstance(refused, IntakeError):
        return refused.rejection
    if isinstance(refused, NotFoundError):
        return Rejection(ErrorCode.NOT_FOUND)
    if isinstance(refused, TooSoon):  # a throttled test
        return Rejection(ErrorCode.RATE_LIMITED, retry_after=refused.retry_after)
    if isinstance(refused, AdminError):
        fields = {refused.field or "request": str(refused)}
        return Rejection(ErrorCode.VALIDATION_FAILED, fields=fields)
    return Rejection(ErrorCode.SERVICE_UNAVAILABLE, retry_after=1)


async def json_fields(request: Request, allowed: frozenset[str] | set[str]) -> BodyFields:
    """The body, a JSON object, for typed reads of its `allowed` fields: 415 for another
    content type, 413 past MAX_BODY_BYTES, 400 for what is not JSON or not an object. An
    unknown field is refused by the readers' `done()`, with every other bad field in the
    same 422."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in _JSON_TYPES:
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)
    try:
        document = json.loads(bytes(body))
    except (ValueError, RecursionError):
        raise IntakeError.of(ErrorCode.MALFORMED_REQUEST) from None
    if not isinstance(document, dict):
        raise IntakeError.of(ErrorCode.MALFORMED_REQUEST)
    return BodyFields(document, allowed)


def json_response(
    document: Mapping[str, object], status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return JSONResponse(dict(document), status_code=status, headers=dict(headers or {}))


def page_response(items: list[dict[str, object]], next_cursor: str | None) -> Response:
    return JSONResponse({"data": items, "next_cursor": next_cursor})


def accepted(document: Mapping[str, object]) -> Response:
    return json_response(document, status=202)


def no_content() -> Response:
    return Response(status_code=204)
