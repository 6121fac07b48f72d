"""What an operator gives the management use cases, parsed and checked: rules, challenges,
names, origins, limits, and the changes asked of a form's upload policy."""

from __future__ import annotations

import math
from collections.abc import Iterable

from attrs import frozen

from intake.domain.controls import is_control
from intake.domain.model import Challenge, ChallengeProvider, FieldRule, RuleKind
from intake.domain.origins import normalize_origin, normalize_pattern
from intake.domain.uploads import (
    MAX_FILE_SIZE_CEILING,
    MAX_FILES_CEILING,
    UploadPolicy,
    normalize_type_pattern,
)
from intake.service.admin.errors import AdminError

# Stands for a value not given, where None is a value (no limit, no challenge...).
UNSET: object = object()

DEFAULT_FORM_NAME = "Untitled form"
MAX_FORM_NAME = 200  # characters: a name is a label in lists and mail subjects


def parse_rule(text: str) -> FieldRule:
    """`field:kind` or `field:max_length=N`, as the command line spells a rule."""
    name, sep, spec = text.partition(":")
    # The shape first: `email` alone is a missing kind, not an unknown one.
    if not sep or not name.strip():
        raise AdminError(f"a rule is FIELD:KIND, not {text!r}")
    kind_text, _, limit_text = spec.partition("=")
    try:
        kind = RuleKind(kind_text.strip())
    except ValueError:
        kinds = ", ".join(k.value for k in RuleKind)
        raise AdminError(f"unknown rule {kind_text!r} in {text!r} (one of: {kinds})") from None
    limit: int | None = None
    if kind is RuleKind.MAX_LENGTH:
        try:
            limit = int(limit_text)
        except ValueError:
            raise AdminError(
                f"max_length needs a number: FIELD:max_length=N, not {text!r}"
            ) from None
        if limit < 1:
            raise AdminError("max_length must be at least 1")
    elif limit_text:
        raise AdminError(f"only max_length takes a value, not {text!r}")
    return FieldRule(field=name.strip(), kind=kind, limit=limit)


def challenge_of(provider: str | None, secret: str | None) -> Challenge | None:
    if provider is None:
        if secret is not None:
            raise AdminError("--challenge-secret goes with --challenge")
        return None
    try:
        kind = ChallengeProvider(provider)
    except ValueError:
        raise AdminError(f"unknown challenge provider {provider!r}") from None
    if not secret:
        raise AdminError("--challenge needs --challenge-secret")
    return Challenge(kind, secret)


def check_origins(values: Iterable[str]) -> tuple[str, ...]:
    normalized = []
    for value in values:
        origin = normalize_pattern(value)
        if origin is None:
            raise AdminError(f"not an origin (scheme://host[:port]): {value!r}")
        if origin not in normalized:
            normalized.append(origin)
    return tuple(normalized)


def check_name(value: str) -> str:
    name = value.strip()
    if not name:
        raise AdminError("a form's name cannot be empty")
    if len(name) > MAX_FORM_NAME:
        raise AdminError(f"a form's name is at most {MAX_FORM_NAME} characters, not {len(name)}")
    return name


def check_rules(rules: Iterable[FieldRule]) -> tuple[FieldRule, ...]:
    """Rules are for data: a control field is taken out of the data before validation,
    so a rule on it would never apply."""
    checked = tuple(rules)
    for rule in checked:
        if is_control(rule.field):
            raise AdminError(
                f"no rule can be set on {rule.field!r}: names starting with _ (and the "
                "challenge tokens) are control fields, not data"
            )
    return checked


def check_redirect(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if normalize_origin(value) is None:
        raise AdminError(f"a redirect URL must be an absolute http(s) URL: {value!r}")
    return value


def check_threshold(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise AdminError(f"a spam threshold must be a finite number more than zero, not {value}")
    return float(value)


def check_storage_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise AdminError("a storage limit cannot be negative")


@frozen
class UploadChanges:
    """Changes to a form's upload policy, as an operator asks for them: `enabled=False`
    turns uploads off; `enabled=True`, or any value given, turns them on. A value not
    given stays as the form has it, or takes its default when uploads were off."""

    enabled: bool | None = None
    allowed_types: tuple[str, ...] | None = None
    max_file_size: int | None = None
    max_total_size: int | None = None
    max_files: int | None = None

    def _given(self) -> list[str]:
        values = {
            "allowed_types": self.allowed_types,
            "max_file_size": self.max_file_size,
            "max_total_size": self.max_total_size,
            "max_files": self.max_files,
        }
        return [name for name, value in values.items() if value is not None]

    def apply(self, current: UploadPolicy | None) -> UploadPolicy | None:
        given = self._given()
        if self.enabled is False:
            if given:
                names = ", ".join(given)
                raise AdminError(f"uploads cannot be turned off and given {names} at once")
            return None
        if self.enabled is None and not given:
            return current
        base = current or UploadPolicy()
        file_size = _size("max_file_size", self.max_file_size, base.max_file_size)
        total_size = _size("max_total_size", self.max_total_size, base.max_total_size)
        files = base.max_files if self.max_files is None else self.max_files
        if not 1 <= files <= MAX_FILES_CEILING:
            raise AdminError(f"max_files must be 1 to {MAX_FILES_CEILING}, not {files}")
        types = base.allowed_types
        if self.allowed_types is not None:
            types = _type_patterns(self.allowed_types)
        try:
            return UploadPolicy(
                allowed_types=types,
                max_file_size=file_size,
                max_total_size=total_size,
                max_files=files,
            )
        except ValueError as error:  # the policy's own checks, should a new one be added
            raise AdminError(str(error)) from None


def _size(name: str, given: int | None, current: int) -> int:
    if given is None:
        return current
    if not 1 <= given <= MAX_FILE_SIZE_CEILING:
        raise AdminError(f"{name} must be 1 to {MAX_FILE_SIZE_CEILING} bytes, not {given}")
    return given


def _type_patterns(values: Iterable[str]) -> tuple[str, ...]:
    patterns: list[str] = []
    for value in values:
        try:
            pattern = normalize_type_pattern(value)
        except ValueError:
            raise AdminError(
                f"not a MIME type or pattern: {value!r} (type/subtype, type/* or */*)"
            ) from None
        if pattern not in patterns:
            patterns.append(pattern)
    if not patterns:
        raise AdminError("a form that takes files accepts at least one type")
    return tuple(patterns)
