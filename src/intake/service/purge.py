"""Housekeeping: everything `intake purge` deletes, in one pass (docs/cli.md,
"Housekeeping").

The idempotency records past their 24 hours and the outbox rows published longer ago
than the outbox retention go first; then the spam and unverified submissions past their
retention, with their files (service/retention.py), so that the upload sweep that
follows (service/sweep.py) finds none of their files. Every step measures age from one
moment, taken once.
"""

from __future__ import annotations

from datetime import timedelta

from attrs import frozen

from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.submissions import SubmissionRepository
from intake.service.retention import ErasedCounts, erase_flagged
from intake.service.sweep import SweepCounts, sweep_uploads


@frozen
class Retention:
    """How long each kind of leftover is kept."""

    outbox: timedelta  # published outbox rows
    flagged: timedelta  # spam and unverified submissions; zero keeps them forever
    upload_grace: timedelta  # unlinked uploads, which may belong to a request under way


@frozen
class Purged:
    """What one purge deleted."""

    idempotency: int  # expired idempotency records
    outbox: int  # published outbox rows, with their deliveries
    flagged: ErasedCounts
    swept: SweepCounts | None  # None without a blob store: there was nothing to sweep


class Purge:
    def __init__(
        self, submissions: SubmissionRepository, blobs: BlobStore | None, clock: Clock
    ) -> None:
        self._submissions = submissions
        self._blobs = blobs
        self._clock = clock

    async def run(self, retention: Retention) -> Purged:
        now = self._clock.now()
        records = await self._submissions.purge(now, retention.outbox)
        flagged = await erase_flagged(self._submissions, self._blobs, now, retention.flagged)
        swept = None
        if self._blobs is not None:
            swept = await sweep_uploads(self._blobs, self._submissions, now, retention.upload_grace)
        return Purged(
            idempotency=records.idempotency, outbox=records.outbox, flagged=flagged, swept=swept
        )
