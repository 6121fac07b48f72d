"""Deliveries in memory: the relay's outbox fan-out, claims and outcomes (a form's
destinations: destinations.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

from attrs import evolve

from intake.adapters.delivery_rules import (
    CHAT_REMOVED,
    ENDPOINT_DISABLED,
    ENDPOINT_REMOVED,
    RECIPIENT_REMOVED,
    delivery_id,
    destinations,
    error_text,
)
from intake.adapters.memory import form_messages
from intake.adapters.memory.delivery_retries import InMemoryDeliveryRetries
from intake.adapters.memory.destinations import oldest_first
from intake.adapters.memory.tables import Tables, utc
from intake.domain.deliveries import (
    AttemptOutcome,
    Delivery,
    DeliveryAttempt,
    DeliveryPosition,
    DeliveryState,
    DestinationKind,
)
from intake.domain.destination_limits import (
    CONSENT_LOOKBACK,
    CONSENT_WINDOWS,
    TEST_LOOKBACK,
    SendThrottled,
    wait_for_test,
)
from intake.domain.form_messages import DEFAULT_AUTORESPONSE_HOURLY_LIMIT, is_autoresponse
from intake.domain.model import EventType, OutboxEvent
from intake.ports.deliveries import (
    Claim,
    ClaimedDelivery,
    DeliveryCounts,
    DeliveryRecord,
)
from intake.ports.submissions import OutboxRow

# As delivery_records.RECENT_DIRECT names them.
TEST_EVENTS = frozenset({EventType.WEBHOOK_TEST, EventType.MAIL_TEST, EventType.CHAT_TEST})


class InMemoryDeliveries(InMemoryDeliveryRetries):
    """The same rules as the SQL stores, step for step, so the contract suite holds the
    fake to them: see the PostgreSQL adapter for the reasons."""

    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)

    async def fan_out(
        self, now: datetime, limit: int, autoresponse_limit: int = DEFAULT_AUTORESPONSE_HOURLY_LIMIT
    ) -> int:
        unpublished = sorted(
            (row for row in self._t.outbox.values() if row.published_at is None),
            key=lambda row: (row.event.created_at, row.event.event_id),
        )[:limit]
        for row in unpublished:
            event = row.event
            endpoints = [e for e in self._t.endpoints.values() if e.form_id == event.form_id]
            recipients = [r for r in self._t.recipients.values() if r.form_id == event.form_id]
            if not form_messages.mailed(self._t, event.form_id):
                recipients = []
            chats = sorted(
                (c for c in self._t.chats.values() if c.form_id == event.form_id),
                key=lambda c: oldest_first(c.created_at, c.destination_id),
            )
            wanted = destinations(event, endpoints, recipients, chats)
            wanted += form_messages.queue_extras(self._t, event, now, autoresponse_limit)
            for kind, destination_id in wanted:
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
            if not self._workspace_active(delivery):  # held until it is active again
                continue
            self._t.leases[delivery.delivery_id] = leased_until
            kind, destination_id = delivery.kind, delivery.destination_id
            claimed.append(
                ClaimedDelivery(
                    delivery=current,
                    event=self._t.outbox[delivery.event_id].event,
                    endpoint=self._t.endpoints.get(destination_id)
                    if kind is DestinationKind.WEBHOOK
                    else None,
                    recipient=self._t.recipients.get(destination_id)
                    if kind is DestinationKind.EMAIL
                    else None,
                    leased_until=leased_until,
                    chat=self._t.chats.get(destination_id)
                    if kind is DestinationKind.CHAT
                    else None,
                )
            )
        return Claim(claimed, parked=parked)

    def _workspace_active(self, delivery: Delivery) -> bool:
        workspace = self._t.workspaces.get(self._t.outbox[delivery.event_id].event.workspace_id)
        return workspace is not None and workspace.active

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
        if delivery.kind is DestinationKind.CHAT:
            return CHAT_REMOVED if delivery.destination_id not in self._t.chats else None
        if delivery.kind is DestinationKind.AKISMET:
            return None  # the operator's one Akismet: never removed by an owner
        if is_autoresponse(delivery.destination_id):
            return None  # a confirmation to the submitter, whether or not its record stays
        return RECIPIENT_REMOVED if delivery.destination_id not in self._t.recipients else None

    def _park(self, delivery: Delivery, now: datetime, reason: str) -> None:
        self._t.deliveries[delivery.delivery_id] = evolve(
            delivery, state=DeliveryState.DEAD, next_attempt_at=None, dead_at=now, last_error=reason
        )
        self._t.leases.pop(delivery.delivery_id, None)

    async def record_success(
        self, delivery_id: str, now: datetime, status_code: int | None = None
    ) -> None:
        delivery = self._t.deliveries.get(delivery_id)
        if delivery is None or delivery.state is DeliveryState.DELIVERED:
            return
        self._attempted(delivery_id, now, AttemptOutcome.DELIVERED, status_code, None)
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
        self,
        delivery_id: str,
        now: datetime,
        error: str,
        next_attempt_at: datetime | None,
        status_code: int | None = None,
    ) -> None:
        delivery = self._t.deliveries.get(delivery_id)
        if delivery is None or delivery.state is not DeliveryState.PENDING:
            return
        self._attempted(delivery_id, now, AttemptOutcome.FAILED, status_code, error_text(error))
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

    def _attempted(
        self,
        delivery_id: str,
        now: datetime,
        outcome: AttemptOutcome,
        status_code: int | None,
        error: str | None,
    ) -> None:
        attempt = DeliveryAttempt(delivery_id, utc(now), outcome, status_code, error)
        self._t.attempts.setdefault(delivery_id, []).append(attempt)

    def _record(self, delivery: Delivery) -> DeliveryRecord:
        event = self._t.outbox[delivery.event_id].event
        return DeliveryRecord(
            delivery=delivery,
            event_type=event.event_type,
            submission_id=event.submission_id,
            form_id=event.form_id,
            workspace_id=event.workspace_id,
            attempts=tuple(self._t.attempts.get(delivery.delivery_id, ())),
        )

    async def get_delivery(self, delivery_id: str) -> DeliveryRecord | None:
        delivery = self._t.deliveries.get(delivery_id)
        return None if delivery is None else self._record(delivery)

    async def submission_deliveries(self, submission_id: str) -> list[DeliveryRecord]:
        tables = self._t
        events = {
            event_id
            for event_id, row in tables.outbox.items()
            if row.event.submission_id == submission_id
        }
        found = [d for d in tables.deliveries.values() if d.event_id in events]
        found.sort(key=lambda d: (d.created_at, d.delivery_id))
        return [self._record(d) for d in found]

    async def endpoint_deliveries(
        self,
        endpoint_id: str,
        *,
        state: DeliveryState | None = None,
        after: DeliveryPosition | None = None,
        limit: int = 50,
    ) -> list[DeliveryRecord]:
        past = None if after is None else (after.created_at, after.delivery_id)
        found = [
            d
            for d in self._t.deliveries.values()
            if d.kind is DestinationKind.WEBHOOK
            and d.destination_id == endpoint_id
            and state in (None, d.state)
            and (past is None or (d.created_at, d.delivery_id) < past)
        ]
        found.sort(key=lambda d: (d.created_at, d.delivery_id), reverse=True)
        return [self._record(d) for d in found[:limit]]

    async def queue_direct(
        self,
        event: OutboxEvent,
        kind: DestinationKind,
        destination_id: str,
        now: datetime,
        *,
        throttled: bool = False,
    ) -> Delivery:
        tables = self._t
        at = utc(now)
        if throttled:  # no await: counted and queued as one step on the loop
            wait = wait_for_test(self._recent_tests(kind, destination_id, at), at)
            if wait is None and event.event_type is EventType.MAIL_CONFIRM:
                consents = [
                    row.event.created_at
                    for row in tables.outbox.values()
                    if row.event.event_type is EventType.MAIL_CONFIRM
                    and row.event.workspace_id == event.workspace_id
                    and row.event.created_at > at - CONSENT_LOOKBACK
                ]
                wait = wait_for_test(consents, at, CONSENT_WINDOWS)
            if wait is not None:
                raise SendThrottled(wait)
        stored = evolve(event, created_at=utc(event.created_at))
        tables.outbox[event.event_id] = OutboxRow(stored, published_at=at)
        new = delivery_id(event.event_id, kind, destination_id)
        delivery = Delivery(
            delivery_id=new,
            event_id=event.event_id,
            kind=kind,
            destination_id=destination_id,
            state=DeliveryState.PENDING,
            attempts=0,
            next_attempt_at=at,
            created_at=at,
        )
        tables.deliveries[new] = delivery
        tables.wakeup.ring()
        return delivery

    def _recent_tests(
        self, kind: DestinationKind, destination_id: str, now: datetime
    ) -> list[datetime]:
        since = now - TEST_LOOKBACK
        return [
            d.created_at
            for d in self._t.deliveries.values()
            if d.kind is kind
            and d.destination_id == destination_id
            and d.created_at > since
            and self._t.outbox[d.event_id].event.event_type in TEST_EVENTS
        ]
