"""The OpenAPI of what a form mails and keeps: its fields in the Form object and in the
bodies of POST and PATCH /v1/forms, and POST /v1/forms/{form_id}/templates/preview."""

from __future__ import annotations

from typing import Any

from intake.domain.form_messages import MAX_AUTORESPONSE_HOURLY_LIMIT, TEMPLATE_NAMES
from intake.domain.mail_templates import MAX_TEMPLATE_CHARS
from intake.domain.model import Scope
from intake.entrypoints.http.openapi_operations import BY_ID, answer, operation, path_id, ref
from intake.service.admin.message_changes import PREVIEW_KINDS

_SWITCH = {"type": "boolean"}
_TEMPLATE = {
    "anyOf": [{"type": "string", "maxLength": MAX_TEMPLATE_CHARS}, {"type": "null"}],
}
_TEMPLATES_ABOUT = (
    "Jinja2 in a sandbox, with `form_name`, `form_id`, `submission_id`, `received_at`, "
    "`subject` and `fields` (each field's value as text); the notification's also see "
    "`reply_to` and `files`. The HTML part is autoescaped. null: the default, which carries "
    "no product name. A template that does not compile, reaches outside the sandbox "
    "(`__class__`...), passes a limit of size, time or memory (docs/api.md, Template "
    "limits) or fails on a sample submission is refused as `422 validation_failed` "
    "naming `templates.<name>`; at send time the default is used in its place."
)
_LIMIT = {
    "description": "Confirmations the form sends in any hour at most; null: "
    "INTAKE_AUTORESPONSE_HOURLY_LIMIT. One address gets one an hour in any case.",
    "anyOf": [
        {"type": "integer", "minimum": 1, "maximum": MAX_AUTORESPONSE_HOURLY_LIMIT},
        {"type": "null"},
    ],
}


def _templates(required: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "description": _TEMPLATES_ABOUT,
        "properties": dict.fromkeys(TEMPLATE_NAMES, _TEMPLATE),
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(TEMPLATE_NAMES)
    return schema


_SWITCHES = {
    "mail_notifications": {
        **_SWITCH,
        "description": "Whether the notification recipients are mailed (true by default).",
    },
    "forward_only": {
        **_SWITCH,
        "description": "Erase each accepted submission's data and files once every "
        "destination has it delivered or dead, keeping its status and times (false by "
        "default).",
    },
    "autoresponse": {
        **_SWITCH,
        "description": "Mail a confirmation to the submitter's validated reply-to address, "
        "for accepted submissions only (false by default).",
    },
    "autoresponse_hourly_limit": _LIMIT,
}
# In the Form object: every one always there.
FORM_MESSAGES: dict[str, Any] = {**_SWITCHES, "templates": _templates(required=True)}
# In POST and PATCH bodies: a template given replaces the form's, null restores the default.
FORM_MESSAGE_FIELDS: dict[str, Any] = {**_SWITCHES, "templates": _templates(required=False)}

MAIL_PREVIEW = {
    "type": "object",
    "required": ["kind", "subject", "text", "html"],
    "properties": {
        "kind": {"enum": list(PREVIEW_KINDS)},
        "subject": {"type": "string"},
        "text": {"type": "string"},
        "html": {"type": "string"},
    },
}

PREVIEW_PATH = {
    "parameters": [path_id("form_id", "form")],
    "post": operation(
        "previewFormMail",
        Scope.MANAGE,
        "Show the mail a form's templates make",
        {"200": answer("The mail, of a sample submission.", ref("MailPreview"))},
        description="The notification (or, with `kind`, the confirmation) the form's "
        "templates make of a sample submission; `templates` tries others in their place "
        "without saving them. A template that fails is refused, naming it.",
        body={
            "type": "object",
            "required": [],
            "properties": {
                "kind": {"enum": list(PREVIEW_KINDS)},
                "templates": _templates(required=False),
            },
            "additionalProperties": False,
        },
        errors=BY_ID,
    ),
}
