"""A report of an owner's triage, sent to the spam opinion service (Akismet) by the relay
as one delivery of kind `akismet` (docs/scoring.md, "Akismet"): read from the
submission as it is now, so that nothing submitted waits in the outbox."""

from __future__ import annotations

import enum

from attrs import frozen

from intake.domain.model import OutboxEvent
from intake.domain.spam.opinion import report_query, reported_label
from intake.ports.spam_opinion import OpinionUnavailableError, SpamOpinion
from intake.ports.store import Store

NO_AKISMET = "Akismet is not configured (INTAKE_AKISMET_API_KEY, INTAKE_AKISMET_SITE_URL)"
NOTHING_TO_REPORT = "nothing to report: the submission is gone or kept no client address"


class ReportOutcome(enum.Enum):
    ACKNOWLEDGED = "acknowledged"
    FAILED = "failed"  # tried again on the retry schedule
    PARKED = "parked"  # dead at once: nothing to send, or nowhere to send it


@frozen
class ReportResult:
    outcome: ReportOutcome
    detail: str  # safe to log and keep: never a key nor anything submitted


async def send_report(
    opinion: SpamOpinion | None, store: Store, event: OutboxEvent
) -> ReportResult:
    if opinion is None:
        # Parked rather than left pending: `intake outbox retry` sends it once Akismet
        # is configured.
        return ReportResult(ReportOutcome.PARKED, NO_AKISMET)
    submission = await store.submissions.get(event.submission_id)
    query = None if submission is None else report_query(submission)
    if query is None:
        return ReportResult(ReportOutcome.PARKED, NOTHING_TO_REPORT)
    try:
        await opinion.report(reported_label(event), query)
    except OpinionUnavailableError as error:
        return ReportResult(ReportOutcome.FAILED, str(error))
    return ReportResult(ReportOutcome.ACKNOWLEDGED, ReportOutcome.ACKNOWLEDGED.value)
