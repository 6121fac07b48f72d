"""Field validation: the form's own rules plus the default rule on email addresses."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from intake.domain.controls import REPLY_TO
from intake.domain.model import FieldData, FieldRule, FieldValue, RuleKind

MESSAGES: Mapping[RuleKind, str] = {
    RuleKind.REQUIRED: "This field is required.",
    RuleKind.EMAIL: "Please enter a valid email address.",
    RuleKind.URL: "Please enter a valid URL.",
    RuleKind.NUMBER: "Please enter a number.",
    RuleKind.MAX_LENGTH: "Please use at most {limit} characters.",
}
FILE_NOT_ACCEPTED = "File uploads are not accepted."
DEFAULT_EMAIL_FIELD = "email"
_DEFAULT_EMAIL_RULE = FieldRule(DEFAULT_EMAIL_FIELD, RuleKind.EMAIL)


# The addresses most people type, which the validator below accepts every one of (a
# property test holds it to that): a dot-atom local part of letters, digits, `_`, `+`
# and `-`; a domain of lower-case labels without `--` (so no Punycode) under a TLD of
# letters. They are accepted here in a microsecond, where the validator's Unicode and
# IDNA checks take some 30 (a tenth of a submission's work). Anything else, however
# plain, is the validator's to judge.
_PLAIN_ADDRESS = re.compile(
    r"[A-Za-z0-9_+-]{1,64}(?:\.[A-Za-z0-9_+-]{1,64})*"
    r"@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}"
)
_PLAIN_LOCAL_MAX = 64
_PLAIN_ADDRESS_MAX = 254


def warm_up() -> None:
    """Loads what checking an address needs, so a serving process's first submission
    does not wait for it."""
    _validator_accepts("warm@example.com")


def is_email(value: str) -> bool:
    # Surrounding spaces are forgiven, as for URLs and numbers: phones' keyboards add a
    # trailing one after autocompleting an address.
    address = value.strip()
    return _is_plain(address) or _validator_accepts(address)


def _is_plain(address: str) -> bool:
    if len(address) > _PLAIN_ADDRESS_MAX or _PLAIN_ADDRESS.fullmatch(address) is None:
        return False
    local, _, domain = address.partition("@")
    if len(local) > _PLAIN_LOCAL_MAX or "--" in domain:
        return False
    # Reserved names (localhost, .test, .invalid, ...) are the validator's to refuse.
    names, suffixes = _special_use()
    return domain not in names and not domain.endswith(suffixes)


@functools.cache
def _special_use() -> tuple[frozenset[str], tuple[str, ...]]:
    """The validator's reserved domain names, and the suffixes they give subdomains, read
    from its list once (imported on first use, as the validator is: see
    _validator_accepts). An import in the path costs a call into the import system on
    every address, and a suffix made for each name six strings."""
    from email_validator import SPECIAL_USE_DOMAIN_NAMES  # noqa: PLC0415

    names = tuple(SPECIAL_USE_DOMAIN_NAMES)
    return frozenset(names), tuple("." + name for name in names)


def _validator_accepts(address: str) -> bool:
    # Imported on first use: its tables take a fifth of a management command's start,
    # and most commands check no address. A serving process warms it (warm_up).
    from email_validator import EmailNotValidError, validate_email  # noqa: PLC0415

    try:
        validate_email(address, check_deliverability=False)
    except EmailNotValidError:
        return False
    return True


def email_key(value: str) -> str | None:
    """An address as erasure compares it (docs/privacy.md): surrounding spaces dropped,
    normalised as the validator normalises it (the domain in lower case and its Unicode
    form), then the whole in lower case; None for what is no address."""
    from email_validator import EmailNotValidError, validate_email  # noqa: PLC0415

    try:
        checked = validate_email(value.strip(), check_deliverability=False)
    except EmailNotValidError:
        return None
    return checked.normalized.lower()


def email_spellings(value: str) -> tuple[str, ...]:
    """The lower-case texts a stored value holding this address contains, for a search
    to find candidates by (the key, its ASCII form, the text as given); empty for what is
    no address."""
    from email_validator import EmailNotValidError, validate_email  # noqa: PLC0415

    try:
        checked = validate_email(value.strip(), check_deliverability=False)
    except EmailNotValidError:
        return ()
    spellings = [checked.normalized.lower(), (checked.ascii_email or "").lower()]
    spellings.append(value.strip().lower())
    return tuple(dict.fromkeys(text for text in spellings if text))


def is_url(value: str) -> bool:
    text = value.strip()
    if any(ch.isspace() for ch in text):
        return False  # `http://exa mple.com` is no address
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a port out of range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def is_number(value: FieldValue) -> bool:
    """A number is one a double holds finitely, as JSON readers everywhere take it: a
    JSON integer is any size in Python, and one past that range is refused like `1e400`."""
    if isinstance(value, bool):
        return False
    text: str | int | float
    if isinstance(value, str):
        if "_" in value:
            return False  # Python's float() takes `1_000`; a person's number does not
        text = value.strip()
    elif isinstance(value, int | float):
        text = value
    else:
        return False
    try:
        # float() answers inf for a string too long for a double, but raises
        # OverflowError for such an int.
        return math.isfinite(float(text))
    except (ValueError, OverflowError):
        return False


def _values(value: FieldValue) -> list[FieldValue]:
    return list(value) if isinstance(value, list) else [value]


def _is_blank(value: FieldValue) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list):
        return all(_is_blank(item) for item in value)
    if isinstance(value, dict):
        return all(_is_blank(item) for item in value.values())
    return False


def _check(rule: FieldRule, value: FieldValue) -> str | None:
    """The message for a rule that one present, non-blank value breaks, else None."""
    for item in _values(value):
        if _is_blank(item):
            continue
        if rule.kind is RuleKind.EMAIL and not (isinstance(item, str) and is_email(item)):
            return MESSAGES[rule.kind]
        if rule.kind is RuleKind.URL and not (isinstance(item, str) and is_url(item)):
            return MESSAGES[rule.kind]
        if rule.kind is RuleKind.NUMBER and not is_number(item):
            return MESSAGES[rule.kind]
        if (
            rule.kind is RuleKind.MAX_LENGTH
            and rule.limit is not None
            and isinstance(item, str)
            and len(item) > rule.limit
        ):
            return MESSAGES[rule.kind].format(limit=rule.limit)
    return None


def validate(
    data: FieldData,
    rules: Iterable[FieldRule],
    *,
    reply_to: str | None,
    file_fields: Iterable[str] = (),
    file_errors: Mapping[str, str] | None = None,
    files_present: Iterable[str] = (),
) -> dict[str, str]:
    """Maps each invalid field to one message; empty when everything holds.
    `file_fields`: fields that carried a file to a form that takes none.
    `file_errors`: fields whose file the form's upload policy refused.
    `files_present`: fields that carry a stored file, which `required` accepts."""
    errors: dict[str, str] = {}
    for name in file_fields:
        errors[name] = FILE_NOT_ACCEPTED
    if file_errors:
        errors.update(file_errors)
    with_files = set(files_present)
    for rule in rules:
        if rule.field in errors:
            continue
        value = data.get(rule.field)
        if rule.kind is RuleKind.REQUIRED:
            if rule.field not in with_files and _is_blank(value):
                errors[rule.field] = MESSAGES[RuleKind.REQUIRED]
            continue
        if value is None:
            continue
        message = _check(rule, value)
        if message is not None:
            errors[rule.field] = message
    # The default rule: an address a reply will be sent to must be one.
    email = data.get(DEFAULT_EMAIL_FIELD)
    if DEFAULT_EMAIL_FIELD not in errors and email is not None:
        message = _check(_DEFAULT_EMAIL_RULE, email)
        if message is not None:
            errors[DEFAULT_EMAIL_FIELD] = message
    if reply_to is not None and not is_email(reply_to):
        errors[REPLY_TO] = MESSAGES[RuleKind.EMAIL]
    return errors


def reply_address(data: FieldData, reply_to: str | None) -> str | None:
    """`_replyto` when given, else a data field `email` when it holds one address."""
    if reply_to:
        return reply_to.strip()
    email = data.get(DEFAULT_EMAIL_FIELD)
    if isinstance(email, str) and email.strip():
        return email.strip()
    return None
