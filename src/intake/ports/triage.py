"""What the stores take and answer for an owner's triage of one submission: a release, and
an erasure (SubmissionRepository.release, .erase).

Each carries the submission's lesson (domain/spam/lessons.py's lesson_of), or None: the
store teaches it in the transaction of the status change (ports/spam_statistics.py). A
release teaches ham, a mark as spam spam, whatever the lesson's label says; an erasure
unlearns what the submission taught. Without a lesson the statistics are left alone."""

from __future__ import annotations

from attrs import frozen

from intake.domain.model import OutboxEvent, Submission
from intake.domain.spam.model import Lesson


@frozen
class Release:
    """Turns a spam or unverified submission into an accepted one, in one transaction:
    the status, one more to the workspace's count of `period` (never refused: the owner
    decided) with the submission charged to that month, and `event` (its new
    `submission.created`) queued. A submission accepted once before (charged already:
    accepted on arrival or released, then marked as spam) only becomes accepted again:
    it is not charged twice, and its `submission.created` is never queued twice."""

    submission_id: str
    event: OutboxEvent
    period: str  # YYYY-MM, UTC: the month of the release
    lesson: Lesson | None = None  # taught as ham, even when it was accepted already
    # Akismet told of the release (an `akismet.report`), queued with it when it changes
    # the status, whether or not `event` is queued.
    report: OutboxEvent | None = None


@frozen
class Released:
    """The submission as it is now, accepted; `changed` False when it was accepted
    already, and nothing was written; `queued` False when no event was queued (nothing
    changed, or it had been accepted once before)."""

    submission: Submission
    changed: bool
    queued: bool = False


@frozen
class Erasure:
    """Erases a submission, in one transaction: its row; its idempotency records; its
    deliveries not delivered (pending or dead); the submitted values of its events (the
    rows stay: decisions.md never deletes an unpublished one); its files' bytes given
    back to its workspace's storage use; and `event` (its `submission.deleted`) queued."""

    submission_id: str
    event: OutboxEvent
    # Its hashes unlearn what the submission taught (its label is not read).
    lesson: Lesson | None = None


@frozen
class Erased:
    """The keys of the erased submission's files: their blobs are to be deleted now that
    no row links them."""

    file_keys: tuple[str, ...]
