"""A form's settings as the dashboard's settings page posts them, read into the very
`FormChanges` that PATCH /v1/forms/{form_id} makes: each control becomes the JSON field
the management API takes, and the API's reader (management/form_fields.py) checks it,
so one rule answers both. Rules are typed one a line as `intake form --rule` spells
them (`parse_rule`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.datastructures import FormData

from intake.domain.errors import IntakeError
from intake.domain.model import FieldRule, Form
from intake.domain.uploads import UploadPolicy
from intake.entrypoints.http.dashboard.forms import text
from intake.entrypoints.http.dashboard.wording import size_field, typed_size
from intake.entrypoints.http.management.form_fields import form_changes
from intake.entrypoints.http.management.inputs import BodyFields, storable
from intake.service.admin import AdminError, FormChanges
from intake.service.admin.inputs import (
    ALLOWED_ORIGINS,
    CHALLENGE,
    NAME,
    REDIRECT_URL,
    RETENTION_DAYS,
    RULES,
    SPAM_THRESHOLD,
    UPLOADS,
    parse_rule,
)

# The page's controls, by name; each is posted as text ("uploads" is a checkbox).
CONTROLS = (
    NAME,
    ALLOWED_ORIGINS,
    "challenge_provider",
    "challenge_secret",
    REDIRECT_URL,
    SPAM_THRESHOLD,
    RULES,
    UPLOADS,
    "allowed_types",
    "max_file_size",
    "max_total_size",
    "max_files",
    RETENTION_DAYS,
)
# A refusal that names no setting is shown at the top of the page, under this key.
WHOLE_FORM = "form"
_UNSTORABLE = "Text cannot hold NUL characters or lone surrogates."


class RefusedSettingsError(Exception):
    """What is wrong, by setting (the API's field names): nothing is saved."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        super().__init__(", ".join(errors))
        self.errors = {name: sentence(message) for name, message in errors.items()}


def sentence(message: str) -> str:
    """A refusal as the page shows it: a capital first letter (not on a name such as
    max_files) and a full stop."""
    message = message.strip()
    if message.split(" ", 1)[0].isalpha():
        message = message[0].upper() + message[1:]
    return message if message.endswith((".", "?", "!")) else message + "."


def rule_text(rule: FieldRule) -> str:
    """A rule as `parse_rule` reads it back: `field:kind` or `field:max_length=N`."""
    limit = f"={rule.limit}" if rule.limit is not None else ""
    return f"{rule.field}:{rule.kind.value}{limit}"


def shown(form: Form) -> dict[str, str]:
    """The controls' values for the form as it is; never its challenge secret. With
    uploads off, the upload limits show the defaults that turning them on would take."""
    policy = form.uploads or UploadPolicy()
    return {
        NAME: form.name,
        ALLOWED_ORIGINS: "\n".join(form.allowed_origins),
        "challenge_provider": form.challenge.provider.value if form.challenge else "",
        "challenge_secret": "",
        REDIRECT_URL: form.redirect_url or "",
        SPAM_THRESHOLD: f"{form.spam_threshold:g}",
        RULES: "\n".join(rule_text(rule) for rule in form.rules),
        UPLOADS: "on" if form.uploads is not None else "",
        "allowed_types": ", ".join(policy.allowed_types),
        "max_file_size": size_field(policy.max_file_size),
        "max_total_size": size_field(policy.max_total_size),
        "max_files": str(policy.max_files),
        RETENTION_DAYS: "" if form.retention_days is None else str(form.retention_days),
    }


def posted(form: FormData) -> dict[str, str]:
    """The controls' values as posted, to show again if refused (the secret is not)."""
    return {name: text(form, name) for name in CONTROLS}


def changes_of(entered: Mapping[str, str], current: Form) -> FormChanges:
    """The changes the posted values ask for, read by the API's own reader; every bad
    value at once as RefusedSettingsError."""
    errors: dict[str, str] = {}
    body = _body(entered, current, errors)
    for name, value in body.items():
        if not storable(value):
            errors.setdefault(name, _UNSTORABLE)
    try:
        changes = form_changes(
            BodyFields({name: body[name] for name in body if name not in errors})
        )
    except IntakeError as refused:
        errors = {**dict(refused.rejection.fields or {}), **errors}
    if errors:
        raise RefusedSettingsError(errors)
    return changes


def _body(entered: Mapping[str, str], current: Form, errors: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {
        NAME: entered[NAME],
        ALLOWED_ORIGINS: _lines(entered[ALLOWED_ORIGINS]),
        REDIRECT_URL: entered[REDIRECT_URL].strip() or None,
        SPAM_THRESHOLD: _number(entered[SPAM_THRESHOLD]),
        UPLOADS: _uploads(entered),
        # Empty: kept until erased (null).
        RETENTION_DAYS: _whole(entered[RETENTION_DAYS])
        if entered[RETENTION_DAYS].strip()
        else None,
    }
    try:
        body[RULES] = [_rule_json(parse_rule(line)) for line in _lines(entered[RULES])]
    except AdminError as refused:
        errors[RULES] = str(refused)
    provider, secret = entered["challenge_provider"], entered["challenge_secret"]
    kept = current.challenge is not None and current.challenge.provider.value == provider
    if not provider:
        body[CHALLENGE] = None
    elif secret or not kept:  # an empty secret keeps the current one, same provider only
        body[CHALLENGE] = {"provider": provider, "secret": secret}
    return body


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _number(value: str) -> float | str:
    """A number, or the text as typed for the API's reader to refuse."""
    try:
        return float(value)
    except ValueError:
        return value


def _whole(value: str) -> int | str:
    try:
        return int(value)
    except ValueError:
        return value


def _rule_json(rule: FieldRule) -> dict[str, Any]:
    limit = {"limit": rule.limit} if rule.limit is not None else {}
    return {"field": rule.field, "kind": rule.kind.value, **limit}


def _uploads(entered: Mapping[str, str]) -> dict[str, Any] | None:
    """None turns uploads off; on, every limit is given as the page shows it."""
    if not entered[UPLOADS]:
        return None
    types = [item for item in entered["allowed_types"].replace(",", " ").split() if item]
    return {
        "allowed_types": types,
        "max_file_size": typed_size(entered["max_file_size"]),
        "max_total_size": typed_size(entered["max_total_size"]),
        "max_files": _whole(entered["max_files"]),
    }
