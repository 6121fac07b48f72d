"""What an outside spam service (Akismet) is asked about one submission, and what a
report of an owner's triage tells it (docs/scoring.md, "Akismet").

Only a public submission with its client's address and user agent is asked: that is
what such a service judges a visitor by. A report carries what the submission kept:
its address as stored (docs/privacy.md), its text and its reply address; intake keeps
no user agent or referrer.
"""

from __future__ import annotations

from datetime import datetime

from attrs import frozen

from intake.domain.model import EventType, FieldData, OutboxEvent, Submission, texts_of
from intake.domain.scoring import Score
from intake.domain.spam.model import Label

# The text sent of one submission, at most: enough for any message a person writes.
MAX_CONTENT_CHARS = 20_000
# Akismet's type for a message sent through a contact form.
CONTACT_FORM = "contact-form"
# The one destination of every report (a delivery of kind `akismet`).
AKISMET_DESTINATION = "akismet"


@frozen
class OpinionQuery:
    """One submission as a spam service reads it. Holds what was submitted: never
    logged, never kept beyond the request or the report."""

    user_ip: str
    content: str
    author_email: str | None = None
    user_agent: str | None = None
    referrer: str | None = None


def content_of(data: FieldData, subject: str | None) -> str:
    """The subject, then every text value in the fields' order, one per line, cut to
    MAX_CONTENT_CHARS."""
    texts = [subject] if subject and subject.strip() else []
    for value in data.values():
        texts.extend(text for text in texts_of(value) if text.strip())
    return "\n".join(texts)[:MAX_CONTENT_CHARS]


def check_query(
    data: FieldData,
    *,
    subject: str | None,
    reply_to: str | None,
    client_ip: str,
    user_agent: str | None,
    referrer: str | None,
) -> OpinionQuery | None:
    """What a public submission is checked with; None (not asked) without an address or
    a user agent."""
    if not client_ip or not user_agent:
        return None
    return OpinionQuery(
        user_ip=client_ip,
        content=content_of(data, subject),
        author_email=reply_to or None,
        user_agent=user_agent,
        referrer=referrer or None,
    )


# The reason a submission keeps of Akismet's verdict: `akismet:spam`, `akismet:ham`.
VERDICT_PREFIX = "akismet:"


def with_verdict(score: Score, verdict: Label | None, threshold: float) -> Score:
    """The score once Akismet spoke: its spam flags the submission (the score raised to
    the form's threshold, if below); its ham clears nothing the filter flagged (an owner
    does, and teaches both). Its verdict comes first among the reasons. No verdict (not
    asked, or no answer in time): the filter's score as it is."""
    if verdict is None:
        return score
    points = max(score.points, threshold) if verdict is Label.SPAM else score.points
    return Score(points, (f"{VERDICT_PREFIX}{verdict.value}", *score.reasons))


def verdict_of(reasons: tuple[str, ...]) -> Label | None:
    """Akismet's verdict as the submission's reasons kept it; None when it gave none."""
    for reason in reasons:
        if reason.startswith(VERDICT_PREFIX):
            try:
                return Label(reason.removeprefix(VERDICT_PREFIX))
            except ValueError:
                return None
    return None


def corrects_akismet(submission: Submission, label: Label) -> bool:
    """Whether an owner's `label` corrects what Akismet said of the submission: what
    Akismet's submit-spam and submit-ham are for. A submission Akismet never judged (the
    server endpoint, no user agent, no answer in time, Akismet not configured then) is
    not reported, nor one whose verdict the owner confirms."""
    verdict = verdict_of(submission.spam_reasons)
    return verdict is not None and verdict is not label


def report_query(submission: Submission) -> OpinionQuery | None:
    """What a report of the submission's triage carries; None (nothing to report)
    without a stored client address."""
    if not submission.client_ip:
        return None
    return OpinionQuery(
        user_ip=submission.client_ip,
        content=content_of(submission.data, submission.subject),
        author_email=submission.reply_to or None,
    )


def report_event(event_id: str, submission: Submission, label: Label, now: datetime) -> OutboxEvent:
    """The outbox event of one report: the submission's ids and the owner's label only.
    What it carries is read from the submission as it is sent, so an erasure meanwhile
    leaves nothing to send (and drops the delivery)."""
    payload: dict[str, object] = {
        "type": EventType.AKISMET_REPORT.value,
        "submission_id": submission.submission_id,
        "form_id": submission.form_id,
        "workspace_id": submission.workspace_id,
        "label": label.value,
        "reported_at": now.isoformat(),
    }
    return OutboxEvent(
        event_id=event_id,
        event_type=EventType.AKISMET_REPORT,
        submission_id=submission.submission_id,
        form_id=submission.form_id,
        workspace_id=submission.workspace_id,
        payload=payload,
        created_at=now,
    )


def reported_label(event: OutboxEvent) -> Label:
    """The label a report event tells of."""
    return Label(event.payload["label"])
