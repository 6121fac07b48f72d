"""Housekeeping: everything `intake purge` deletes, in one pass (docs/cli.md,
"Housekeeping").

The idempotency records past their 24 hours, the outbox rows published longer ago
than the outbox retention and the autoresponder's records past their two hours go
first; then the spam and unverified submissions past their retention, and the
submissions past their form's retention, with their files
(service/retention.py), so that the upload sweep that follows (service/sweep.py) finds
none of their files; and the full client addresses kept longer than their hours are cut
to their networks; and the dashboard's invitations a month past their expiry. Every step
measures age from one moment, taken once.
"""

from __future__ import annotations

from datetime import timedelta

from attrs import frozen

from intake.domain.users import INVITATION_KEPT_AFTER_EXPIRY
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.forms import FormRepository
from intake.ports.submissions import SubmissionRepository
from intake.ports.users import UserRepository
from intake.service.forwarding import erase_forwarded
from intake.service.retention import (
    ErasedCounts,
    erase_expired,
    erase_flagged,
    truncate_client_ips,
)
from intake.service.sweep import SweepCounts, sweep_uploads


@frozen
class Retention:
    """How long each kind of leftover is kept."""

    outbox: timedelta  # published outbox rows
    flagged: timedelta  # spam and unverified submissions; zero keeps them forever
    upload_grace: timedelta  # unlinked uploads, which may belong to a request under way
    client_ip_full: timedelta  # a full client address, before it is cut to its network


@frozen
class Purged:
    """What one purge deleted."""

    idempotency: int  # expired idempotency records
    outbox: int  # published outbox rows, with their deliveries
    flagged: ErasedCounts
    expired: ErasedCounts  # submissions past their form's retention, of every status
    client_ips: int  # full client addresses cut to their networks
    swept: SweepCounts | None  # None without a blob store: there was nothing to sweep
    forwarded: int = 0  # forward-only forms' submissions, data and files erased
    autoresponses: int = 0  # the autoresponder's records of the addresses it answered
    invitations: int = 0  # the dashboard's invitations, a month past their expiry


class Purge:
    def __init__(
        self,
        submissions: SubmissionRepository,
        forms: FormRepository,
        blobs: BlobStore | None,
        clock: Clock,
        users: UserRepository | None = None,
    ) -> None:
        self._submissions = submissions
        self._forms = forms
        self._blobs = blobs
        self._clock = clock
        self._users = users

    async def run(self, retention: Retention) -> Purged:
        now = self._clock.now()
        records = await self._submissions.purge(now, retention.outbox)
        flagged = await erase_flagged(self._submissions, self._blobs, now, retention.flagged)
        expired = await erase_expired(self._submissions, self._forms, self._blobs, now)
        # What a relay that stopped before erasing left (service/forwarding.py).
        forwarded = await erase_forwarded(self._submissions, self._blobs)
        client_ips = await truncate_client_ips(self._submissions, now, retention.client_ip_full)
        invitations = 0
        if self._users is not None:
            expired_before = now - INVITATION_KEPT_AFTER_EXPIRY
            invitations = await self._users.purge_invitations(expired_before)
        swept = None
        if self._blobs is not None:
            swept = await sweep_uploads(self._blobs, self._submissions, now, retention.upload_grace)
        return Purged(
            idempotency=records.idempotency,
            outbox=records.outbox,
            flagged=flagged,
            expired=expired,
            client_ips=client_ips,
            swept=swept,
            forwarded=forwarded,
            autoresponses=records.autoresponses,
            invitations=invitations,
        )
