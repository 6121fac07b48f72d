"""The notification mail for one submission: text and HTML, safe from what visitors typed.

Every header value that can hold visitor input (subject, reply-to, field names only
appear in the body) is stripped of line breaks, so no field can add a header; every
name and value in the HTML part is escaped, so none can add markup. Uploaded files are
listed after the fields, each with its name, its size and its download link, held to the
same rules: a file name is the visitor's text too.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from urllib.parse import quote

from attrs import frozen

from intake.domain.validation import DEFAULT_EMAIL_FIELD, is_email

SUBMISSION_ID_HEADER = "X-Intake-Submission-Id"

# Mail clients show about this much of a subject; a visitor's longer one is cut.
MAX_SUBJECT_CHARS = 200

# Control characters, DEL and the Unicode line and paragraph separators: anything a
# mail parser or client might take as the end of a header line.
_LINE_BREAKING = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")


def render_notification(
    event_payload: Mapping[str, object],
    *,
    form_name: str,
    mail_from: str,
    to: str,
    base_url: str | None,
) -> EmailMessage:
    """The mail telling `to` about the submission in an outbox event's payload."""
    submission_id = _text(event_payload.get("submission_id"))
    form_id = _text(event_payload.get("form_id"))
    title = form_name.strip() or form_id or "your form"
    subject = one_line(_text(event_payload.get("subject")))
    if not subject:
        subject = one_line(f"New submission to {title}")
    data = event_payload.get("data")
    fields = data if isinstance(data, Mapping) else {}

    message = EmailMessage()
    message["Subject"] = subject[:MAX_SUBJECT_CHARS]
    message["From"] = one_line(mail_from)
    message["To"] = one_line(to)
    reply_to = reply_address(event_payload.get("reply_to"), fields.get(DEFAULT_EMAIL_FIELD))
    if reply_to is not None:
        message["Reply-To"] = reply_to
    created = _created_at(event_payload.get("created_at"))
    if created is not None:
        message["Date"] = format_datetime(created)
    message["Message-ID"] = message_id(submission_id, to, mail_from)
    message[SUBMISSION_ID_HEADER] = one_line(submission_id)
    # RFC 3834: vacation responders and the like must not answer a generated mail.
    message["Auto-Submitted"] = "auto-generated"

    rows = [(one_line(str(name)), _display(value)) for name, value in fields.items()]
    files = _files(event_payload.get("files"))
    footer = _footer(submission_id, created, base_url)
    link = dashboard_link(base_url, submission_id)
    message.set_content(_plain_body(title, rows, files, footer, link), charset="utf-8")
    html_part = _html_body(title, rows, files, footer, link)
    message.add_alternative(html_part, subtype="html", charset="utf-8")
    return message


@frozen
class _File:
    field: str
    name: str
    size: str
    url: str | None
    expires: str | None


def _files(value: object) -> list[_File]:
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
        expires = _created_at(entry.get("url_expires_at"))
        size = entry.get("size")
        files.append(
            _File(
                field=one_line(_text(entry.get("field"))),
                name=one_line(_text(entry.get("name"))) or "file",
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


def _file_title(item: _File) -> str:
    label = f"{item.field}: {item.name}" if item.field else item.name
    return f"{label} ({item.size})" if item.size else label


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
    """A header value: line breaks and other control characters made one space."""
    return _LINE_BREAKING.sub(" ", value).strip()


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _display(value: object) -> str:
    """A field value as text: lists joined, nested objects as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return ", ".join(
            _display(item) if not isinstance(item, dict | list) else _json(item) for item in value
        )
    return _json(value)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _created_at(value: object) -> datetime | None:
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
        lines.append(f"Sent by intake at {base_url}")
    return lines


def _plain_body(
    title: str,
    rows: list[tuple[str, str]],
    files: list[_File],
    footer: list[str],
    link: str | None,
) -> str:
    lines = [f"New submission to {title}", ""]
    if not rows:
        lines.append("(no fields)")
    for name, value in rows:
        # Continuation lines are indented, so a value's own lines cannot pass for
        # another field.
        lines.append(f"{name}: " + "\n  ".join(value.splitlines() or [""]))
    if files:
        lines.extend(["", "Files:"])
    for item in files:
        lines.append(_file_title(item))
        if item.url is not None:
            lines.append(f"  {item.url}")
        if item.expires is not None:
            lines.append(f"  (the link works until {item.expires})")
    if link is not None:
        lines.extend(["", f"Open it in the dashboard: {link}"])
    lines.extend(["", "--", *footer])
    return "\n".join(lines) + "\n"


def _html_files(files: list[_File]) -> str:
    if not files:
        return ""
    items = []
    for item in files:
        title = html.escape(_file_title(item))
        if item.url is not None:
            title = f'<a href="{html.escape(item.url, quote=True)}">{title}</a>'
        if item.expires is not None:
            title += (
                f'<br><span style="color:#666;font-size:small">'
                f"the link works until {html.escape(item.expires)}</span>"
            )
        items.append(f'<li style="padding:4px 0">{title}</li>')
    return f"<h3>Files</h3><ul>{''.join(items)}</ul>"


def _html_body(
    title: str,
    rows: list[tuple[str, str]],
    files: list[_File],
    footer: list[str],
    link: str | None,
) -> str:
    cells = "".join(
        "<tr>"
        f'<th style="text-align:left;vertical-align:top;padding:4px 12px 4px 0">'
        f"{html.escape(name)}</th>"
        f'<td style="white-space:pre-wrap;padding:4px 0">{html.escape(value)}</td>'
        "</tr>"
        for name, value in rows
    )
    table = f"<table>{cells}</table>" if rows else "<p>(no fields)</p>"
    notes = "<br>".join(html.escape(line) for line in footer)
    if link is not None:
        link = f'<p><a href="{html.escape(link, quote=True)}">Open it in the dashboard</a></p>'
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        f"<h2>New submission to {html.escape(title)}</h2>"
        f"{table}"
        f"{_html_files(files)}"
        f"{link or ''}"
        f'<p style="color:#666;font-size:small">{notes}</p>'
        "</body></html>\n"
    )
