"""An owner's triage of one submission: release it (spam or unverified to accepted), mark
it as spam, or erase it (management-api.md, "Status changes and events"). The HTTP API
reaches a submission through its key's workspace (`Submissions.owned`); the `intake`
command, an operator's, through its id alone (`Submissions.get`).

Every triage teaches the spam filter in the transaction of its change (docs/scoring.md,
"How triage teaches"): a release teaches ham, a mark as spam spam, and an erasure
unlearns what the submission taught. Asking for the status a submission has already
confirms it: the filter learns it once, and nothing else changes."""

from __future__ import annotations

import logging
from datetime import datetime

from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.quota import period
from intake.domain.signing import DownloadSigner
from intake.domain.spam.lessons import lesson_of
from intake.domain.spam.model import Label, Lesson
from intake.domain.spam.opinion import corrects_akismet, report_event, report_query
from intake.domain.triage import TriageStatus, deletion_event, release_event
from intake.ports.blobs import BlobStore, BlobStoreError
from intake.ports.clock import Clock
from intake.ports.store import Store
from intake.ports.triage import Erasure, Release, Released
from intake.service.admin.errors import NotFoundError
from intake.service.admin.mint import IdMint
from intake.service.spam_knowledge import SpamKnowledge

log = logging.getLogger("intake.triage")


class Triage:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        mint: IdMint,
        knowledge: SpamKnowledge,
        *,
        blobs: BlobStore | None = None,
        signer: DownloadSigner | None = None,
        spam_reports: bool = False,
    ) -> None:
        self._store = store
        self._clock = clock
        self._mint = mint
        # What this process knows of the spam statistics: the token hasher a lesson is
        # made with, invalidated after a triage taught (the serving process's, shared
        # with its pipeline).
        self._knowledge = knowledge
        self._blobs = blobs
        self._signer = signer
        # Whether triage is reported to Akismet (docs/scoring.md, "Akismet").
        self._spam_reports = spam_reports

    async def set_status(self, submission: Submission, status: TriageStatus) -> Submission:
        """`release` for accepted, `mark_spam` for spam."""
        if status is TriageStatus.ACCEPTED:
            return await self.release(submission)
        return await self.mark_spam(submission)

    async def release(self, submission: Submission) -> Submission:
        """Accepts the submission (`released`): the submission as it is after."""
        return (await self.released(submission)).submission

    async def released(self, submission: Submission) -> Released:
        """Accepts a spam or unverified submission: charged to this month, whatever the
        quota (the owner decided), and queued as a new `submission.created`, so that
        every destination of accepted submissions gets it once. One accepted already is
        answered as it is: nothing is charged or queued. One accepted once before (then
        marked as spam) is accepted again, neither charged nor queued a second time:
        its destinations got its `submission.created` then."""
        lesson = await self._lesson(submission, Label.HAM)
        if submission.status is SubmissionStatus.ACCEPTED:
            return Released(await self._confirm(submission, lesson), changed=False)
        now = self._clock.now()
        event = release_event(self._mint.event_id(), submission, self._signer, now)
        report = self._report(submission, Label.HAM, now)
        released = await self._store.submissions.release(
            Release(submission.submission_id, event, period(now), lesson, report=report)
        )
        if released is None:
            raise NotFoundError(f"no submission {submission.submission_id!r}")
        self._knowledge.invalidate(submission.workspace_id)
        if released.queued:
            log.info("submission released", extra=_facts(submission, event.event_id))
        elif released.changed:
            log.info("submission released again, nothing queued", extra=_facts(submission, ""))
        return released

    async def mark_spam(self, submission: Submission) -> Submission:
        """Marks a submission as spam: nothing is queued (what was delivered stays
        delivered), and the month's usage is not given back. One that is spam already is
        confirmed: taught as spam once, nothing else changed (and nothing reported)."""
        lesson = await self._lesson(submission, Label.SPAM)
        if submission.status is SubmissionStatus.SPAM:
            return await self._confirm(submission, lesson)
        report = self._report(submission, Label.SPAM, self._clock.now())
        marked = await self._store.submissions.mark_spam(
            submission.submission_id, lesson, report=report
        )
        if marked is None:
            raise NotFoundError(f"no submission {submission.submission_id!r}")
        self._knowledge.invalidate(submission.workspace_id)
        return marked

    async def delete(self, submission: Submission, *, unlearn: bool = True) -> None:
        """Erases a submission and queues its `submission.deleted` for the webhook
        endpoints. Its files' blobs are deleted after the store's transaction, so that
        no stored row ever links a missing file; one that cannot be deleted now is
        linked by no row, and the upload sweep deletes it later. `unlearn`: whether
        what it taught the spam filter goes with it (a form's deletion leaves it, as
        retention does: docs/scoring.md, "Submissions nobody touches")."""
        now = self._clock.now()
        event = deletion_event(self._mint.event_id(), submission, now)
        # Its lesson's hashes unlearn whatever it taught (the label is not read).
        lesson = await self._lesson(submission, Label.HAM) if unlearn else None
        erased = await self._store.submissions.erase(
            Erasure(submission.submission_id, event, lesson)
        )
        if erased is None:
            raise NotFoundError(f"no submission {submission.submission_id!r}")
        self._knowledge.invalidate(submission.workspace_id)
        log.info("submission erased", extra=_facts(submission, event.event_id))
        for key in erased.file_keys:
            if self._blobs is None:
                log.warning("an erased submission's file is left for the upload sweep")
                return
            try:
                await self._blobs.delete(key)
            except (BlobStoreError, OSError):
                log.warning("could not delete an erased submission's file; the sweep will")

    def _report(self, submission: Submission, label: Label, now: datetime) -> OutboxEvent | None:
        """Akismet told of the owner's decision (its report queued with the triage and
        sent by the relay), when it is asked, the decision corrects Akismet's verdict,
        and the submission kept its client's address (what Akismet judges by)."""
        if not self._spam_reports or not corrects_akismet(submission, label):
            return None
        if report_query(submission) is None:
            return None
        return report_event(self._mint.event_id(), submission, label, now)

    async def _lesson(self, submission: Submission, label: Label) -> Lesson | None:
        """None for a submission whose data is gone (a forward-only form's, once
        forwarded): it has nothing left to teach, nor to unlearn by."""
        if not submission.data:
            return None
        return lesson_of(submission, label, await self._knowledge.hasher())

    async def _confirm(self, submission: Submission, lesson: Lesson | None) -> Submission:
        """The status it has, asked for again: taught once, no event, nothing else. The
        submission as it is now: a triage in between decided (and nothing was taught)."""
        if lesson is None:
            return submission
        # Only while it still has the status read: a triage in between decided.
        confirmed = await self._store.spam.confirm(
            submission.submission_id, lesson, if_status=submission.status
        )
        if not confirmed:
            raise NotFoundError(f"no submission {submission.submission_id!r}")
        self._knowledge.invalidate(submission.workspace_id)
        now = await self._store.submissions.get(submission.submission_id)
        if now is None:
            raise NotFoundError(f"no submission {submission.submission_id!r}")
        return now


def _facts(submission: Submission, event_id: str) -> dict[str, object]:
    # Ids only: never what was submitted.
    return {
        "submission_id": submission.submission_id,
        "form_id": submission.form_id,
        "event_id": event_id,
    }
