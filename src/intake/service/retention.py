"""Retention: erases the spam and unverified submissions older than the spam retention,
and the submissions of a form older than its own retention (docs/privacy.md), with their
files, so that what no one accepted does not pile up and what was kept is kept no longer
than its owner said (docs/cli.md, "Housekeeping"); and cuts the full client addresses
older than INTAKE_CLIENT_IP_FULL_HOURS to their networks.

The store erases one batch of rows in a transaction and answers their files' keys; the
blobs are deleted after it, so that no stored row ever links a missing file. A blob
that cannot be deleted then is linked by no row: the upload sweep deletes it later.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from attrs import frozen

from intake.domain.privacy import retention_cutoff
from intake.ports.blobs import BlobStore, BlobStoreError
from intake.ports.forms import FormRepository
from intake.ports.submissions import SubmissionRepository

log = logging.getLogger("intake.retention")

# Submissions per transaction: short enough that no lock is held long, SQLite's write
# lock above all; their files are deleted between two batches.
ERASE_BATCH_SIZE = 500


@frozen
class ErasedCounts:
    submissions: int
    files: int  # blobs deleted; those left are the sweep's


async def erase_flagged(
    submissions: SubmissionRepository,
    blobs: BlobStore | None,
    now: datetime,
    retention: timedelta,
    *,
    batch_size: int = ERASE_BATCH_SIZE,
) -> ErasedCounts:
    """Erases the spam and unverified submissions created at or before `now -
    retention` (all but those whose event is still on its way), with their outbox rows
    and files. A retention of zero keeps them forever."""
    if retention < timedelta(0):
        raise ValueError("the spam retention must not be negative")
    if retention == timedelta(0):
        return ErasedCounts(submissions=0, files=0)
    erased = deleted = 0
    while True:
        batch = await submissions.erase_flagged(now - retention, batch_size)
        erased += len(batch.submission_ids)
        if blobs is not None:
            deleted += await _delete(blobs, batch.file_keys)
        if len(batch.submission_ids) < batch_size:
            return ErasedCounts(submissions=erased, files=deleted)


async def erase_expired(
    submissions: SubmissionRepository,
    forms: FormRepository,
    blobs: BlobStore | None,
    now: datetime,
    *,
    batch_size: int = ERASE_BATCH_SIZE,
) -> ErasedCounts:
    """A form's retention (docs/privacy.md): erases, form by form, the submissions of
    every status created at or before `now` less the form's retention days, with their
    outbox rows and files; never one whose event is still on its way. A form without a
    retention keeps its submissions."""
    erased = deleted = 0
    for form in await forms.list():
        if form.retention_days is None:
            continue
        cutoff = retention_cutoff(now, form.retention_days)
        while True:
            batch = await submissions.erase_expired(form.form_id, cutoff, batch_size)
            erased += len(batch.submission_ids)
            if blobs is not None:
                deleted += await _delete(blobs, batch.file_keys)
            if len(batch.submission_ids) < batch_size:
                break
    if erased:
        log.info("retention erased submissions", extra={"submissions": erased})
    return ErasedCounts(submissions=erased, files=deleted)


async def truncate_client_ips(
    submissions: SubmissionRepository,
    now: datetime,
    kept_full: timedelta,
    *,
    batch_size: int = ERASE_BATCH_SIZE,
) -> int:
    """Cuts the client address of every submission created at or before `now -
    kept_full` to its network (docs/privacy.md, "Client addresses"), batch by batch
    from where the last sweep stopped; answers how many it cut."""
    cutoff = now - kept_full
    truncated = 0
    while True:
        batch = await submissions.truncate_client_ips(cutoff, batch_size)
        truncated += batch.truncated
        if batch.seen < batch_size:
            break
    if truncated:
        log.info("retention truncated client addresses", extra={"submissions": truncated})
    return truncated


async def _delete(blobs: BlobStore, keys: tuple[str, ...]) -> int:
    deleted = 0
    for key in keys:
        try:
            await blobs.delete(key)
        except (BlobStoreError, OSError):
            log.warning("could not delete an erased submission's file; the sweep will")
            continue
        deleted += 1
    return deleted
