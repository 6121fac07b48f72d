from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from datetime import datetime, timedelta
from typing import Protocol

from attrs import frozen

from intake.domain.errors import ErrorCode
from intake.domain.form_messages import AUTORESPONSE_RECORDS_KEPT
from intake.domain.idempotency import RETENTION, IdempotencyRecord
from intake.domain.listing import ALL, SubmissionFilter, SubmissionPage, SubmissionQuery
from intake.domain.model import FormMode, OutboxEvent, Submission, SubmissionStatus
from intake.domain.spam.model import Lesson
from intake.ports.triage import Erased, Erasure, Release, Released

# Ids per call of `SubmissionRepository.existing`, in every store alike: the caller
# batches by it, and each store answers a batch in one query.
MAX_EXISTING_IDS = 500


@frozen
class QuotaCharge:
    """Count one against the workspace's month, refusing the commit past the ceiling."""

    workspace_id: str
    period: str
    ceiling: int


@frozen
class FormCheck:
    """Steps 1 and 2 as the pipeline passed them, confirmed by the commit in its own
    transaction, since a store may have answered them from a short-lived cache: the form
    still exists, is still reached by the public key the request used and still public
    there (`public_form_key` None: the server route, by form id), and it and its
    workspace still accept submissions."""

    form_id: str
    public_form_key: str | None = None

    def refusal(
        self, public_form_key: str | None, mode: FormMode, accepting: bool
    ) -> ErrorCode | None:
        """What steps 1 and 2 answer for the form as it is now, in their order; None
        when it passes. `public_form_key` None: the form is gone. `accepting`: the form
        is enabled and its workspace active."""
        public = self.public_form_key is not None
        if public_form_key is None or (public and public_form_key != self.public_form_key):
            return ErrorCode.FORM_NOT_FOUND
        if public and mode is FormMode.PROTECTED:
            return ErrorCode.UNAUTHORIZED
        if not accepting:
            return ErrorCode.FORM_DISABLED
        return None


@frozen
class CommitPlan:
    """Everything step 12 writes, in one transaction: all of it or none of it."""

    submission: Submission
    event: OutboxEvent
    idempotency: IdempotencyRecord | None
    quota: QuotaCharge | None
    check: FormCheck | None = None
    # The most bytes of files the workspace may keep, whatever their submissions' status;
    # None: no ceiling. The submission's files are counted against it either way.
    storage_limit: int | None = None

    @property
    def file_bytes(self) -> int:
        return sum(stored.size for stored in self.submission.files)


@frozen
class Committed:
    pass


@frozen
class QuotaReached:
    pass


@frozen
class IdempotencyTaken:
    """Another request committed with the same key first; nothing of this one was kept."""

    existing: IdempotencyRecord


@frozen
class FormRefused:
    """The form changed since steps 1 and 2 (FormCheck); nothing was written. `code` is
    the refusal those steps would give now: form_not_found, unauthorized (turned
    protected) or form_disabled."""

    code: ErrorCode


@frozen
class StorageFull:
    """The submission's files would take its workspace's stored files past the ceiling
    (CommitPlan.storage_limit); nothing was written."""


CommitResult = Committed | QuotaReached | StorageFull | IdempotencyTaken | FormRefused


@frozen
class HoneypotHit:
    """What a filled honeypot writes in place of a submission: one more to its form's
    count of the day, and its Idempotency-Key alone (so that a retry replays as a real
    one's would), after the same FormCheck as a commit. One transaction, one round trip
    and one durable write, as a commit is: a bot must not tell the two apart by how long
    the answer takes. Never a submission, an outbox row or a quota count."""

    form_id: str
    day: str  # YYYY-MM-DD, UTC
    idempotency: IdempotencyRecord | None
    check: FormCheck | None = None


# Nothing is written but for Committed.
HoneypotResult = Committed | IdempotencyTaken | FormRefused


@frozen
class PurgeCounts:
    """What one purge deleted."""

    idempotency: int
    outbox: int
    autoresponses: int = 0  # the autoresponder's records past AUTORESPONSE_RECORDS_KEPT


# Rows per DELETE: each batch is a short transaction of its own, so a large purge never
# holds its locks (SQLite's one write lock above all) for long.
PURGE_BATCH_SIZE = 5_000


@frozen
class PurgeCutoffs:
    """The rule of `purge`, once for every store: a row at a cutoff exactly is deleted."""

    idempotency: datetime  # records created at or before: IdempotencyRecord.expired
    outbox: datetime  # rows published at or before
    autoresponses: datetime  # confirmations' records queued at or before

    @classmethod
    def at(cls, now: datetime, outbox_retention: timedelta, batch_size: int) -> PurgeCutoffs:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if outbox_retention < timedelta(0):
            raise ValueError("outbox_retention must not be negative")
        return cls(
            idempotency=now - RETENTION,
            outbox=now - outbox_retention,
            autoresponses=now - AUTORESPONSE_RECORDS_KEPT,
        )


@frozen
class ErasedBatch:
    """What one `erase_flagged` call erased: the submissions, and the keys of their
    files, whose blobs are to be deleted now that no row links them."""

    submission_ids: tuple[str, ...]
    file_keys: tuple[str, ...]


@frozen
class TruncatedBatch:
    """What one `truncate_client_ips` call did: the submissions it went through, and
    how many of their client addresses it cut to their networks."""

    seen: int
    truncated: int


@frozen
class OutboxRow:
    event: OutboxEvent
    published_at: datetime | None = None


class ExistingSubmissions(Protocol):
    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        """Those of `submission_ids` that name a stored submission: the upload sweep's
        check that a blob is linked. At most MAX_EXISTING_IDS ids per call (ValueError)."""
        ...


class SubmissionRepository(Protocol):
    async def commit(self, plan: CommitPlan) -> CommitResult:
        """Writes the submission, its outbox row, the idempotency record, the quota
        count and its files' bytes (to its workspace's storage use, StorageFull past
        plan.storage_limit) atomically. Raises StorageUnavailable on a transient
        failure, leaving nothing behind."""
        ...

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult:
        """Writes a filled honeypot's hit (HoneypotHit), atomically: the form check
        first, then the key (a live holder is the answer, and nothing is written), then
        the count. Raises StorageUnavailable on a transient failure, leaving nothing."""
        ...

    async def honeypot_hits(self, form_id: str) -> dict[str, int]:
        """A form's filled honeypots by day (YYYY-MM-DD, UTC); days with none left out."""
        ...

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        """Records an idempotency key alone, with no submission: a filled honeypot's
        look-alike success, so that its retry replays like a real one. Returns None when
        the key was free (or held by an expired record, now replaced), else the live
        record holding it, writing nothing."""
        ...

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None: ...

    async def get(self, submission_id: str) -> Submission | None: ...

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        """Those of `submission_ids` that name a stored submission: the upload sweep's
        check that a blob is linked. At most MAX_EXISTING_IDS ids per call (ValueError)."""
        ...

    def iterate(
        self, form_id: str, chosen: SubmissionFilter = ALL, *, batch_size: int = 500
    ) -> AsyncIterator[Submission]:
        """Every submission of a form that `chosen` matches, oldest first, `batch_size` per
        query (ValueError below 1)."""
        ...

    async def page(self, query: SubmissionQuery) -> SubmissionPage:
        """Up to `query.limit` submissions of the form that `query.filter` matches
        (SubmissionFilter.matches is the rule), in the query's order after `query.after`,
        and whether more follow. One query, led by the form's id index."""
        ...

    async def status_counts(
        self, form_id: str, chosen: SubmissionFilter, limit: int
    ) -> dict[SubmissionStatus, int]:
        """How many of the form's submissions `chosen` matches (its statuses aside), for
        each status, each counted up to `limit` (ValueError below 1): one query, a status
        reading at most `limit` entries of the form's status index."""
        ...

    async def outbox(self, limit: int = 100) -> list[OutboxRow]: ...

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        """Deletes the idempotency records expired at `now` (created at or before
        now - RETENTION, as IdempotencyRecord.expired says) and the outbox rows
        published at or before now - outbox_retention, with their deliveries; never an
        unpublished row, whatever its age, nor one with a delivery still pending or
        parked as dead after that cutoff (so a dead delivery can be retried for as long
        as a published row is kept). Deletes `batch_size` rows per transaction until
        none is left, and returns the totals. Safe to run while serving, and twice at
        once: each row is counted by the purge that deleted it. ValueError for a
        batch_size below 1 or a negative retention."""
        ...

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        """Erases up to `limit` spam and unverified submissions created at or before
        `created_before`, oldest first, with their outbox rows (and those rows'
        deliveries), and gives their files' bytes back to their workspace's storage use:
        one transaction. Never a submission with an outbox row unpublished, or a
        delivery pending or dead. Fewer than `limit` erased: none was left (a
        concurrent erase may have taken some). ValueError for a limit below 1."""
        ...

    async def erase_expired(
        self, form_id: str, created_before: datetime, limit: int
    ) -> ErasedBatch:
        """A form's retention (docs/privacy.md): erases up to `limit` of its submissions,
        whatever their status, created at or before `created_before`, oldest first,
        exactly as `erase_flagged` erases (outbox rows and their deliveries with them,
        files' bytes given back, one transaction, never one whose event is still on its
        way), and their idempotency records with them. Fewer than `limit` erased: none
        was left. ValueError for a limit below 1."""
        ...

    async def with_address(self, workspace_id: str, spellings: Collection[str]) -> list[Submission]:
        """The workspace's submissions, oldest first, whose reply-to is one of
        `spellings` or whose data holds one of them in a text value, compared in lower
        case: the candidates of an erasure on request, which the caller confirms
        (domain/privacy.py's holds_address). Empty `spellings`: none."""
        ...

    async def forget_autoresponses(self, workspace_id: str, address: str) -> int:
        """Deletes the autoresponder's records of `address` on the workspace's forms
        (found by the hash its per-address limit counts, autoresponse_rules.py's
        address_hash), in one transaction: an erasure on request takes them with the
        person's submissions. How many went."""
        ...

    async def truncate_client_ips(self, created_before: datetime, limit: int) -> TruncatedBatch:
        """Cuts the client address of each of up to `limit` submissions created at or
        before `created_before` to its network (domain/privacy.py's
        client_network_address), going through the submissions in the order of their
        ids, which sort by time, from where the last call stopped; one transaction.
        Stops at the first younger submission: `seen` below `limit`, none is left for
        now. ValueError for a limit below 1."""
        ...

    async def erase_forwarded(self, limit: int) -> ErasedBatch:
        """Erases up to `limit` submissions of forward-only forms queued by the fan-out
        whose events are all fanned out and whose deliveries are all delivered or dead:
        their data, subject, reply address, client address and files, and their events'
        payloads (`erased_payload`), giving their files' bytes back; the rows stay, with
        their status and times. One transaction; a submission erased is dequeued."""
        ...

    async def release(self, release: Release) -> Released | None:
        """Accepts a spam or unverified submission (Release), atomically; one already
        accepted is answered as it is, nothing written, so concurrent releases of one
        submission queue one event. None: no such submission."""
        ...

    async def mark_spam(
        self,
        submission_id: str,
        lesson: Lesson | None = None,
        *,
        report: OutboxEvent | None = None,
    ) -> Submission | None:
        """Sets the status to spam, and nothing else: no event for the owner's
        destinations, the month's count kept; with a lesson, teaches it as spam, and
        `report` (Akismet told of it) is queued, in the same transaction
        (ports/triage.py). None: no such submission, and nothing written."""
        ...

    async def erase(self, erasure: Erasure) -> Erased | None:
        """Erases a submission (Erasure), atomically. None: no such submission (an
        erasure before this one's took it), and nothing written."""
        ...
