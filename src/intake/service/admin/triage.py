"""An owner's triage of one submission: release it (spam or unverified to accepted), mark
it as spam, or erase it (management-api.md, "Status changes and events"). The HTTP API
reaches a submission through its key's workspace (`owned_submission`); the `intake`
command, an operator's, through its id alone (`submission`).

Every triage teaches the spam filter in the transaction of its change (docs/scoring.md,
"How triage teaches"): a release teaches ham, a mark as spam spam, and an erasure
unlearns what the submission taught. Asking for the status a submission has already
confirms it: the filter learns it once, and nothing else changes."""

from __future__ import annotations

import logging
from datetime import datetime

from intake.domain import ids
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.quota import period
from intake.domain.spam.lessons import lesson_of
from intake.domain.spam.model import Label, Lesson
from intake.domain.spam.opinion import corrects_akismet, report_event, report_query
from intake.domain.triage import TriageStatus, deletion_event, release_event
from intake.ports.blobs import BlobStoreError
from intake.ports.triage import Erasure, Release, Released
from intake.service.admin.base import AdminBase
from intake.service.admin.errors import NotFoundError
from intake.service.admin.ownership import owned, workspace_of

log = logging.getLogger("intake.triage")


class TriageAdmin(AdminBase):
    async def submission(self, submission_id: str) -> Submission:
        submission = await self._store.submissions.get(submission_id)
        if submission is None:
            raise NotFoundError(f"no submission {submission_id!r}")
        return submission

    async def owned_submission(self, workspace_id: str, submission_id: str) -> Submission:
        """A submission of another workspace is not found, exactly as a missing one."""
        return await owned(
            workspace_id, submission_id, "submission", self._store.submissions.get, workspace_of
        )

    async def set_status(self, submission: Submission, status: TriageStatus) -> Submission:
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
        event = release_event(self._event_id(), submission, self._signer, now)
        report = self._report(submission, Label.HAM, now)
        released = await self._store.submissions.release(
            Release(submission.submission_id, event, period(now), lesson, report=report)
        )
        if released is None:
            raise NotFoundError(f"no submission {submission.submission_id!r}")
        self._spam_learned(submission.workspace_id)
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
        self._spam_learned(submission.workspace_id)
        return marked

    async def delete_submission(self, submission: Submission, *, unlearn: bool = True) -> None:
        """Erases a submission and queues its `submission.deleted` for the webhook
        endpoints. Its files' blobs are deleted after the store's transaction, so that
        no stored row ever links a missing file; one that cannot be deleted now is
        linked by no row, and the upload sweep deletes it later. `unlearn`: whether
        what it taught the spam filter goes with it (a form's deletion leaves it, as
        retention does: docs/scoring.md, "Submissions nobody touches")."""
        now = self._clock.now()
        event = deletion_event(self._event_id(), submission, now)
        # Its lesson's hashes unlearn whatever it taught (the label is not read).
        lesson = await self._lesson(submission, Label.HAM) if unlearn else None
        erased = await self._store.submissions.erase(
            Erasure(submission.submission_id, event, lesson)
        )
        if erased is None:
            raise NotFoundError(f"no submission {submission.submission_id!r}")
        self._spam_learned(submission.workspace_id)
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
        return report_event(self._event_id(), submission, label, now)

    async def _lesson(self, submission: Submission, label: Label) -> Lesson | None:
        """None for a submission whose data is gone (a forward-only form's, once
        forwarded): it has nothing left to teach, nor to unlearn by."""
        if not submission.data:
            return None
        return lesson_of(submission, label, await self._spam_hasher())

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
        self._spam_learned(submission.workspace_id)
        return await self.submission(submission.submission_id)

    def _event_id(self) -> str:
        now_ms = int(self._clock.now().timestamp() * 1000)
        return ids.time_sorted_id("evt", now_ms, self._ids.random_bytes(ids.ID_RANDOM_BYTES))


def _facts(submission: Submission, event_id: str) -> dict[str, object]:
    # Ids only: never what was submitted.
    return {
        "submission_id": submission.submission_id,
        "form_id": submission.form_id,
        "event_id": event_id,
    }
