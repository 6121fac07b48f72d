"""What a chat message tells, whatever the app: a title, the submitted fields, the files,
a line of facts, and the link to the submission's page in the dashboard. Raw text here;
each app's adapter escapes and cuts it for its own syntax (chat_text.py)."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

from intake.domain.model import EventType
from intake.domain.notifications import dashboard_link, display_value


@frozen
class ChatMessage:
    title: str
    fields: tuple[tuple[str, str], ...]  # (name, value), in the order submitted
    footer: str  # the submission's id, status and time: the service's own text
    link: str | None = None  # the dashboard's page of the submission
    flagged: bool = False  # spam or unverified: said in the message


def submission_message(
    payload: Mapping[str, object], *, form_name: str, base_url: str | None
) -> ChatMessage:
    """The message for a `submission.created` (or, to a destination that asked,
    `submission.flagged`) event's payload."""
    submission_id = _text(payload.get("submission_id"))
    status = _text(payload.get("status"))
    flagged = payload.get("type") == EventType.FLAGGED.value
    title = form_name.strip() or _text(payload.get("form_id")) or "your form"
    heading = f"New submission to {title}"
    if flagged:
        heading = f"Flagged submission ({status or 'flagged'}) to {title}"
    data = payload.get("data")
    fields = [
        (str(name), display_value(value))
        for name, value in (data.items() if isinstance(data, Mapping) else ())
    ]
    fields += _files(payload.get("files"))
    subject = _text(payload.get("subject"))
    if subject:
        fields.insert(0, ("Subject", subject))
    footer = " · ".join(
        part for part in (submission_id, status, _text(payload.get("created_at"))) if part
    )
    return ChatMessage(
        title=heading,
        fields=tuple(fields),
        footer=footer,
        link=dashboard_link(base_url, submission_id),
        flagged=flagged,
    )


def test_message(payload: Mapping[str, object], *, form_name: str) -> ChatMessage:
    """The message of a `chat.test` event: it says what it is, and nothing submitted."""
    title = form_name.strip() or _text(payload.get("form_id")) or "your form"
    return ChatMessage(
        title=f"Test message from intake for {title}",
        fields=(("Test", "This destination receives the form's new submissions."),),
        footer=_text(payload.get("created_at")),
    )


def _files(value: object) -> list[tuple[str, str]]:
    """Each uploaded file as a field: its name and size (its link is the dashboard's)."""
    if not isinstance(value, list):
        return []
    files = []
    for entry in value:
        if isinstance(entry, Mapping):
            name = _text(entry.get("name")) or "file"
            files.append((f"File ({_text(entry.get('field'))})", name))
    return files


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
