"""The OpenAPI schemas of the management API's objects (the shapes of
presentation/views.py, which the command line prints too) and of its request bodies."""

from __future__ import annotations

from typing import Any

from intake.domain.deliveries import (
    AttemptOutcome,
    DeliveryState,
    DestinationKind,
    RecipientStatus,
)
from intake.domain.model import (
    MAX_SPAM_REASON_CHARS,
    MAX_SPAM_REASONS,
    ChallengeProvider,
    EventType,
    FormMode,
    Plan,
    RuleKind,
    SubmissionStatus,
)
from intake.domain.privacy import MAX_RETENTION_DAYS, MIN_RETENTION_DAYS
from intake.entrypoints.http.management.erasures import MAX_EMAIL_LENGTH
from intake.entrypoints.http.management.notifications import MAX_EMAIL
from intake.entrypoints.http.management.webhooks import MAX_URL
from intake.entrypoints.http.openapi_messages import (
    FORM_MESSAGE_FIELDS,
    FORM_MESSAGES,
    MAIL_PREVIEW,
)
from intake.service.admin.inputs import MAX_FORM_NAME


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _values(enum: Any) -> list[str]:
    return [member.value for member in enum]


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _object(properties: dict[str, Any], *, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """An answer's object: every key but `optional` is always there. Keys may be added in
    later versions, so clients must ignore the ones they do not know."""
    return {
        "type": "object",
        "required": [name for name in properties if name not in optional],
        "properties": properties,
    }


_STRING = {"type": "string"}
_TIME = {"type": "string", "format": "date-time"}
_MAYBE_TIME = _nullable(_TIME)
_MAYBE_STRING = _nullable(_STRING)
_COUNT = {"type": "integer", "minimum": 0}

_RULE = {
    "type": "object",
    "required": ["field", "kind"],
    "properties": {
        "field": {"type": "string", "minLength": 1},
        "kind": {"enum": _values(RuleKind)},
        "limit": {"type": "integer", "minimum": 1, "description": "max_length only."},
    },
    "additionalProperties": False,
}
_UPLOADS = {
    "type": "object",
    "properties": {
        "allowed_types": {"type": "array", "items": _STRING},
        "max_file_size": {"type": "integer", "minimum": 1},
        "max_total_size": {"type": "integer", "minimum": 1},
        "max_files": {"type": "integer", "minimum": 1},
    },
}

FORM = _object(
    {
        "form_id": _STRING,
        "workspace_id": _STRING,
        "public_form_key": _STRING,
        "name": _STRING,
        "mode": {"enum": _values(FormMode)},
        "enabled": {"type": "boolean"},
        "state": {"enum": ["enabled", "paused"]},
        "allowed_origins": {"type": "array", "items": _STRING},
        "rules": {"type": "array", "items": _RULE},
        "spam_threshold": {"type": "number"},
        "challenge": {
            "description": "The bot-challenge provider; its secret is never shown.",
            **_nullable({"enum": _values(ChallengeProvider)}),
        },
        "redirect_url": _MAYBE_STRING,
        "uploads": {
            "description": "The upload policy; null when the form refuses files.",
            **_nullable({**_UPLOADS, "required": list(_UPLOADS["properties"])}),
        },
        "retention_days": {
            "description": "Days its submissions are kept; null: until erased.",
            **_nullable({"type": "integer"}),
        },
        **FORM_MESSAGES,
        "created_at": _MAYBE_TIME,
    }
)

FILE = _object(
    {
        "field": _STRING,
        "name": _STRING,
        "size": _COUNT,
        "type": _STRING,
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
        "url": {"type": "string", "description": "A signed download link."},
        "url_expires_at": _MAYBE_TIME,
    },
    optional=("url", "url_expires_at"),
)

SUBMISSION = _object(
    {
        "submission_id": _STRING,
        "form_id": _STRING,
        "status": {"enum": _values(SubmissionStatus)},
        "subject": _MAYBE_STRING,
        "reply_to": _MAYBE_STRING,
        "data": {"type": "object", "description": "The fields as they were submitted."},
        "files": {"type": "array", "items": _ref("File")},
        "spam_score": {"type": "number"},
        "spam_reasons": {
            "type": "array",
            "items": {"type": "string", "maxLength": MAX_SPAM_REASON_CHARS},
            "maxItems": MAX_SPAM_REASONS,
            "description": "Why it scored as it did (`links:3`, `filter:+2.3`, "
            "`viagra=0.99`): short findings that may quote its words. Never shown to "
            "the sender.",
        },
        "created_at": _TIME,
    }
)

ATTEMPT = _object(
    {
        "attempted_at": _TIME,
        "outcome": {"enum": _values(AttemptOutcome)},
        "status_code": _nullable({"type": "integer"}),
        "error": _MAYBE_STRING,
    }
)

DELIVERY = _object(
    {
        "delivery_id": _STRING,
        "event_id": _STRING,
        "kind": {"enum": _values(DestinationKind)},
        "destination_id": _STRING,
        "state": {"enum": _values(DeliveryState)},
        "attempts": _COUNT,
        "next_attempt_at": _MAYBE_TIME,
        "last_error": _MAYBE_STRING,
        "created_at": _MAYBE_TIME,
        "delivered_at": _MAYBE_TIME,
        "dead_at": _MAYBE_TIME,
        "event_type": {"enum": _values(EventType)},
        "submission_id": {
            "description": "null for a `webhook.test` or `mail.test` event.",
            **_MAYBE_STRING,
        },
        "form_id": _STRING,
        "attempt_log": {
            "type": "array",
            "items": _ref("DeliveryAttempt"),
            "description": "Each attempt, oldest first.",
        },
    }
)

SUBMISSION_DETAIL = {
    "allOf": [
        _ref("Submission"),
        _object(
            {
                "deliveries": {
                    "type": "array",
                    "items": _ref("Delivery"),
                    "description": "Every webhook and mail delivery of its events.",
                }
            }
        ),
    ]
}

ENDPOINT = _object(
    {
        "endpoint_id": _STRING,
        "form_id": _STRING,
        "url": {
            "type": "string",
            "description": "The endpoint's URL, in full to a key with the `manage` scope. "
            "A `read` key is shown its scheme, host and port followed by `/…` "
            "(`https://hooks.example.com/…`): the path and query may carry the "
            "receiver's token.",
        },
        "url_redacted": {
            "type": "boolean",
            "description": "True when `url` shows only the scheme and host (a `read` key).",
        },
        "include_flagged": {"type": "boolean"},
        "enabled": {"type": "boolean"},
        "created_at": _MAYBE_TIME,
        "disabled_at": _MAYBE_TIME,
    }
)

CREATED_ENDPOINT = {
    "allOf": [
        _ref("WebhookEndpoint"),
        _object(
            {
                "secret": {
                    "type": "string",
                    "pattern": "^whsec_",
                    "description": "Signs every delivery to it; shown only this once.",
                }
            }
        ),
    ]
}

RECIPIENT = _object(
    {
        "recipient_id": _STRING,
        "form_id": _STRING,
        "email": _STRING,
        "created_at": _MAYBE_TIME,
        "status": {
            "enum": _values(RecipientStatus),
            "description": "`pending` until the address confirms through the one mail it "
            "is sent; it gets nothing else meanwhile. `declined`: it refused, and gets "
            "nothing.",
        },
    }
)

USAGE = _object(
    {
        "workspace_id": _STRING,
        "plan": {"enum": _values(Plan)},
        "period": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$"},
        "used": _COUNT,
        "limit": _nullable(_COUNT),
        "ceiling": _nullable(_COUNT),
        "forms": {
            "type": "array",
            "items": _object(
                {"form_id": _STRING, "used": _COUNT, "honeypot_hits": _COUNT},
            ),
        },
    }
)

RETRIED_DEAD = _object(
    {
        "endpoint_id": _STRING,
        "retried": {**_COUNT, "description": "How many dead deliveries are due again."},
    }
)

ERASURE_RECEIPT = _object(
    {
        "workspace_id": _STRING,
        "dry_run": {"type": "boolean", "description": "true: nothing was erased."},
        "performed_at": _TIME,
        "count": _COUNT,
        "forms": {
            "type": "array",
            "items": _object({"form_id": _STRING, "count": _COUNT}),
            "description": "Each form with submissions erased, and how many.",
        },
        "submissions": {
            "type": "array",
            "items": _object({"form_id": _STRING, "submission_id": _STRING, "created_at": _TIME}),
            "description": "What was (or would be) erased, oldest first: ids and times only.",
        },
    }
)

OBJECT_SCHEMAS: dict[str, Any] = {
    "Form": FORM,
    "File": FILE,
    "Submission": SUBMISSION,
    "SubmissionDetail": SUBMISSION_DETAIL,
    "DeliveryAttempt": ATTEMPT,
    "Delivery": DELIVERY,
    "WebhookEndpoint": ENDPOINT,
    "CreatedWebhookEndpoint": CREATED_ENDPOINT,
    "NotificationRecipient": RECIPIENT,
    "Usage": USAGE,
    "RetriedDeadDeliveries": RETRIED_DEAD,
    "ErasureReceipt": ERASURE_RECEIPT,
    "MailPreview": MAIL_PREVIEW,
}


# -- request bodies: only the fields documented, each of its type -------------------------


def _body(properties: dict[str, Any], *, required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "required": list(required),
        "properties": properties,
        "additionalProperties": False,
    }


_FORM_FIELDS: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1, "maxLength": MAX_FORM_NAME},
    "mode": {"enum": _values(FormMode)},
    "allowed_origins": {
        "type": "array",
        "items": _STRING,
        "description": "Origins (`https://www.example.com`) the public endpoint accepts; "
        "an empty list accepts any.",
    },
    "challenge": _nullable(
        {
            "type": "object",
            "required": ["provider", "secret"],
            "properties": {
                "provider": {"enum": _values(ChallengeProvider)},
                "secret": {"type": "string", "minLength": 1},
            },
            "additionalProperties": False,
        }
    ),
    "redirect_url": _nullable({"type": "string"}),
    "rules": {"type": "array", "items": _RULE},
    "spam_threshold": {
        "type": "number",
        "exclusiveMinimum": 0,
        "description": "A submission scoring this much or more is spam (5.0 by default).",
    },
    "uploads": _nullable({**_UPLOADS, "additionalProperties": False}),
    "retention_days": {
        "description": "Erase its submissions and their files this many days after they came "
        "in; null keeps them until erased.",
        **_nullable(
            {"type": "integer", "minimum": MIN_RETENTION_DAYS, "maximum": MAX_RETENTION_DAYS}
        ),
    },
    **FORM_MESSAGE_FIELDS,
}

FORM_CREATE = _body(_FORM_FIELDS, required=("name",))
FORM_CHANGE = _body(
    {
        **_FORM_FIELDS,
        "enabled": {
            "type": "boolean",
            "description": "`false` pauses the form, `true` resumes it.",
        },
    }
)
SUBMISSION_CHANGE = _body(
    {
        "status": {
            "enum": ["accepted", "spam"],
            "description": "`accepted` releases a `spam` or `unverified` submission; `spam` "
            "marks one as spam.",
        }
    },
    required=("status",),
)
WEBHOOK_CREATE = _body(
    {
        "url": {
            "type": "string",
            "maxLength": MAX_URL,
            "description": "An https URL on a public address; the relay posts events to it.",
        },
        "include_flagged": {
            "type": "boolean",
            "description": "Also send `submission.flagged` (spam and unverified) events.",
        },
    },
    required=("url",),
)
RECIPIENT_CREATE = _body({"email": {"type": "string", "maxLength": MAX_EMAIL}}, required=("email",))
FORM_DUPLICATE_REQUEST = _body(
    {
        "name": {
            **_FORM_FIELDS["name"],
            "description": "The new form's name; by default the original's, with `(copy)`.",
        }
    }
)

ERASURE_REQUEST = _body(
    {
        "email": {
            "type": "string",
            "maxLength": MAX_EMAIL_LENGTH,
            "description": "The person's address, compared whatever its case.",
        },
        "dry_run": {"type": "boolean", "description": "List what would go; erase nothing."},
    },
    required=("email",),
)
