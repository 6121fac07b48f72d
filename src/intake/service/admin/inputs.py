"""What an operator gives the management use cases, parsed and checked: rules, challenges,
names, origins and limits."""

from __future__ import annotations

import math
from collections.abc import Iterable

from intake.domain.controls import is_control
from intake.domain.model import Challenge, ChallengeProvider, FieldRule, RuleKind
from intake.domain.origins import normalize_origin, normalize_pattern
from intake.service.admin.errors import AdminError

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
