"""A store in memory. Each method finishes without awaiting anything in between, so on
one event loop every call is atomic, as a transaction is in the real stores (but for
wait_for_events, which only waits)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from datetime import UTC, datetime, timedelta

from attrs import evolve

from intake.adapters.delivery import (
    ENDPOINT_DISABLED,
    ENDPOINT_REMOVED,
    RECIPIENT_REMOVED,
    Wakeup,
    delivery_id,
    destinations,
    error_text,
)
from intake.adapters.sql_rows import check_secret, existing_query_ids
from intake.domain.delivery import (
    Delivery,
    DeliveryState,
    DestinationKind,
    NotificationRecipient,
    WebhookEndpoint,
)
from intake.domain.errors import ErrorCode, StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import ApiKey, Form, FormMode, Submission, SubmissionStatus, Workspace
from intake.ports.delivery import Claim, ClaimedDelivery, DeliveryCounts
from intake.ports.forms import FormContext
from intake.ports.submissions import (
    PURGE_BATCH_SIZE,
    CommitPlan,
    CommitResult,
    Committed,
    ErasedBatch,
    FormCheck,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
    IdempotencyTaken,
    OutboxRow,
    PurgeCounts,
    PurgeCutoffs,
    QuotaReached,
    StorageFull,
)

# What spam retention erases (erase_flagged).
_FLAGGED = frozenset({SubmissionStatus.SPAM, SubmissionStatus.UNVERIFIED})


class _Tables:
    def __init__(self) -> None:
        self.workspaces: dict[str, Workspace] = {}
        self.usage: dict[tuple[str, str], int] = {}
        self.storage: dict[str, int] = {}  # workspace id: bytes of its stored files
        self.forms: dict[str, Form] = {}
        self.form_by_key: dict[str, str] = {}
        self.keys: dict[str, ApiKey] = {}
        self.key_by_hash: dict[bytes, str] = {}
        self.submissions: dict[str, Submission] = {}
        self.outbox: dict[str, OutboxRow] = {}
        self.idempotency: dict[tuple[str, str], IdempotencyRecord] = {}
        self.honeypot_hits: dict[tuple[str, str], int] = {}  # (form_id, day): count
        self.endpoints: dict[str, WebhookEndpoint] = {}
        self.recipients: dict[str, NotificationRecipient] = {}
        self.deliveries: dict[str, Delivery] = {}
        self.leases: dict[str, datetime] = {}  # delivery id: leased until
        self.secrets: dict[str, bytes] = {}
        # Rung by every commit, for a relay waiting on this store.
        self.wakeup = Wakeup()
        self.closed = False


class _Repository:
    """Reaches the tables only while the store is open, as a real store's connection."""

    def __init__(self, tables: _Tables) -> None:
        self._tables = tables

    @property
    def _t(self) -> _Tables:
        if self._tables.closed:
            raise StorageUnavailable("closed")
        return self._tables


def _utc(moment: datetime) -> datetime:
    """As the SQL stores keep times: the moment, in UTC; a naive time is not guessed at."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"a stored time must be timezone-aware: {moment!r}")
    return moment.astimezone(UTC)


class InMemoryWorkspaces(_Repository):
    def __init__(self, tables: _Tables) -> None:
        super().__init__(tables)

    async def add(self, workspace: Workspace) -> None:
        self._t.workspaces[workspace.workspace_id] = workspace

    async def get(self, workspace_id: str) -> Workspace | None:
        return self._t.workspaces.get(workspace_id)

    async def update(self, workspace: Workspace) -> None:
        # As an SQL UPDATE: an unknown id changes nothing (it is not an insert).
        if workspace.workspace_id in self._t.workspaces:
            self._t.workspaces[workspace.workspace_id] = workspace

    async def list(self) -> list[Workspace]:
        return sorted(self._t.workspaces.values(), key=lambda w: w.workspace_id)

    async def usage(self, workspace_id: str, period: str) -> int:
        return self._t.usage.get((workspace_id, period), 0)

    async def storage_used(self, workspace_id: str) -> int:
        return self._t.storage.get(workspace_id, 0)

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        tables = self._t
        return [
            (tables.workspaces[workspace_id], count)
            for (workspace_id, at), count in sorted(tables.usage.items())
            if at == period and count > 0 and workspace_id in tables.workspaces
        ]


class InMemoryForms(_Repository):
    def __init__(self, tables: _Tables) -> None:
        super().__init__(tables)

    async def add(self, form: Form) -> None:
        self._t.forms[form.form_id] = form
        self._t.form_by_key[form.public_form_key] = form.form_id

    async def get(self, form_id: str) -> Form | None:
        return self._t.forms.get(form_id)

    async def update(self, form: Form) -> None:
        old = self._t.forms.get(form.form_id)
        if old is None:
            return  # as an SQL UPDATE: an unknown id changes nothing
        if old.public_form_key != form.public_form_key:
            del self._t.form_by_key[old.public_form_key]
        self._t.forms[form.form_id] = form
        self._t.form_by_key[form.public_form_key] = form.form_id

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        forms = [f for f in self._t.forms.values() if workspace_id in (None, f.workspace_id)]
        return sorted(forms, key=lambda f: f.form_id)

    def _context(self, form_id: str | None) -> FormContext | None:
        form = self._t.forms.get(form_id) if form_id is not None else None
        if form is None:
            return None
        return FormContext(form, self._t.workspaces[form.workspace_id])

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return self._context(self._t.form_by_key.get(public_form_key))

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return self._context(form_id)


class InMemoryApiKeys(_Repository):
    def __init__(self, tables: _Tables) -> None:
        super().__init__(tables)

    async def add(self, key: ApiKey) -> None:
        self._t.keys[key.key_id] = key
        self._t.key_by_hash[key.key_hash] = key.key_id

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        key_id = self._t.key_by_hash.get(key_hash)
        return self._t.keys.get(key_id) if key_id is not None else None

    async def get(self, key_id: str) -> ApiKey | None:
        return self._t.keys.get(key_id)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        key = self._t.keys.get(key_id)
        if key is None:
            return False
        if key.revoked_at is None:
            self._t.keys[key_id] = evolve(key, revoked_at=when)
        return True

    async def list(self, workspace_id: str) -> list[ApiKey]:
        keys = [k for k in self._t.keys.values() if k.workspace_id == workspace_id]
        return sorted(keys, key=lambda k: (k.created_at, k.key_id))


class InMemorySubmissions(_Repository):
    def __init__(self, tables: _Tables) -> None:
        super().__init__(tables)
        # Failure injection: the next N commits raise StorageUnavailable.
        self.fail_commits = 0

    async def commit(self, plan: CommitPlan) -> CommitResult:
        submission = evolve(plan.submission, created_at=_utc(plan.submission.created_at))
        event = evolve(plan.event, created_at=_utc(plan.event.created_at))
        if plan.check is not None and (refused := self._form_refusal(plan.check)):
            return FormRefused(refused)
        record = plan.idempotency
        if record is not None:
            existing = self._t.idempotency.get((record.scope, record.key))
            if existing is not None and not existing.expired(record.created_at):
                return IdempotencyTaken(existing)
        quota = plan.quota
        used = 0
        if quota is not None:
            used = self._t.usage.get((quota.workspace_id, quota.period), 0)
            if used >= quota.ceiling:
                return QuotaReached()
        stored_bytes = self._t.storage.get(submission.workspace_id, 0) + plan.file_bytes
        if plan.file_bytes and plan.storage_limit is not None and stored_bytes > plan.storage_limit:
            return StorageFull()
        if self.fail_commits:
            # The injected failure strikes the writes, as the real stores' does: after
            # the transaction's checks have answered, before anything is kept.
            self.fail_commits -= 1
            raise StorageUnavailable("injected failure")
        if quota is not None:
            self._t.usage[(quota.workspace_id, quota.period)] = used + 1
        if plan.file_bytes:
            self._t.storage[submission.workspace_id] = stored_bytes
        if record is not None:
            self._t.idempotency[(record.scope, record.key)] = record
        self._t.submissions[submission.submission_id] = submission
        self._t.outbox[event.event_id] = OutboxRow(event)
        self._t.wakeup.ring()
        return Committed()

    def _form_refusal(self, check: FormCheck) -> ErrorCode | None:
        form = self._t.forms.get(check.form_id)
        if form is None:
            return check.refusal(None, FormMode.PUBLIC, accepting=False)
        workspace = self._t.workspaces.get(form.workspace_id)
        accepting = form.enabled and workspace is not None and workspace.active
        return check.refusal(form.public_form_key, form.mode, accepting=accepting)

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult:
        if hit.check is not None and (refused := self._form_refusal(hit.check)):
            return FormRefused(refused)
        if hit.idempotency is not None:
            holder = await self.claim_key(hit.idempotency)
            if holder is not None:
                return IdempotencyTaken(holder)
        tally = (hit.form_id, hit.day)
        self._t.honeypot_hits[tally] = self._t.honeypot_hits.get(tally, 0) + 1
        return Committed()

    async def honeypot_hits(self, form_id: str) -> dict[str, int]:
        hits = self._t.honeypot_hits.items()
        return {day: count for (form, day), count in sorted(hits) if form == form_id}

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        existing = self._t.idempotency.get((record.scope, record.key))
        if existing is not None and not existing.expired(record.created_at):
            return existing
        self._t.idempotency[(record.scope, record.key)] = record
        return None

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None:
        record = self._t.idempotency.get((scope, key))
        if record is None or record.created_at <= not_before:
            return None
        return record

    async def get(self, submission_id: str) -> Submission | None:
        return self._t.submissions.get(submission_id)

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        submissions = self._t.submissions
        return {i for i in existing_query_ids(submission_ids) if i in submissions}

    async def iterate(
        self,
        form_id: str,
        status: SubmissionStatus | None = None,
        *,
        batch_size: int = 500,
    ) -> AsyncIterator[Submission]:
        rows = sorted(
            (
                s
                for s in self._t.submissions.values()
                if s.form_id == form_id and status in (None, s.status)
            ),
            key=lambda s: s.submission_id,
        )
        for row in rows:
            yield row

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return sorted(self._t.outbox.values(), key=lambda r: r.event.event_id)[:limit]

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        # No lock to hold here: one pass, atomic like every method of this store.
        cutoffs = PurgeCutoffs.at(now, outbox_retention, batch_size)
        expired = [k for k, r in self._t.idempotency.items() if r.created_at <= cutoffs.idempotency]
        published = [
            event_id
            for event_id, row in self._t.outbox.items()
            if row.published_at is not None
            and row.published_at <= cutoffs.outbox
            and not self._deliveries_kept(event_id, cutoffs.outbox)
        ]
        for key in expired:
            del self._t.idempotency[key]
        for event_id in published:
            del self._t.outbox[event_id]
        # A row's deliveries go with it, as the SQL stores' ON DELETE CASCADE does.
        gone = set(published)
        for each in [d for d in self._t.deliveries.values() if d.event_id in gone]:
            del self._t.deliveries[each.delivery_id]
            self._t.leases.pop(each.delivery_id, None)
        return PurgeCounts(idempotency=len(expired), outbox=len(published))

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        cutoff = _utc(created_before)
        flagged = sorted(
            (
                s
                for s in self._t.submissions.values()
                if s.status in _FLAGGED and s.created_at <= cutoff and self._delivered(s)
            ),
            key=lambda s: (s.created_at, s.submission_id),
        )[:limit]
        gone = {s.submission_id for s in flagged}
        events = {i for i, row in self._t.outbox.items() if row.event.submission_id in gone}
        for event_id in events:
            del self._t.outbox[event_id]
        for each in [d for d in self._t.deliveries.values() if d.event_id in events]:
            del self._t.deliveries[each.delivery_id]
            self._t.leases.pop(each.delivery_id, None)
        for sub in flagged:
            del self._t.submissions[sub.submission_id]
            freed = sum(f.size for f in sub.files)
            used = self._t.storage.get(sub.workspace_id, 0)
            self._t.storage[sub.workspace_id] = max(used - freed, 0)
        return ErasedBatch(
            tuple(s.submission_id for s in flagged),
            tuple(f.key for s in flagged for f in s.files),
        )

    def _delivered(self, submission: Submission) -> bool:
        """Every outbox row of the submission published, and none of their deliveries
        pending or dead."""
        rows = [
            r for r in self._t.outbox.values() if r.event.submission_id == submission.submission_id
        ]
        events = {r.event.event_id for r in rows}
        return all(r.published_at is not None for r in rows) and not any(
            d.event_id in events and d.state is not DeliveryState.DELIVERED
            for d in self._t.deliveries.values()
        )

    def _deliveries_kept(self, event_id: str, cutoff: datetime) -> bool:
        """A delivery still to be made, or parked as dead after the cutoff, keeps its
        event's row (and so itself): a purge never drops undelivered work unseen."""
        return any(
            d.event_id == event_id
            and (
                d.state is DeliveryState.PENDING
                or (d.state is DeliveryState.DEAD and d.dead_at is not None and d.dead_at > cutoff)
            )
            for d in self._t.deliveries.values()
        )


def _oldest_first(created_at: datetime | None, item_id: str) -> tuple[bool, datetime, str]:
    # As the SQL stores' ORDER BY created_at NULLS FIRST, id.
    return (created_at is not None, created_at or datetime.min.replace(tzinfo=UTC), item_id)


class InMemoryDestinations(_Repository):
    def __init__(self, tables: _Tables) -> None:
        super().__init__(tables)

    async def add_endpoint(self, endpoint: WebhookEndpoint) -> None:
        self._t.endpoints[endpoint.endpoint_id] = endpoint

    async def get_endpoint(self, endpoint_id: str) -> WebhookEndpoint | None:
        return self._t.endpoints.get(endpoint_id)

    async def list_endpoints(self, form_id: str) -> list[WebhookEndpoint]:
        endpoints = [e for e in self._t.endpoints.values() if e.form_id == form_id]
        return sorted(endpoints, key=lambda e: _oldest_first(e.created_at, e.endpoint_id))

    async def remove_endpoint(self, endpoint_id: str) -> bool:
        return self._t.endpoints.pop(endpoint_id, None) is not None

    async def disable_endpoint(self, endpoint_id: str, when: datetime) -> None:
        endpoint = self._t.endpoints.get(endpoint_id)
        if endpoint is not None and endpoint.disabled_at is None:  # the first time stays
            self._t.endpoints[endpoint_id] = evolve(endpoint, disabled_at=when)

    async def add_recipient(self, recipient: NotificationRecipient) -> None:
        if any(
            r.form_id == recipient.form_id and r.email == recipient.email
            for r in self._t.recipients.values()
        ):
            raise ValueError("already a recipient")
        self._t.recipients[recipient.recipient_id] = recipient

    async def list_recipients(self, form_id: str) -> list[NotificationRecipient]:
        recipients = [r for r in self._t.recipients.values() if r.form_id == form_id]
        return sorted(recipients, key=lambda r: _oldest_first(r.created_at, r.recipient_id))

    async def remove_recipient(self, recipient_id: str) -> bool:
        return self._t.recipients.pop(recipient_id, None) is not None


class InMemoryDeliveries(_Repository):
    """The same rules as the SQL stores, step for step, so the contract suite holds the
    fake to them: see the PostgreSQL adapter for the reasons."""

    def __init__(self, tables: _Tables) -> None:
        super().__init__(tables)

    async def fan_out(self, now: datetime, limit: int) -> int:
        unpublished = sorted(
            (row for row in self._t.outbox.values() if row.published_at is None),
            key=lambda row: (row.event.created_at, row.event.event_id),
        )[:limit]
        for row in unpublished:
            event = row.event
            endpoints = [e for e in self._t.endpoints.values() if e.form_id == event.form_id]
            recipients = [r for r in self._t.recipients.values() if r.form_id == event.form_id]
            for kind, destination_id in destinations(event.event_type, endpoints, recipients):
                new = delivery_id(event.event_id, kind, destination_id)
                self._t.deliveries.setdefault(
                    new,
                    Delivery(
                        delivery_id=new,
                        event_id=event.event_id,
                        kind=kind,
                        destination_id=destination_id,
                        state=DeliveryState.PENDING,
                        attempts=0,
                        next_attempt_at=now,
                        created_at=now,
                    ),
                )
            self._t.outbox[event.event_id] = evolve(row, published_at=now)
        return len(unpublished)

    async def claim_due(self, now: datetime, lease: timedelta, limit: int) -> Claim:
        due = sorted(
            (d for d in self._t.deliveries.values() if self._due(d, now)),
            key=lambda d: (d.next_attempt_at, d.delivery_id),
        )
        # The first `limit` due are looked at for a destination gone; then the first
        # `limit` whose destination is there are leased.
        parked = 0
        for delivery in due[:limit]:
            reason = self._gone(delivery)
            if reason is not None:
                self._park(delivery, now, reason)
                parked += 1
        leased_until = now + lease
        claimed: list[ClaimedDelivery] = []
        for delivery in due:
            if len(claimed) == limit:
                break
            current = self._t.deliveries[delivery.delivery_id]
            if current.state is not DeliveryState.PENDING or self._gone(current) is not None:
                continue
            self._t.leases[delivery.delivery_id] = leased_until
            webhook = delivery.kind is DestinationKind.WEBHOOK
            claimed.append(
                ClaimedDelivery(
                    delivery=current,
                    event=self._t.outbox[delivery.event_id].event,
                    endpoint=self._t.endpoints[delivery.destination_id] if webhook else None,
                    recipient=None if webhook else self._t.recipients[delivery.destination_id],
                    leased_until=leased_until,
                )
            )
        return Claim(claimed, parked=parked)

    def _due(self, delivery: Delivery, now: datetime) -> bool:
        leased_until = self._t.leases.get(delivery.delivery_id)
        return (
            delivery.state is DeliveryState.PENDING
            and delivery.next_attempt_at is not None
            and delivery.next_attempt_at <= now
            and (leased_until is None or leased_until <= now)
        )

    def _gone(self, delivery: Delivery) -> str | None:
        if delivery.kind is DestinationKind.WEBHOOK:
            endpoint = self._t.endpoints.get(delivery.destination_id)
            if endpoint is None:
                return ENDPOINT_REMOVED
            return None if endpoint.enabled else ENDPOINT_DISABLED
        return RECIPIENT_REMOVED if delivery.destination_id not in self._t.recipients else None

    def _park(self, delivery: Delivery, now: datetime, reason: str) -> None:
        self._t.deliveries[delivery.delivery_id] = evolve(
            delivery, state=DeliveryState.DEAD, next_attempt_at=None, dead_at=now, last_error=reason
        )
        self._t.leases.pop(delivery.delivery_id, None)

    async def record_success(self, delivery_id: str, now: datetime) -> None:
        delivery = self._t.deliveries.get(delivery_id)
        if delivery is None or delivery.state is DeliveryState.DELIVERED:
            return
        self._t.deliveries[delivery_id] = evolve(
            delivery,
            state=DeliveryState.DELIVERED,
            attempts=delivery.attempts + 1,
            next_attempt_at=None,
            delivered_at=now,
            dead_at=None,
        )
        self._t.leases.pop(delivery_id, None)

    async def record_failure(
        self, delivery_id: str, now: datetime, error: str, next_attempt_at: datetime | None
    ) -> None:
        delivery = self._t.deliveries.get(delivery_id)
        if delivery is None or delivery.state is not DeliveryState.PENDING:
            return
        self._t.deliveries[delivery_id] = evolve(
            delivery,
            state=DeliveryState.PENDING if next_attempt_at is not None else DeliveryState.DEAD,
            attempts=delivery.attempts + 1,
            next_attempt_at=next_attempt_at,
            last_error=error_text(error),
            dead_at=None if next_attempt_at is not None else now,
        )
        self._t.leases.pop(delivery_id, None)

    async def list_deliveries(self, *, dead_only: bool = False, limit: int = 100) -> list[Delivery]:
        deliveries = [
            d for d in self._t.deliveries.values() if not dead_only or d.state is DeliveryState.DEAD
        ]
        deliveries.sort(key=lambda d: (d.created_at, d.delivery_id), reverse=True)
        return deliveries[:limit]

    async def retry_dead(self, event_id: str, now: datetime) -> int | None:
        if event_id not in self._t.outbox:
            return None
        dead = [
            d
            for d in self._t.deliveries.values()
            if d.event_id == event_id and d.state is DeliveryState.DEAD
        ]
        for delivery in dead:
            self._t.deliveries[delivery.delivery_id] = evolve(
                delivery, state=DeliveryState.PENDING, attempts=0, next_attempt_at=now, dead_at=None
            )
            self._t.leases.pop(delivery.delivery_id, None)
        return len(dead)

    async def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        times = [
            row.event.created_at for row in self._t.outbox.values() if row.published_at is None
        ]
        times += [
            d.created_at for d in self._t.deliveries.values() if d.state is DeliveryState.PENDING
        ]
        return len(times), min(times, default=None)

    async def counts(self) -> DeliveryCounts:
        tables = self._t
        states = [d.state for d in tables.deliveries.values()]
        return DeliveryCounts(
            unpublished=sum(1 for row in tables.outbox.values() if row.published_at is None),
            pending=states.count(DeliveryState.PENDING),
            delivered=states.count(DeliveryState.DELIVERED),
            dead=states.count(DeliveryState.DEAD),
        )

    async def wait_for_events(self, timeout: float) -> None:  # noqa: ASYNC109 - a poll period
        await self._t.wakeup.wait(timeout)


class InMemorySecrets(_Repository):
    def __init__(self, tables: _Tables) -> None:
        super().__init__(tables)

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        check_secret(name, candidate)
        return self._t.secrets.setdefault(name, bytes(candidate))


class InMemoryStore:
    def __init__(self) -> None:
        self._tables = _Tables()
        self.workspaces = InMemoryWorkspaces(self._tables)
        self.forms = InMemoryForms(self._tables)
        self.api_keys = InMemoryApiKeys(self._tables)
        self.submissions = InMemorySubmissions(self._tables)
        self.destinations = InMemoryDestinations(self._tables)
        self.deliveries = InMemoryDeliveries(self._tables)
        self.secrets = InMemorySecrets(self._tables)

    async def migrate(self) -> list[str]:
        return []

    @property
    def closed(self) -> bool:
        return self._tables.closed

    async def ping(self) -> None:
        if self.closed:
            raise StorageUnavailable("closed")

    async def close(self) -> None:
        self._tables.closed = True

    # For tests: what is stored, without going through a port.
    def count_submissions(self) -> int:
        return len(self._tables.submissions)

    def count_outbox(self) -> int:
        return len(self._tables.outbox)

    def outbox_for(self, submission_id: str) -> list[OutboxRow]:
        return [r for r in self._tables.outbox.values() if r.event.submission_id == submission_id]
