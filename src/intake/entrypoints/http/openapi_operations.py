"""The builders of the management API's OpenAPI operations: each answer and refusal in
the error table's envelope, the scope an operation needs, and the parameters several
operations share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from intake.domain.errors import ERRORS, MANAGEMENT_ERRORS, WORKSPACE_SUSPENDED, ErrorCode
from intake.domain.listing import MAX_TEXT
from intake.domain.model import Scope, SubmissionStatus
from intake.entrypoints.http.openapi_envelope import (
    HEADER_REQUEST_ID,
    HEADER_RETRY_AFTER,
    error_schema,
)
from intake.service.admin.queued_tests import TEST_RATES

HEADERS = {"X-Request-ID": HEADER_REQUEST_ID}

# Every operation: the key is checked, then its scope, then its rate; the database may
# be out of reach.
_ALWAYS = (
    ErrorCode.UNAUTHORIZED,
    ErrorCode.FORBIDDEN,
    ErrorCode.RATE_LIMITED,
    ErrorCode.SERVICE_UNAVAILABLE,
)
# An operation on one object: another workspace's is as missing as a made-up one.
BY_ID = (ErrorCode.NOT_FOUND,)
WITH_QUERY = (ErrorCode.VALIDATION_FAILED,)
_WITH_BODY = (
    ErrorCode.MALFORMED_REQUEST,
    ErrorCode.UNSUPPORTED_CONTENT_TYPE,
    ErrorCode.PAYLOAD_TOO_LARGE,
    ErrorCode.VALIDATION_FAILED,
)

_WHEN = {
    ErrorCode.UNAUTHORIZED: "no key, a malformed, unknown or revoked one",
    ErrorCode.FORBIDDEN: "the key lacks the scope",
    ErrorCode.RATE_LIMITED: "too many requests with this key",
    ErrorCode.SERVICE_UNAVAILABLE: "the database cannot be reached; try again",
    ErrorCode.NOT_FOUND: "no such object in the key's workspace",
    ErrorCode.MALFORMED_REQUEST: "the body is not JSON, or not an object",
    ErrorCode.UNSUPPORTED_CONTENT_TYPE: "the body is not application/json",
    ErrorCode.PAYLOAD_TOO_LARGE: "the body is over 256 KiB",
    ErrorCode.VALIDATION_FAILED: "`error.fields` names each bad field or parameter",
}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def as_json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def answer(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"description": description, "headers": HEADERS}
    if schema is not None:
        response["content"] = as_json(schema)
    return response


def page(item: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["data", "next_cursor"],
        "properties": {
            "data": {"type": "array", "items": ref(item)},
            "next_cursor": {
                "description": "Pass it as `cursor` for the next page; null on the last.",
                "anyOf": [{"type": "string"}, {"type": "null"}],
            },
        },
    }


def _refusals(codes: Iterable[ErrorCode], *, acts: bool, throttled: bool) -> dict[str, Any]:
    by_status: dict[int, list[ErrorCode]] = {}
    for code in dict.fromkeys(codes):
        by_status.setdefault(ERRORS[code].status, []).append(code)
    responses: dict[str, Any] = {}
    for status, status_codes in sorted(by_status.items()):
        schemas = [error_schema(code, MANAGEMENT_ERRORS.get(code)) for code in status_codes]
        when = [f"{c.value}: {_WHEN[c]}" for c in status_codes]
        if acts and ErrorCode.FORBIDDEN in status_codes:
            schemas.append(error_schema(ErrorCode.FORBIDDEN, WORKSPACE_SUSPENDED))
            when.append("forbidden: the workspace is suspended (it changes and sends nothing)")
        if throttled and ErrorCode.RATE_LIMITED in status_codes:
            when.append(f"rate_limited: the destination had its tests for now ({TEST_RATES})")
        headers: dict[str, Any] = dict(HEADERS)
        if status in (429, 503):
            headers["Retry-After"] = HEADER_RETRY_AFTER
        responses[str(status)] = {
            "description": "; ".join(when) + ".",
            "headers": headers,
            "content": as_json(schemas[0] if len(schemas) == 1 else {"oneOf": schemas}),
        }
    return responses


def operation(
    operation_id: str,
    scope: Scope,
    summary: str,
    answers: dict[str, Any],
    *,
    description: str = "",
    parameters: Iterable[dict[str, Any]] = (),
    body: dict[str, Any] | None = None,
    errors: Iterable[ErrorCode] = (),
    acts: bool | None = None,
    throttled: bool = False,
) -> dict[str, Any]:
    """`acts`: the operation changes or sends something, and a suspended workspace is
    refused it (by default, every `manage` operation: management/common.py).
    `throttled`: a test to one destination, which may also be refused as one too many
    for now (service/admin/queued_tests.py)."""
    codes = [*_ALWAYS, *errors, *(_WITH_BODY if body is not None else ())]
    acting = scope is Scope.MANAGE if acts is None else acts
    needs = "`manage`" if scope is Scope.MANAGE else "`read` (or `manage`)"
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "description": f"{description}\n\nScope: {needs}.".strip(),
        "tags": ["management"],
        "security": [{"apiKey": [scope.value]}],
        "x-scopes": [scope.value],
        "parameters": list(parameters),
        "responses": {**answers, **_refusals(codes, acts=acting, throttled=throttled)},
    }
    if body is not None:
        operation["requestBody"] = {"required": True, "content": as_json(body)}
    return operation


def path_id(name: str, what: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": f"The {what}'s id.",
        "schema": {"type": "string"},
    }


PAGING = [
    {
        "name": "limit",
        "in": "query",
        "required": False,
        "description": "How many items a page holds.",
        "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
    },
    {
        "name": "cursor",
        "in": "query",
        "required": False,
        "description": "The `next_cursor` of the previous page, with the same filters.",
        "schema": {"type": "string"},
    },
]


def _time_filter(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": f"{description} (RFC 3339, with an offset).",
        "schema": {"type": "string", "format": "date-time"},
    }


FILTERS = [
    {
        "name": "status",
        "in": "query",
        "required": False,
        "description": "Only submissions of these statuses (repeat it); all when absent.",
        "style": "form",
        "explode": True,
        "schema": {"type": "array", "items": {"enum": [s.value for s in SubmissionStatus]}},
    },
    _time_filter("since", "Only submissions received at this time or later"),
    _time_filter("until", "Only submissions received before this time"),
    {
        "name": "q",
        "in": "query",
        "required": False,
        "description": "Only submissions with a field value containing this text, in any case.",
        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
    },
]
