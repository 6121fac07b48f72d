"""The pieces every operation of the OpenAPI document shares: the error envelope of the
error table, and the headers of every answer."""

from __future__ import annotations

from typing import Any

from intake.domain.errors import ERRORS, ErrorCode, ErrorSpec

HEADER_REQUEST_ID = {
    "description": "The request's id, also in every error body; quote it when asking for help.",
    "required": True,
    "schema": {"type": "string"},
}
HEADER_RETRY_AFTER = {
    "description": "Whole seconds to wait before trying again.",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9]+$"},
}


def error_schema(code: ErrorCode, spec: ErrorSpec | None = None) -> dict[str, Any]:
    """The envelope of `code`, with the table's message unless `spec` words it."""
    spec = spec or ERRORS[code]
    error: dict[str, Any] = {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": {"const": code.value},
            "message": {"const": spec.message},
        },
    }
    if code is ErrorCode.VALIDATION_FAILED:
        error["required"].append("fields")
        error["properties"]["fields"] = {
            "type": "object",
            "additionalProperties": {"type": "string"},
        }
    return {
        "type": "object",
        "required": ["ok", "error", "request_id"],
        "properties": {
            "ok": {"const": False},
            "error": error,
            "request_id": {"type": "string"},
        },
    }
