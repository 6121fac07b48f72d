"""The notification mail for one submission: text and HTML, safe from what visitors typed.

Every header value that can hold visitor input (subject, reply-to, field names only
appear in the body) is stripped of line breaks, so no field can add a header; every
name and value in the HTML part is escaped, so none can add markup. Uploaded files are
listed after the fields, each with its name, its size and its download link, held to the
same rules: a file name is the visitor's text too. The body is notification_body.py's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from urllib.parse import quote

from attrs import frozen

from intake.domain.chat_text import plain
from intake.domain.notification_body import ListedFile, html_body, plain_body
from intake.domain.validation import DEFAULT_EMAIL_FIELD, is_email

SUBMISSION_ID_HEADER = "X-Intake-Submission-Id"

# Mail clients show about this much of a subject; a visitor's longer one is cut.
MAX_SUBJECT_CHARS = 200

# Control characters, DEL and the Unicode line and paragraph separators: anything a
# mail parser or client might take as the end of a header line.
_LINE_BREAKING = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")
# The bidirectional embeddings, overrides and isolates, and the C1 controls: invisible,
# they change how the text around them reads (as chat_text.py drops them from chat).
_REORDERING = re.compile(r"[\x80-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069]")


def render_notification(
    event_payload: Mapping[str, object],
    *,
    form_name: str,
    mail_from: str,
    to: str,
    base_url: str | None,
    own_words: Callable[[str, str, str], tuple[str, str, str]] | None = None,
) -> EmailMessage:
    """The mail telling `to` about the submission in an outbox event's payload.
    `own_words` takes the default subject, text and HTML and gives those sent (the
    form's templates, owner_mail.py)."""
    submission_id = payload_text(event_payload.get("submission_id"))
    form_id = payload_text(event_payload.get("form_id"))
    title = form_name.strip() or form_id or "your form"
    subject = one_line(payload_text(event_payload.get("subject")))
    if not subject:
        subject = one_line(f"New submission to {title}")
    data = event_payload.get("data")
    fields = data if isinstance(data, Mapping) else {}

    rows = [(one_line(str(name)), _display(value)) for name, value in fields.items()]
    files = _files(event_payload.get("files"))
    created = payload_moment(event_payload.get("created_at"))
    footer = _footer(submission_id, created, base_url)
    link = dashboard_link(base_url, submission_id)
    subject = subject[:MAX_SUBJECT_CHARS]
    text = plain_body(title, rows, files, footer, link)
    html_part = html_body(title, rows, files, footer, link)
    if own_words is not None:
        subject, text, html_part = own_words(subject, text, html_part)

    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = one_line(mail_from)
    message["To"] = one_line(to)
    reply_to = reply_address(event_payload.get("reply_to"), fields.get(DEFAULT_EMAIL_FIELD))
    if reply_to is not None:
        message["Reply-To"] = reply_to
    if created is not None:
        message["Date"] = format_datetime(created)
    message["Message-ID"] = message_id(submission_id, to, mail_from)
    message[SUBMISSION_ID_HEADER] = one_line(submission_id)
    # RFC 3834: vacation responders and the like must not answer a generated mail.
    message["Auto-Submitted"] = "auto-generated"

    message.set_content(text, charset="utf-8")
    message.add_alternative(html_part, subtype="html", charset="utf-8")
    return message


def _files(value: object) -> list[ListedFile]:
    """The files an event tells of (`describe_files`), as the mail shows them."""
    if not isinstance(value, list):
        return []
    files = []
    for entry in value:
        if not isinstance(entry, Mapping):
            continue
        url = entry.get("url")
        # Only a web link becomes one: the mail is no place for another scheme.
        link = url if isinstance(url, str) and url.startswith(("https://", "http://")) else None
        expires = payload_moment(entry.get("url_expires_at"))
        size = entry.get("size")
        files.append(
            ListedFile(
                field=one_line(payload_text(entry.get("field"))),
                name=one_line(payload_text(entry.get("name"))) or "file",
                size=_size(size) if isinstance(size, int) and not isinstance(size, bool) else "",
                url=one_line(link) if link is not None else None,
                expires=_utc(expires) if link is not None and expires is not None else None,
            )
        )
    return files


def _size(size: int) -> str:
    if size < 1000:
        return "1 byte" if size == 1 else f"{size} bytes"
    if size < 999_950:
        return f"{size / 1e3:.1f} kB"
    if size < 999_950_000:
        return f"{size / 1e6:.1f} MB"
    return f"{size / 1e9:.1f} GB"


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def reply_address(reply_to: object, email_field: object) -> Address | None:
    """The submission's reply-to address, else its `email` field, when either is one
    valid address; otherwise None and the mail goes without Reply-To.

    The payload's reply_to already falls back to the `email` field when it is taken
    (decisions.md, `_replyto`); checking both again here keeps an older or damaged
    payload from putting something other than one address in the header."""
    for candidate in (reply_to, email_field):
        address = _address(candidate)
        if address is not None:
            return address
    return None


def _address(value: object) -> Address | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or _LINE_BREAKING.search(text) or not is_email(text):
        return None
    try:
        address = Address(addr_spec=text)
    except (HeaderParseError, ValueError, IndexError):
        return None
    # The parser forgives some input (comments, a display name); only an address that
    # reads back exactly as given is used, so nothing else reaches the header.
    if address.addr_spec != text or not address.username or not address.domain:
        return None
    if not text.isascii():
        # A non-ASCII address cannot be written into a header without SMTPUTF8,
        # which the mailer does not ask for.
        return None
    return address


def one_line(value: str) -> str:
    """A header value: line breaks and other control characters made one space, and no
    mark that reorders text (a bidirectional override would make "Invoice \u202egnp.exe"
    read as "Invoice exe.png")."""
    return _LINE_BREAKING.sub(" ", _REORDERING.sub("", value)).strip()


def payload_text(value: object) -> str:
    """A payload's value as text: "" for anything but a string."""
    return value if isinstance(value, str) else ""


def _display(value: object) -> str:
    """A field value as text: lists joined, nested objects as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return plain(value)  # line breaks kept; controls and direction marks dropped
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return ", ".join(
            _display(item) if not isinstance(item, dict | list) else _json(item) for item in value
        )
    return _json(value)


def display_value(value: object) -> str:
    """A field value as the mail shows it (and chat messages too)."""
    return _display(value)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def payload_moment(value: object) -> datetime | None:
    """A payload's RFC 3339 time, in UTC when it names no zone; None for anything else."""
    if not isinstance(value, str):
        return None
    try:
        created = datetime.fromisoformat(value)
    except ValueError:
        return None
    return created if created.tzinfo is not None else created.replace(tzinfo=UTC)


def message_id(submission_id: str, to: str, mail_from: str) -> str:
    """One Message-ID per submission (or test event) and recipient, the same on every
    retry: a mail sent again after a lost answer from the server is a duplicate clients
    can drop.
    The recipient is hashed, so the ID does not spell out who else was told."""
    domain = mail_from.rpartition("@")[2].strip().strip(">")
    if not re.fullmatch(r"[A-Za-z0-9.-]+", domain):
        domain = "intake.invalid"
    local = re.sub(r"[^A-Za-z0-9_.-]", "", submission_id) or "submission"
    recipient = hashlib.sha256(to.strip().lower().encode("utf-8")).hexdigest()[:16]
    return f"<{local}.{recipient}@{domain}>"


def dashboard_link(base_url: str | None, submission_id: str) -> str | None:
    """The submission's page in the dashboard, when the service knows its public address
    (INTAKE_BASE_URL); the id is the service's own, quoted all the same."""
    if not base_url or not submission_id:
        return None
    return f"{base_url.rstrip('/')}/dashboard/submissions/{quote(submission_id, safe='')}"


def _footer(submission_id: str, created: datetime | None, base_url: str | None) -> list[str]:
    lines = []
    if submission_id:
        lines.append(f"Submission {submission_id}")
    if created is not None:
        lines.append(f"Received {created.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S UTC')}")
    if base_url:
        lines.append(f"Sent from {base_url}")
    return lines


@frozen
class MailParts:
    """A mail as its parts (owner_mail.py renders them; the sandbox stays out of what
    only needs the shape)."""

    subject: str
    text: str
    html: str
    failed: tuple[str, ...] = ()  # the owner's templates that failed: defaults used


def autoresponse_address(payload: Mapping[str, object]) -> Address | None:
    """Where a confirmation goes: the submission's validated reply-to address (its
    `_replyto`, else its `email` field), when it is one plain address."""
    data = payload.get("data")
    fields = data if isinstance(data, Mapping) else {}
    return reply_address(payload.get("reply_to"), fields.get(DEFAULT_EMAIL_FIELD))
