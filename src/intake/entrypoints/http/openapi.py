"""The OpenAPI 3.1 document for the submission endpoints and the file downloads, built
from the error table so the two cannot drift apart."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from typing import Any

from intake.domain.errors import (
    DOWNLOAD_ERRORS,
    ERRORS,
    METRICS_UNAUTHORIZED,
    SUBMISSION_CODES,
    ErrorCode,
)
from intake.entrypoints.http.cors import ALLOW_HEADERS
from intake.entrypoints.http.openapi_envelope import HEADER_REQUEST_ID as _HEADER_REQUEST_ID
from intake.entrypoints.http.openapi_envelope import HEADER_RETRY_AFTER as _HEADER_RETRY_AFTER
from intake.entrypoints.http.openapi_envelope import error_schema as _error_schema
from intake.entrypoints.http.openapi_management import with_management

_PUBLIC_CODES = SUBMISSION_CODES
_SERVER_CODES = tuple(
    c
    for c in SUBMISSION_CODES
    if c not in (ErrorCode.ORIGIN_NOT_ALLOWED, ErrorCode.CHALLENGE_FAILED)
)

# A 429 is either the rate limiter's, which says when to come back, or the monthly
# quota's, which has no such moment to offer.
_HEADER_RETRY_AFTER_429 = {
    **_HEADER_RETRY_AFTER,
    "description": "On rate_limited: whole seconds until a request would be admitted.",
    "required": False,
}


def _responses_for(codes: Iterable[ErrorCode], *, public: bool) -> dict[str, Any]:
    by_status: dict[int, list[ErrorCode]] = {}
    for code in codes:
        by_status.setdefault(ERRORS[code].status, []).append(code)
    responses: dict[str, Any] = {
        "201": {
            "description": "Accepted: a new submission.",
            "headers": {"X-Request-ID": _HEADER_REQUEST_ID},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Success"}}},
        },
        "200": {
            "description": "A replay of an earlier request with the same Idempotency-Key and "
            "payload: the original answer.",
            "headers": {
                "X-Request-ID": _HEADER_REQUEST_ID,
                "Idempotent-Replayed": {"schema": {"const": "true"}},
            },
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Success"}}},
        },
        "303": {
            "description": "Accepted, for a browser (Accept prefers text/html): sent on to the "
            "form's redirect URL, an allowed `_next`, or the thank-you page.",
            "headers": {"Location": {"schema": {"type": "string"}}},
        },
        "405": {
            "description": "The method is not allowed on this path.",
            "headers": {"Allow": {"schema": {"type": "string"}}},
            "content": {"application/json": {"schema": _error_schema(ErrorCode.MALFORMED_REQUEST)}},
        },
    }
    for status, status_codes in sorted(by_status.items()):
        schemas = [_error_schema(code) for code in status_codes]
        headers: dict[str, Any] = {"X-Request-ID": _HEADER_REQUEST_ID}
        if status == 503:
            headers["Retry-After"] = _HEADER_RETRY_AFTER
        elif status == 429:
            headers["Retry-After"] = _HEADER_RETRY_AFTER_429
        names = ", ".join(code.value for code in status_codes)
        responses[str(status)] = {
            "description": f"Refused: {names}. A browser gets an HTML page with the message.",
            "headers": headers,
            "content": {
                "application/json": {
                    "schema": schemas[0] if len(schemas) == 1 else {"oneOf": schemas}
                },
                "text/html": {"schema": {"type": "string"}},
            },
        }
    if public:
        for response in responses.values():
            response.setdefault("headers", {})["Access-Control-Allow-Origin"] = {
                "description": "The request's Origin, echoed.",
                "schema": {"type": "string"},
            }
    return responses


_FIELDS_SCHEMA = {
    "type": "object",
    "description": "Named fields. Names starting with `_` are control fields: `_gotcha` "
    "(honeypot), `_next`, `_subject`, `_replyto`; and the challenge widgets' "
    "`cf-turnstile-response`, `h-captcha-response`, `g-recaptcha-response`.",
    "additionalProperties": True,
}

_REQUEST_BODY = {
    "required": True,
    "content": {
        "application/x-www-form-urlencoded": {"schema": _FIELDS_SCHEMA},
        "multipart/form-data": {"schema": _FIELDS_SCHEMA},
        "application/json": {"schema": _FIELDS_SCHEMA},
    },
}

_COMMON_PARAMETERS = [
    {
        "name": "Idempotency-Key",
        "in": "header",
        "required": False,
        "description": "1 to 255 printable ASCII characters; honoured for 24 hours.",
        # Anything else is refused (400 malformed_request), so the schema says so too.
        "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[ -~]*$"},
    },
    {
        "name": "Accept",
        "in": "header",
        "required": False,
        "description": "A browser preferring text/html gets a 303 or an HTML page.",
        "schema": {"type": "string"},
    },
]


_METRICS_OPERATION = {
    "operationId": "metrics",
    "summary": "Prometheus metrics of the service (docs/operations.md)",
    "description": "For the operator: served only when INTAKE_METRICS_TOKEN is set, and "
    "then only to a request bearing that token; unset, /metrics is an unknown path (404). "
    "OpenMetrics when the Accept header asks for it.",
    "security": [{"metricsToken": []}],
    "responses": {
        "200": {
            "description": "The metrics, in the Prometheus text exposition format.",
            "headers": {"X-Request-ID": _HEADER_REQUEST_ID},
            "content": {
                "text/plain": {"schema": {"type": "string"}},
                "application/openmetrics-text": {"schema": {"type": "string"}},
            },
        },
        "401": {
            "description": "The request does not carry the token (none, or a wrong one).",
            "headers": {
                "X-Request-ID": _HEADER_REQUEST_ID,
                "WWW-Authenticate": {"schema": {"const": "Bearer"}},
            },
            "content": {
                "application/json": {
                    "schema": _error_schema(ErrorCode.UNAUTHORIZED, METRICS_UNAUTHORIZED)
                },
            },
        },
        "404": {
            "description": "INTAKE_METRICS_TOKEN is not set: the metrics are not served.",
            "headers": {"X-Request-ID": _HEADER_REQUEST_ID},
            "content": {
                "application/json": {"schema": _error_schema(ErrorCode.FORM_NOT_FOUND)},
            },
        },
    },
}


def _refusal(code: ErrorCode, description: str, **headers: Any) -> dict[str, Any]:
    """A refusal of the download route, in its own words where it has them."""
    return {
        "description": description,
        "headers": {"X-Request-ID": _HEADER_REQUEST_ID, **headers},
        "content": {
            "application/json": {"schema": _error_schema(code, DOWNLOAD_ERRORS.get(code))},
            "text/html": {"schema": {"type": "string"}},
        },
    }


_BINARY = {"type": "string", "format": "binary"}

_FILE_RESPONSES = {
    "200": {
        "description": "The file, as a download, in the type its content was found to be "
        "(`application/octet-stream` when none was recognised). HEAD: the same headers, "
        "no body.",
        "headers": {
            "X-Request-ID": _HEADER_REQUEST_ID,
            "Content-Length": {"required": True, "schema": {"type": "string"}},
            "Content-Disposition": {
                "description": "`attachment`, with the file's name (RFC 6266 `filename*`).",
                "required": True,
                "schema": {"type": "string", "pattern": "^attachment; "},
            },
            "ETag": {
                "description": "The content's SHA-256, in hex, quoted.",
                "required": True,
                "schema": {"type": "string", "pattern": '^"[0-9a-f]{64}"$'},
            },
            "X-Content-Type-Options": {"required": True, "schema": {"const": "nosniff"}},
            "Content-Security-Policy": {
                "required": True,
                "schema": {"const": "sandbox; default-src 'none'"},
            },
            "Cache-Control": {"required": True, "schema": {"const": "private, no-store"}},
            "Referrer-Policy": {"schema": {"const": "no-referrer"}},
        },
        # Binary, so that client generators keep the answer (a `*/*` alone they drop):
        # `application/octet-stream` by name, and any type a file may be found to be.
        "content": {
            "application/octet-stream": {"schema": _BINARY},
            "*/*": {"schema": _BINARY},
        },
    },
    "401": _refusal(
        ErrorCode.UNAUTHORIZED,
        "unauthorized: the link's signature is missing or wrong, or the link has expired.",
    ),
    "404": _refusal(
        ErrorCode.FORM_NOT_FOUND,
        "form_not_found: no such submission, or no such file of it.",
    ),
    "503": _refusal(
        ErrorCode.SERVICE_UNAVAILABLE,
        "service_unavailable: the database or the blob store cannot be reached; try again.",
        **{"Retry-After": _HEADER_RETRY_AFTER},
    ),
}

_FILE_PARAMETERS = [
    {"name": "submission_id", "in": "path", "required": True, "schema": {"type": "string"}},
    {
        "name": "index",
        "in": "path",
        "required": True,
        "description": "The file's position among the submission's files, from 0.",
        "schema": {"type": "integer", "minimum": 0},
    },
    {
        "name": "expires",
        "in": "query",
        "required": True,
        "description": "When the link stops working, in Unix seconds.",
        "schema": {"type": "string"},
    },
    {
        "name": "signature",
        "in": "query",
        "required": True,
        "description": "The link's signature.",
        "schema": {"type": "string"},
    },
]


def _file_operation(operation_id: str, summary: str) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "summary": summary,
        "description": "A signed, time-limited link, as webhooks, notification mail and "
        "exports hand out: whoever holds it may download the file until it expires. The "
        "link is checked before anything else.",
        "parameters": _FILE_PARAMETERS,
        "responses": _FILE_RESPONSES,
    }


_PUBLIC_FORM_KEY = {
    "name": "public_form_key",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
}

_PUBLIC_OPERATION = {
    "operationId": "submitPublic",
    "summary": "Submit a form by its public key",
    "parameters": [
        _PUBLIC_FORM_KEY,
        *_COMMON_PARAMETERS,
        {
            "name": "Origin",
            "in": "header",
            "required": False,
            "description": "Checked when the form has an allowed-domains list.",
            "schema": {"type": "string"},
        },
        {
            "name": "X-Challenge-Token",
            "in": "header",
            "required": False,
            "description": "The bot-challenge token, for clients that do not post the "
            "widget's own field.",
            "schema": {"type": "string"},
        },
    ],
    "requestBody": _REQUEST_BODY,
    "responses": _responses_for(_PUBLIC_CODES, public=True),
}

_SERVER_OPERATION = {
    "operationId": "submitServer",
    "summary": "Submit to a form by its id, authenticated with a secret API key",
    "security": [{"apiKey": ["submit"]}],
    "x-scopes": ["submit"],
    "parameters": [
        {"name": "form_id", "in": "path", "required": True, "schema": {"type": "string"}},
        *_COMMON_PARAMETERS,
    ],
    "requestBody": _REQUEST_BODY,
    "responses": _responses_for(_SERVER_CODES, public=False),
}

_PREFLIGHT_OPERATION = {
    "operationId": "preflightPublic",
    "summary": "CORS preflight for the public endpoint",
    "parameters": [_PUBLIC_FORM_KEY],
    "responses": {
        "204": {
            "description": f"Allowed: POST, with headers {ALLOW_HEADERS}.",
            "headers": {
                "Access-Control-Allow-Origin": {"schema": {"type": "string"}},
                "Access-Control-Allow-Methods": {"schema": {"type": "string"}},
                "Access-Control-Allow-Headers": {"schema": {"type": "string"}},
            },
        }
    },
}

_COMPONENTS = {
    "schemas": {
        "Success": {
            "type": "object",
            "required": ["ok", "submission_id", "message"],
            "properties": {
                "ok": {"const": True},
                "submission_id": {"type": "string"},
                "message": {"type": "string"},
            },
        }
    },
    "securitySchemes": {
        "apiKey": {
            "type": "http",
            "scheme": "bearer",
            "description": "A secret API key (`intake_sk_...`) of the workspace. Each "
            "operation names the scopes it needs (`submit`, `read` or `manage`, which "
            "implies `read`) as this requirement's roles and in `x-scopes`.",
        },
        "metricsToken": {
            "type": "http",
            "scheme": "bearer",
            "description": "The operator's INTAKE_METRICS_TOKEN.",
        },
    },
}


@cache
def openapi_document() -> dict[str, Any]:
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "intake",
            "version": "1",
            "description": "Form submission intake, and the management API under /v1 "
            "(tag `management`), where each operation names the API key scope it needs. "
            "Errors share one envelope; clients branch on error.code, show error.message "
            "and log request_id.",
        },
        "paths": {
            "/f/{public_form_key}": {"post": _PUBLIC_OPERATION, "options": _PREFLIGHT_OPERATION},
            "/v1/forms/{form_id}/submissions": {"post": _SERVER_OPERATION},
            "/v1/files/{submission_id}/{index}": {
                "get": _file_operation("downloadFile", "Download an uploaded file"),
                "head": _file_operation("headFile", "An uploaded file's headers"),
            },
            "/metrics": {"get": _METRICS_OPERATION},
        },
        "components": _COMPONENTS,
    }
    return with_management(document)


@cache
def openapi_json() -> bytes:
    """The document as served: rendered once, as it never changes while a process runs."""
    return json.dumps(openapi_document(), ensure_ascii=False, separators=(",", ":")).encode()
