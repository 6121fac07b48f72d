"""What an operator gives the management use cases, parsed and checked: rules, challenges,
names, origins and limits, and a listing's page (its size and cursor)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TypeVar

from intake.domain.controls import is_control
from intake.domain.listing import MAX_PAGE, MIN_PAGE
from intake.domain.model import Challenge, ChallengeProvider, FieldRule, RuleKind
from intake.domain.origins import normalize_origin, normalize_pattern, wildcard_suffix
from intake.domain.privacy import MAX_RETENTION_DAYS, MIN_RETENTION_DAYS
from intake.service.admin.errors import AdminError

T = TypeVar("T")

DEFAULT_FORM_NAME = "Untitled form"
# The names of a form's settings, as the API's fields and AdminError.field spell them.
NAME = "name"
ALLOWED_ORIGINS = "allowed_origins"
RULES = "rules"
CHALLENGE = "challenge"
REDIRECT_URL = "redirect_url"
SPAM_THRESHOLD = "spam_threshold"
UPLOADS = "uploads"
RETENTION_DAYS = "retention_days"
MAX_FORM_NAME = 200  # characters: a name is a label in lists and mail subjects
# A listing's page parameters, as the API's query and AdminError.field spell them.
CURSOR = "cursor"
LIMIT = "limit"


def parse_rule(text: str) -> FieldRule:
    """`field:kind` or `field:max_length=N`, as the command line spells a rule. The
    last colon ends the field's name, which may hold colons itself (no kind does)."""
    name, sep, spec = text.rpartition(":")
    # The shape first: `email` alone is a missing kind, not an unknown one.
    if not sep or not name.strip():
        raise AdminError(f"a rule is FIELD:KIND, not {text!r}", field=RULES)
    kind_text, _, limit_text = spec.partition("=")
    kind = _rule_kind(kind_text, f" in {text!r}")
    limit: int | None = None
    if kind is RuleKind.MAX_LENGTH:
        try:
            limit = int(limit_text)
        except ValueError:
            raise AdminError(
                f"max_length needs a number: FIELD:max_length=N, not {text!r}", field=RULES
            ) from None
    elif limit_text:
        raise AdminError(f"only max_length takes a value, not {text!r}", field=RULES)
    return rule_of(name, kind.value, limit)


def rule_of(field: str, kind: str, limit: int | None = None) -> FieldRule:
    """A rule from its parts, as the API and the views spell it: `limit` for max_length
    only, which needs one."""
    if not field.strip():
        raise AdminError("a rule needs the name of the field it checks", field=RULES)
    rule_kind = _rule_kind(kind, "")
    if rule_kind is RuleKind.MAX_LENGTH:
        if limit is None or limit < 1:
            raise AdminError("max_length must be at least 1", field=RULES)
    elif limit is not None:
        raise AdminError(f"only max_length takes a limit, not {kind}", field=RULES)
    return FieldRule(field=field.strip(), kind=rule_kind, limit=limit)


def _rule_kind(text: str, where: str) -> RuleKind:
    try:
        return RuleKind(text.strip())
    except ValueError:
        kinds = ", ".join(k.value for k in RuleKind)
        raise AdminError(f"unknown rule {text!r}{where} (one of: {kinds})", field=RULES) from None


def challenge_of(provider: str | None, secret: str | None) -> Challenge | None:
    if provider is None:
        if secret is not None:
            raise AdminError("--challenge-secret goes with --challenge", field=CHALLENGE)
        return None
    try:
        kind = ChallengeProvider(provider)
    except ValueError:
        raise AdminError(f"unknown challenge provider {provider!r}", field=CHALLENGE) from None
    if not secret:
        raise AdminError("--challenge needs --challenge-secret", field=CHALLENGE)
    return Challenge(kind, secret)


def check_origins(values: Iterable[str]) -> tuple[str, ...]:
    """The entries normalised, once each; every bad one named by its index in one
    refusal: what is no origin, and a wildcard over a public suffix (`https://*.com`
    would let every .com site post)."""
    normalized: list[str] = []
    wrong: list[str] = []
    for index, value in enumerate(values):
        origin = normalize_pattern(value)
        suffix = None if origin is None else wildcard_suffix(origin)
        if origin is None:
            wrong.append(
                f"{ALLOWED_ORIGINS}[{index}] {value!r} is not an origin (scheme://host[:port])"
            )
        elif suffix is not None:
            wrong.append(
                f"{ALLOWED_ORIGINS}[{index}] {value!r} covers every site under the public suffix"
                f" {suffix}: name a domain of your own, such as *.example.{suffix}"
            )
        elif origin not in normalized:
            normalized.append(origin)
    if wrong:
        raise AdminError("; ".join(wrong), field=ALLOWED_ORIGINS)
    return tuple(normalized)


def check_name(value: str) -> str:
    name = value.strip()
    if not name:
        raise AdminError("a form's name cannot be empty", field=NAME)
    if len(name) > MAX_FORM_NAME:
        raise AdminError(
            f"a form's name is at most {MAX_FORM_NAME} characters, not {len(name)}", field=NAME
        )
    return name


def check_rules(rules: Iterable[FieldRule]) -> tuple[FieldRule, ...]:
    """Rules are for data: a control field is taken out of the data before validation,
    so a rule on it would never apply."""
    checked = tuple(rules)
    for rule in checked:
        if is_control(rule.field):
            raise AdminError(
                f"no rule can be set on {rule.field!r}: names starting with _ (and the "
                "challenge tokens) are control fields, not data",
                field=RULES,
            )
    return checked


def check_redirect(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if normalize_origin(value) is None:
        raise AdminError(
            f"a redirect URL must be an absolute http(s) URL: {value!r}", field=REDIRECT_URL
        )
    return value


def check_threshold(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise AdminError(
            f"a spam threshold must be a finite number more than zero, not {value}",
            field=SPAM_THRESHOLD,
        )
    return float(value)


def check_retention_days(days: int | None) -> int | None:
    """Days a form keeps its submissions: MIN_RETENTION_DAYS to MAX_RETENTION_DAYS, or
    None (until erased)."""
    if days is not None and not MIN_RETENTION_DAYS <= days <= MAX_RETENTION_DAYS:
        raise AdminError(
            f"a retention must be {MIN_RETENTION_DAYS} to {MAX_RETENTION_DAYS} days, not {days}",
            field=RETENTION_DAYS,
        )
    return days


def check_storage_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise AdminError("a storage limit cannot be negative")


def check_page_limit(limit: int) -> None:
    """A page holds MIN_PAGE to MAX_PAGE items, whichever listing it is of."""
    if not MIN_PAGE <= limit <= MAX_PAGE:
        raise AdminError(f"must be {MIN_PAGE} to {MAX_PAGE}", field=LIMIT)


def page_after(
    cursor: str | None, decode: Callable[[str], T], refused: type[ValueError]
) -> T | None:
    """Where a page starts: past the position `cursor` names, by the listing's own
    `decode` (None: the first page). A cursor it refuses is refused naming `cursor`."""
    if cursor is None:
        return None
    try:
        return decode(cursor)
    except refused as error:
        raise AdminError(str(error), field=CURSOR) from None
