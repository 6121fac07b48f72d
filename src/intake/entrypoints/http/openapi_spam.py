"""The OpenAPI of GET /v1/spam: what the workspace's spam filter knows (SpamFilter)."""

from __future__ import annotations

from typing import Any

from intake.domain.model import Scope
from intake.entrypoints.http.openapi_operations import answer, operation, ref

_COUNT = {"type": "integer", "minimum": 0}


def _counts(whose: str) -> dict[str, Any]:
    return {
        "spam_messages": {**_COUNT, "description": f"Messages {whose} taught as spam."},
        "ham_messages": {**_COUNT, "description": f"Messages {whose} taught as real."},
        "tokens": {**_COUNT, "description": "Distinct tokens with a count, kept as keyed hashes."},
    }


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": list(properties), "properties": properties}


SPAM_FILTER = _object(
    {
        "workspace_id": {"type": "string"},
        **_counts("the workspace's triage, its untouched submissions and `intake spam train`"),
        "confidence": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "How far the workspace's own filter decides its score: 0 until "
            "both kinds are taught, 1 once it decides alone.",
        },
        "instance": _object(_counts("every workspace of the instance")),
    }
)

_SPAM = {
    "get": operation(
        "getSpamFilter",
        Scope.READ,
        "What the workspace's spam filter knows",
        {"200": answer("Its counts, and the instance layer's.", ref("SpamFilter"))},
        description="Counts only: the filter keeps its tokens as keyed hashes, never a word. "
        "Every triage teaches it (a PATCH with the status a submission has confirms it), "
        "and so do submissions nobody touches once INTAKE_SPAM_SETTLE_DAYS old.",
    ),
}

SPAM_PATHS: dict[str, dict[str, Any]] = {"/v1/spam": _SPAM}
SPAM_SCHEMAS: dict[str, Any] = {"SpamFilter": SPAM_FILTER}
