"""The upload sweep: deletes the blobs no submission links, once they are old enough.

A file is streamed to the blob store while its request is read, and linked by the
submission row in the commit transaction. A process that dies in between, or a commit
whose outcome the database never confirmed, leaves a blob that nothing links; a write cut
off in the middle leaves an `.incoming/` entry. Both are deleted here once older than a
grace period longer than any request may take, so an upload still under way is never
touched.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from attrs import frozen

from intake.domain.uploads import submission_of_key
from intake.ports.blobs import BlobStore
from intake.ports.submissions import MAX_EXISTING_IDS, ExistingSubmissions

DEFAULT_UPLOAD_GRACE = timedelta(hours=1)
# The most ids `ExistingSubmissions.existing` takes in one call.
BATCH_SIZE = MAX_EXISTING_IDS


@frozen
class SweepCounts:
    orphans: int  # blobs of a submission that was never stored
    incomplete: int  # `.incoming/` leftovers of interrupted writes


async def sweep_uploads(
    blobs: BlobStore,
    submissions: ExistingSubmissions,
    now: datetime,
    grace: timedelta = DEFAULT_UPLOAD_GRACE,
) -> SweepCounts:
    """Deletes the blobs created before `now - grace` whose submission is not stored,
    and the unfinished writes last touched before then. A key intake did not make (one
    that does not name a submission's file) is left alone: the store may be shared."""
    if grace < timedelta(0):
        raise ValueError("the upload grace period must not be negative")
    incomplete = 0
    orphans = 0
    # Submission id -> its blob keys found so far, checked a batch of ids at a time.
    pending: dict[str, list[str]] = {}
    async for info in blobs.list(older_than=now - grace):
        if info.incoming:
            await blobs.delete(info.key)
            incomplete += 1
            continue
        submission_id = submission_of_key(info.key)
        if submission_id is None:  # a key intake did not make
            continue
        pending.setdefault(submission_id, []).append(info.key)
        if len(pending) >= BATCH_SIZE:
            orphans += await _delete_unlinked(blobs, submissions, pending)
            pending = {}
    if pending:
        orphans += await _delete_unlinked(blobs, submissions, pending)
    return SweepCounts(orphans=orphans, incomplete=incomplete)


async def _delete_unlinked(
    blobs: BlobStore, submissions: ExistingSubmissions, pending: dict[str, list[str]]
) -> int:
    stored = await submissions.existing(list(pending))
    deleted = 0
    for submission_id, keys in pending.items():
        if submission_id in stored:
            continue
        for key in keys:
            await blobs.delete(key)
            deleted += 1
    return deleted
