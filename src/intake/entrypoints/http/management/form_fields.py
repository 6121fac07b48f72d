"""A form's settings as the management API takes them (POST and PATCH /v1/forms): each
field read with its type, then checked by the very rules `intake form create` and
`update` apply (service/admin/inputs.py), so that one answer names every bad field."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from attrs import evolve, frozen

from intake.domain.model import Challenge, FieldRule, FormMode
from intake.entrypoints.http.management.common import BodyFields
from intake.entrypoints.http.management.form_message_fields import (
    MESSAGE_FIELDS,
    message_changes,
)
from intake.service.admin import (
    UNSET,
    AdminError,
    FormChanges,
    Unset,
    UploadChanges,
    challenge_of,
)
from intake.service.admin.inputs import (
    ALLOWED_ORIGINS,
    CHALLENGE,
    NAME,
    REDIRECT_URL,
    RETENTION_DAYS,
    RULES,
    SPAM_THRESHOLD,
    UPLOADS,
    check_name,
    check_origins,
    check_redirect,
    check_retention_days,
    check_rules,
    check_threshold,
    rule_of,
)
from intake.service.admin.message_changes import MessageChanges

MODE = "mode"
ENABLED = "enabled"
CREATE_FIELDS = frozenset(
    {NAME, MODE, ALLOWED_ORIGINS, CHALLENGE, REDIRECT_URL, RULES, SPAM_THRESHOLD, UPLOADS}
    | {RETENTION_DAYS}
    | MESSAGE_FIELDS
)
UPDATE_FIELDS = CREATE_FIELDS | {ENABLED}
_CHALLENGE_FIELDS = frozenset({"provider", "secret"})
_RULE_FIELDS = frozenset({"field", "kind", "limit"})
_UPLOAD_SIZES = ("max_file_size", "max_total_size", "max_files")
_UPLOAD_FIELDS = frozenset({"allowed_types", *_UPLOAD_SIZES})
_MODES = ", ".join(mode.value for mode in FormMode)

In = TypeVar("In")
Out = TypeVar("Out")


@frozen
class NewForm:
    """What `Forms.create` takes, read from a POST body."""

    name: str
    mode: FormMode
    allowed_origins: tuple[str, ...]
    rules: tuple[FieldRule, ...]
    challenge: Challenge | None
    redirect_url: str | None
    spam_threshold: float | None
    uploads: UploadChanges | None
    retention_days: int | None
    messages: MessageChanges | None


def _checked(fields: BodyFields, name: str, check: Callable[[In], Out], value: In) -> Out | None:
    """`check(value)`, or None with its refusal recorded against the field it names."""
    try:
        return check(value)
    except AdminError as refused:
        fields.fail(refused.field or name, str(refused))
        return None


def _unknown(
    fields: BodyFields, name: str, value: Mapping[str, Any], known: frozenset[str]
) -> bool:
    unknown = sorted(key for key in value if key not in known)
    if unknown:
        named = ", ".join(repr(key) for key in unknown)
        noun = "field" if len(unknown) == 1 else "fields"
        fields.fail(name, f"Unknown {noun} {named} (known: {', '.join(sorted(known))}).")
    return bool(unknown)


def _mode(fields: BodyFields) -> FormMode | None:
    text = fields.text(MODE)
    if text is None:
        return None
    try:
        return FormMode(text)
    except ValueError:
        fields.fail(MODE, f"One of {_MODES}.")
        return None


def _challenge(fields: BodyFields) -> Challenge | Unset | None:
    """UNSET when not given; None for null (no challenge)."""
    if not fields.has(CHALLENGE):
        return UNSET
    value = fields.object(CHALLENGE, nullable=True)
    if value is None or _unknown(fields, CHALLENGE, value, _CHALLENGE_FIELDS):
        return None
    provider, secret = value.get("provider"), value.get("secret")
    if not isinstance(provider, str) or not isinstance(secret, str) or not secret:
        fields.fail(CHALLENGE, "Needs a provider and its secret, both strings.")
        return None
    return _checked(fields, CHALLENGE, lambda p: challenge_of(p, secret), provider)


def _rule(fields: BodyFields, value: Mapping[str, Any]) -> FieldRule | None:
    if _unknown(fields, RULES, value, _RULE_FIELDS):
        return None
    field, kind, limit = value.get("field"), value.get("kind"), value.get("limit")
    wrong_limit = limit is not None and (isinstance(limit, bool) or not isinstance(limit, int))
    if not isinstance(field, str) or not isinstance(kind, str) or wrong_limit:
        fields.fail(RULES, "Each rule is {field, kind[, limit]}: two strings and a number.")
        return None
    return _checked(fields, RULES, lambda k: rule_of(field, k, limit), kind)


def _rules(fields: BodyFields) -> tuple[FieldRule, ...] | None:
    values = fields.object_list(RULES)
    if values is None:
        return None
    rules = [_rule(fields, value) for value in values]
    given = [rule for rule in rules if rule is not None]
    if len(given) != len(rules):
        return None
    return _checked(fields, RULES, check_rules, given)


def _uploads(fields: BodyFields) -> UploadChanges | None:
    """None when not given; turning uploads off for null; on, with the values given (the
    others as the form has them, or their defaults), for an object."""
    if not fields.has(UPLOADS):
        return None
    value = fields.object(UPLOADS, nullable=True)
    if value is None:
        return UploadChanges(enabled=False)
    if _unknown(fields, UPLOADS, value, _UPLOAD_FIELDS):
        return None
    types = value.get("allowed_types")
    if types is not None and (
        not isinstance(types, list) or not all(isinstance(t, str) for t in types)
    ):
        fields.fail(UPLOADS, "allowed_types is a list of strings.")
        return None
    sizes: dict[str, int | None] = {}
    for name in _UPLOAD_SIZES:
        size = value.get(name)
        if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
            fields.fail(UPLOADS, f"{name} is a whole number.")
            return None
        sizes[name] = size
    return UploadChanges(
        enabled=True,
        allowed_types=tuple(types) if types is not None else None,
        max_file_size=sizes["max_file_size"],
        max_total_size=sizes["max_total_size"],
        max_files=sizes["max_files"],
    )


def _settings(fields: BodyFields) -> FormChanges:
    """The settings POST and PATCH share, each checked, as the changes they ask for: a
    field not given is None, or UNSET for `challenge`, `redirect_url` and
    `retention_days` (where null is a value). A bad field is recorded, for
    `fields.done()` to refuse."""
    name = fields.text(NAME)
    origins = fields.text_list(ALLOWED_ORIGINS)
    redirect: str | Unset | None = UNSET
    if fields.has(REDIRECT_URL):
        given = fields.text(REDIRECT_URL, nullable=True)
        redirect = _checked(fields, REDIRECT_URL, check_redirect, given)
    threshold = fields.number(SPAM_THRESHOLD)
    retention: int | Unset | None = UNSET
    if fields.has(RETENTION_DAYS):
        days = fields.integer(RETENTION_DAYS, nullable=True)
        retention = _checked(fields, RETENTION_DAYS, check_retention_days, days)
    return FormChanges(
        name=None if name is None else _checked(fields, NAME, check_name, name),
        mode=_mode(fields),
        allowed_origins=None
        if origins is None
        else _checked(fields, ALLOWED_ORIGINS, check_origins, origins),
        rules=_rules(fields),
        challenge=_challenge(fields),
        redirect_url=redirect,
        spam_threshold=None
        if threshold is None
        else _checked(fields, SPAM_THRESHOLD, check_threshold, threshold),
        uploads=_uploads(fields),
        retention_days=retention,
        messages=message_changes(fields),
    )


def new_form(fields: BodyFields) -> NewForm:
    """A POST body's form; a 422 naming every bad field. `name` is required."""
    fields.text(NAME, required=True)
    asked = _settings(fields)
    if asked.uploads is not None:
        _checked(fields, UPLOADS, asked.uploads.apply, None)
    fields.done()
    assert asked.name is not None  # required, and checked
    return NewForm(
        name=asked.name,
        mode=asked.mode or FormMode.PUBLIC,
        allowed_origins=asked.allowed_origins or (),
        rules=asked.rules or (),
        challenge=None if isinstance(asked.challenge, Unset) else asked.challenge,
        redirect_url=None if isinstance(asked.redirect_url, Unset) else asked.redirect_url,
        spam_threshold=asked.spam_threshold,
        uploads=asked.uploads,
        retention_days=None if isinstance(asked.retention_days, Unset) else asked.retention_days,
        messages=asked.messages,
    )


def form_changes(fields: BodyFields) -> FormChanges:
    """A PATCH body's changes; a 422 naming every bad field. Only what is given changes;
    a list replaces the form's whole list."""
    enabled = fields.boolean(ENABLED)
    asked = _settings(fields)
    fields.done()
    return evolve(asked, enabled=enabled)
