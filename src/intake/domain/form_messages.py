"""What a form mails and keeps: its own templates for the notification and the
autoresponse, whether recipients are mailed at all, whether the submitter gets a
confirmation, and whether submissions are erased once forwarded ("forward only").

A template left None uses the default (mail_templates.py). Kept as one JSON object in the
form's `messages` column; a form made before these settings reads as `FormMessages()`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from attrs import asdict, frozen

# The confirmation mails a form may send in any hour, unless it sets its own limit
# (INTAKE_AUTORESPONSE_HOURLY_LIMIT); no form may set one past the maximum.
DEFAULT_AUTORESPONSE_HOURLY_LIMIT = 100
MAX_AUTORESPONSE_HOURLY_LIMIT = 10_000
# The window of both limits: one per address per form, and the form's ceiling.
AUTORESPONSE_WINDOW = timedelta(hours=1)
# A confirmation's record (its address's hash) is kept twice the window, then purged:
# past the window it counts for nothing, and the margin covers a purge whose clock runs
# ahead of the relay's.
AUTORESPONSE_RECORDS_KEPT = 2 * AUTORESPONSE_WINDOW

# The templates a form may set, as the API, the CLI and the store name them.
NOTIFICATION_SUBJECT = "notification_subject"
NOTIFICATION_TEXT = "notification_text"
NOTIFICATION_HTML = "notification_html"
AUTORESPONSE_SUBJECT = "autoresponse_subject"
AUTORESPONSE_TEXT = "autoresponse_text"
AUTORESPONSE_HTML = "autoresponse_html"
TEMPLATE_NAMES = (
    NOTIFICATION_SUBJECT,
    NOTIFICATION_TEXT,
    NOTIFICATION_HTML,
    AUTORESPONSE_SUBJECT,
    AUTORESPONSE_TEXT,
    AUTORESPONSE_HTML,
)


# A confirmation's delivery is an `email` delivery whose destination id has this prefix:
# its autoresponse record's id, not a recipient's.
AUTORESPONSE_PREFIX = "ars"


def is_autoresponse(destination_id: str) -> bool:
    """Whether an `email` delivery is a confirmation rather than a notification."""
    return destination_id.startswith(f"{AUTORESPONSE_PREFIX}_")


@frozen
class Templates:
    """A form's own templates; None: the default."""

    notification_subject: str | None = None
    notification_text: str | None = None
    notification_html: str | None = None
    autoresponse_subject: str | None = None
    autoresponse_text: str | None = None
    autoresponse_html: str | None = None

    def get(self, name: str) -> str | None:
        value = getattr(self, name)
        return value if isinstance(value, str) else None

    def to_json(self) -> dict[str, str | None]:
        return {name: self.get(name) for name in TEMPLATE_NAMES}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Templates:
        return cls(
            **{name: value[name] for name in TEMPLATE_NAMES if isinstance(value.get(name), str)}
        )


@frozen
class FormMessages:
    mail_notifications: bool = True  # False: recipients are not mailed
    forward_only: bool = False  # erase data and files once every destination has them
    autoresponse: bool = False  # a confirmation to the submitter's reply-to address
    autoresponse_hourly_limit: int | None = None  # None: INTAKE_AUTORESPONSE_HOURLY_LIMIT
    templates: Templates = Templates()

    def hourly_limit(self, default: int) -> int:
        return default if self.autoresponse_hourly_limit is None else self.autoresponse_hourly_limit

    def to_json(self) -> dict[str, object]:
        settings = asdict(self, recurse=False)
        settings["templates"] = self.templates.to_json()
        return settings

    @classmethod
    def from_json(cls, value: object) -> FormMessages:
        """Reads what `to_json` wrote; a missing or odd value takes its default."""
        if not isinstance(value, Mapping):
            return cls()
        limit = value.get("autoresponse_hourly_limit")
        templates = value.get("templates")
        return cls(
            mail_notifications=value.get("mail_notifications") is not False,
            forward_only=value.get("forward_only") is True,
            autoresponse=value.get("autoresponse") is True,
            autoresponse_hourly_limit=limit
            if isinstance(limit, int) and not isinstance(limit, bool)
            else None,
            templates=Templates.from_json(templates)
            if isinstance(templates, Mapping)
            else Templates(),
        )
