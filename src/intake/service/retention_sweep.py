"""The relay's retention sweep (`intake relay`, every INTAKE_RETENTION_SWEEP_INTERVAL
seconds): the forms' own retention, the full client addresses' hours (docs/privacy.md) and
the spam filter's rule for untouched submissions (docs/scoring.md). Each step works a
batch per transaction, so a relay stopped inside one leaves whole or erased rows."""

from __future__ import annotations

from datetime import timedelta

from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.store import Store
from intake.service.retention import erase_expired, truncate_client_ips
from intake.service.spam_knowledge import SpamKnowledge
from intake.service.spam_settling import settle_untouched


class RetentionSweep:
    def __init__(
        self,
        store: Store,
        blobs: BlobStore | None,
        clock: Clock,
        *,
        client_ip_full: timedelta,
        settle_after: timedelta,
    ) -> None:
        self._store = store
        self._blobs = blobs
        self._clock = clock
        self._client_ip_full = client_ip_full
        self._settle_after = settle_after
        # Its hasher alone: the sweep reads the instance's token key, no statistics.
        self._knowledge = SpamKnowledge(store.spam, store.secrets, clock)

    async def run(self) -> None:
        """One sweep; a step the store refuses raises, and the next sweep tries again."""
        store, now = self._store, self._clock.now()
        await erase_expired(store.submissions, store.forms, self._blobs, now)
        await truncate_client_ips(store.submissions, now, self._client_ip_full)
        hasher = await self._knowledge.hasher()
        await settle_untouched(store.spam, hasher, now, self._settle_after)
