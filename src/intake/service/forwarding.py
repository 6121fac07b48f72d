"""Forward only: a form that keeps nothing once forwarded. The fan-out queues each of its
accepted submissions; once every delivery of the submission's events is delivered or
dead, its data and files are erased and the row's metadata kept (status, times, quota
month), so the month's count, the quota and the idempotency record stay right. Run by
the relay after each round and by `intake purge`: a relay that dies between a delivery
and the erasure leaves it queued, and the next run erases it.

The store erases a batch in one transaction and answers its files' keys; the blobs are
deleted after, so no row ever links a missing file (a blob left behind is the upload
sweep's, as in retention.py)."""

from __future__ import annotations

import logging

from intake.ports.blobs import BlobStore, BlobStoreError
from intake.ports.submissions import SubmissionRepository

log = logging.getLogger("intake.forwarding")

ERASE_BATCH_SIZE = 200


async def erase_forwarded(
    submissions: SubmissionRepository,
    blobs: BlobStore | None,
    *,
    batch_size: int = ERASE_BATCH_SIZE,
) -> int:
    """Erases every forwarded submission that is ready; returns how many."""
    erased = 0
    while True:
        batch = await submissions.erase_forwarded(batch_size)
        erased += len(batch.submission_ids)
        if blobs is not None:
            for key in batch.file_keys:
                try:
                    await blobs.delete(key)
                except (BlobStoreError, OSError):
                    log.warning("could not delete a forwarded submission's file; the sweep will")
        if len(batch.submission_ids) < batch_size:
            break
    if erased:
        log.info("forward only: erased forwarded submissions", extra={"submissions": erased})
    return erased
