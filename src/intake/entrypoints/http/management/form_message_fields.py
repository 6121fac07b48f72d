"""What a form mails and keeps, as POST and PATCH /v1/forms take it: the switches, the
autoresponse's hourly limit and the templates, each read with its type and checked by
the rules `intake form` applies (service/admin/message_changes.py), so that one 422
names every bad field, a refused template as `templates.<name>`."""

from __future__ import annotations

from intake.domain.form_messages import TEMPLATE_NAMES, Templates
from intake.entrypoints.http.management.common import BodyFields
from intake.service.admin import UNSET, AdminError, Unset
from intake.service.admin.message_changes import (
    AUTORESPONSE,
    AUTORESPONSE_HOURLY_LIMIT,
    FORWARD_ONLY,
    MAIL_NOTIFICATIONS,
    MESSAGE_FIELDS,
    TEMPLATES,
    MessageChanges,
    changed_templates,
    check_hourly_limit,
)

__all__ = ["MESSAGE_FIELDS", "message_changes", "templates_given"]


def _limit(fields: BodyFields) -> int | Unset | None:
    if not fields.has(AUTORESPONSE_HOURLY_LIMIT):
        return UNSET
    limit = fields.integer(AUTORESPONSE_HOURLY_LIMIT, nullable=True)
    try:
        return check_hourly_limit(limit)
    except AdminError as refused:
        fields.fail(AUTORESPONSE_HOURLY_LIMIT, str(refused))
        return UNSET


def templates_given(fields: BodyFields, name: str = TEMPLATES) -> dict[str, str | None]:
    """The templates object: each known name to a text, or null for the default; a
    template too long refused here by name, one that does not render by the service."""
    value = fields.object(name)
    if value is None:
        return {}
    given: dict[str, str | None] = {}
    for key, source in value.items():
        if key not in TEMPLATE_NAMES:
            fields.fail(name, f"Unknown template {key!r} (known: {', '.join(TEMPLATE_NAMES)}).")
            continue
        if source is not None and not isinstance(source, str):
            fields.fail(f"{name}.{key}", "Must be a string or null.")
            continue
        try:
            changed_templates(Templates(), {key: source})
        except AdminError as refused:
            fields.fail(refused.field or f"{name}.{key}", str(refused))
            continue
        given[key] = source
    return given


def message_changes(fields: BodyFields) -> MessageChanges | None:
    """The changes asked for; None when none was."""
    changes = MessageChanges(
        mail_notifications=fields.boolean(MAIL_NOTIFICATIONS),
        forward_only=fields.boolean(FORWARD_ONLY),
        autoresponse=fields.boolean(AUTORESPONSE),
        autoresponse_hourly_limit=_limit(fields),
        templates=templates_given(fields),
    )
    return None if changes == MessageChanges() else changes
