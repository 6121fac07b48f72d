"""The reserved control fields, split out of the data before validation."""

from __future__ import annotations

import json

from attrs import frozen

from intake.domain.model import FieldData, FieldValue

HONEYPOT = "_gotcha"
NEXT = "_next"
SUBJECT = "_subject"
REPLY_TO = "_replyto"
CHALLENGE_TOKEN_FIELDS = ("cf-turnstile-response", "h-captcha-response", "g-recaptcha-response")
_CHALLENGE_SET = frozenset(CHALLENGE_TOKEN_FIELDS)


@frozen
class Controls:
    honeypot: bool = False
    next_url: str | None = None
    subject: str | None = None
    reply_to: str | None = None
    challenge_token: str | None = None

    @property
    def honeypot_filled(self) -> bool:
        return self.honeypot


def is_control(name: str) -> bool:
    return name.startswith("_") or name in _CHALLENGE_SET


def _text(value: FieldValue) -> str:
    """A control field is one text value; a repeated one keeps its first."""
    if isinstance(value, list):
        return _text(value[0]) if value else ""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value)


def _present(text: str | None) -> str | None:
    """A blank control (`_replyto=`, or only spaces) is no control at all."""
    stripped = (text or "").strip()
    return stripped or None


def split_controls(fields: FieldData) -> tuple[FieldData, Controls]:
    """Returns the data without any control field, and the known controls' values."""
    data: FieldData = {}
    found: dict[str, str] = {}
    token: str | None = None
    for name, value in fields.items():
        if name in _CHALLENGE_SET:
            text = _text(value)
            if text and token is None:
                token = text
        elif name.startswith("_"):
            found[name] = _text(value)  # unknown `_` names are dropped here
        else:
            data[name] = value
    return data, Controls(
        # Present and non-empty means a bot: even spaces, or a JSON `false`, fill it.
        honeypot=bool(found.get(HONEYPOT)),
        next_url=_present(found.get(NEXT)),
        subject=_present(found.get(SUBJECT)),
        reply_to=_present(found.get(REPLY_TO)),
        challenge_token=token,
    )
