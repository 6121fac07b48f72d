"""The relay: takes committed outbox events to the forms' webhooks and mail recipients.

One round (`run_once`) fans every unpublished outbox row out into one delivery per
destination, leases the deliveries that are due, sends them (a few at a time), and
records each result: delivered, failed and due again later on the retry schedule, or
parked as dead. A relay that dies mid-round records nothing; its leases expire and the
next round (of any relay) sends those deliveries again, with the same webhook-id, so
delivery is at least once and receivers can drop the duplicate. docs/relay.md tells the
whole story.

An event that tells of uploaded files carries a download link for each; the link made at
commit time may have expired by the time a late retry goes out, so the relay makes each
one afresh as it sends (webhook and mail alike). An event without files is sent exactly
as it was stored.
"""

from __future__ import annotations

import enum
import json
import logging
import random
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

import anyio
from attrs import frozen

from intake.domain import webhooks
from intake.domain.deliveries import DEFAULT_MAIL_FROM, DestinationKind, next_attempt_at
from intake.domain.errors import StorageUnavailable
from intake.domain.mail_tests import render_test_mail
from intake.domain.model import EventType
from intake.domain.notifications import render_notification
from intake.domain.signing import DownloadSigner
from intake.ports.clock import Clock
from intake.ports.deliveries import ClaimedDelivery
from intake.ports.senders import Mailer, MailRejected, MailUnavailable, WebhookSender
from intake.ports.store import Store

log = logging.getLogger("intake.relay")

NO_MAILER = "no SMTP server is configured (INTAKE_SMTP_URL)"
GONE = "HTTP 410 Gone: the endpoint is now disabled"
# The sender of notification mail when none is configured (INTAKE_MAIL_FROM).


@frozen
class RelayRound:
    """What one or more rounds did: outbox rows fanned out, and deliveries attempted by
    their outcome (`failed`: will be tried again)."""

    fanned_out: int = 0
    delivered: int = 0
    failed: int = 0
    dead: int = 0

    def __add__(self, other: RelayRound) -> RelayRound:
        return RelayRound(
            fanned_out=self.fanned_out + other.fanned_out,
            delivered=self.delivered + other.delivered,
            failed=self.failed + other.failed,
            dead=self.dead + other.dead,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "delivered": self.delivered,
            "failed": self.failed,
            "dead": self.dead,
            "fanned_out": self.fanned_out,
        }


class _Outcome(enum.Enum):
    DELIVERED = "delivered"
    FAILED = "failed"
    DEAD = "dead"
    # Not attempted, or the result could not be recorded: the lease runs out and the
    # delivery comes round again.
    LEFT = "left"


class Relay:
    def __init__(
        self,
        store: Store,
        webhook_sender: WebhookSender,
        mailer: Mailer | None,
        clock: Clock,
        *,
        mail_from: str = DEFAULT_MAIL_FROM,
        base_url: str | None = None,
        lease: timedelta = timedelta(minutes=2),
        lease_margin: timedelta = timedelta(seconds=30),
        batch: int = 100,
        concurrency: int = 16,
        poll_interval: timedelta = timedelta(seconds=5),
        jitter: Callable[[], float] = random.random,
        signer: DownloadSigner | None = None,
    ) -> None:
        if batch < 1 or concurrency < 1:
            raise ValueError("batch and concurrency must be at least 1")
        if lease <= lease_margin:
            raise ValueError("the lease must be longer than the lease margin")
        self._store = store
        self._webhooks = webhook_sender
        self._mailer = mailer
        self._clock = clock
        self._mail_from = mail_from
        self._base_url = base_url
        self._lease = lease
        # A delivery is not started with less than this left on its lease: a send that
        # outlived its lease could run beside another relay's send of the same delivery.
        # More than the webhook sender's whole-exchange timeout (15 s).
        self._lease_margin = lease_margin
        self._batch = batch
        self._concurrency = concurrency
        # The shortest retry delay is 5 s, so waking at least this often (or when a new
        # event is committed) finds every delivery soon after it is due.
        self._poll_interval = poll_interval
        self._jitter = jitter
        # Without one, file links are sent as the event holds them.
        self._signer = signer
        self._progress: Callable[[RelayRound], None] | None = None

    def report_progress(self, callback: Callable[[RelayRound], None]) -> None:
        """Has `callback` told what the relay does as it happens: each fan-out, and
        each delivery attempt once recorded (the relay's metrics count them)."""
        self._progress = callback

    def _report(self, progress: RelayRound) -> None:
        if self._progress is not None and progress != RelayRound():
            self._progress(progress)

    async def run_once(self, stop: anyio.Event | None = None) -> RelayRound:
        """Fans out every unpublished event, then delivers what is due until nothing is
        left due. With `stop` set, sends in flight finish and no new one starts."""
        totals = RelayRound(fanned_out=await self._fan_out())
        self._report(totals)
        # One limiter for the whole round, so `concurrency` bounds the sends in flight.
        limiter = anyio.CapacityLimiter(self._concurrency)
        while stop is None or not stop.is_set():
            claim = await self._store.deliveries.claim_due(
                self._clock.now(), self._lease, self._batch
            )
            if claim.parked:
                # Dead without an attempt, their destination gone: dead all the same.
                log.info(
                    "deliveries parked: their destination is gone", extra={"count": claim.parked}
                )
                totals += RelayRound(dead=claim.parked)
                self._report(RelayRound(dead=claim.parked))
            if claim.leased:
                totals += await self._deliver_all(claim.leased, limiter, stop)
            # A short batch was the last of what is due. What failed just now is due
            # again no sooner than 5 s from now, and what is leased is not claimed twice,
            # so this loop ends.
            if len(claim.leased) < self._batch:
                break
        return totals

    async def run_forever(self, stop: anyio.Event) -> RelayRound:
        """Rounds until `stop` is set, waiting between them for a new event or the poll
        interval. A storage outage is logged and waited out. Returns the totals."""
        totals = RelayRound()
        while not stop.is_set():
            try:
                totals += await self.run_once(stop)
            except StorageUnavailable as error:
                log.warning(
                    "relay round stopped: the database is unavailable",
                    extra={"error": str(error) or type(error).__name__},
                )
            if not stop.is_set():
                await self._idle(stop)
        return totals

    async def _idle(self, stop: anyio.Event) -> None:
        timeout = self._poll_interval.total_seconds()
        async with anyio.create_task_group() as group:

            async def wake_on_event() -> None:
                try:
                    await self._store.new_events.wait(timeout)
                except StorageUnavailable:
                    await anyio.sleep(timeout)  # then the next round reports the outage
                group.cancel_scope.cancel()

            async def wake_on_stop() -> None:
                await stop.wait()
                group.cancel_scope.cancel()

            group.start_soon(wake_on_event)
            group.start_soon(wake_on_stop)

    async def _fan_out(self) -> int:
        total = 0
        while True:
            taken = await self._store.deliveries.fan_out(self._clock.now(), self._batch)
            total += taken
            if taken < self._batch:
                return total

    async def _deliver_all(
        self,
        claimed: list[ClaimedDelivery],
        limiter: anyio.CapacityLimiter,
        stop: anyio.Event | None,
    ) -> RelayRound:
        outcomes: list[_Outcome] = []

        async def deliver(item: ClaimedDelivery) -> None:
            async with limiter:
                outcome = await self._deliver(item, stop)
            outcomes.append(outcome)
            self._report(
                RelayRound(
                    delivered=int(outcome is _Outcome.DELIVERED),
                    failed=int(outcome is _Outcome.FAILED),
                    dead=int(outcome is _Outcome.DEAD),
                )
            )

        async with anyio.create_task_group() as group:
            for item in claimed:
                group.start_soon(deliver, item)
        return RelayRound(
            delivered=outcomes.count(_Outcome.DELIVERED),
            failed=outcomes.count(_Outcome.FAILED),
            dead=outcomes.count(_Outcome.DEAD),
        )

    async def _deliver(self, item: ClaimedDelivery, stop: anyio.Event | None) -> _Outcome:
        if stop is not None and stop.is_set():
            return _Outcome.LEFT
        if self._clock.now() + self._lease_margin > item.leased_until:
            # Waited too long behind the others; the next round takes it afresh.
            return _Outcome.LEFT
        try:
            try:
                if item.delivery.kind is DestinationKind.WEBHOOK:
                    return await self._webhook(item)
                return await self._email(item)
            except StorageUnavailable:
                raise
            except Exception as error:
                # A fault of ours with this one delivery (a payload the mail cannot be
                # made from, say) counts as a failed attempt, so it ends dead on the
                # schedule instead of stopping the relay at every start.
                log.exception("delivery attempt failed unexpectedly", extra=_facts(item))
                return await self._failed(
                    item, self._clock.now(), f"internal error ({type(error).__name__})"
                )
        except StorageUnavailable as error:
            # The send may have happened; the lease expires and it is sent again, as
            # at-least-once allows.
            log.warning(
                "delivery result not recorded: the database is unavailable",
                extra={**_facts(item), "error": str(error) or type(error).__name__},
            )
            return _Outcome.LEFT

    async def _webhook(self, item: ClaimedDelivery) -> _Outcome:
        endpoint = item.endpoint
        if endpoint is None:
            return await self._park(item, "the webhook endpoint was removed")
        if not endpoint.enabled:
            return await self._park(item, "the webhook endpoint is disabled")
        now = self._clock.now()
        body = _body(self._fresh_links(item.event.payload, now))
        # webhook-id is the event's id, not the attempt's: every send of one event, a
        # redelivery after a crash included, carries the same one, so receivers can
        # deduplicate (Standard Webhooks' idempotency key).
        headers = webhooks.headers(endpoint.secret, item.event.event_id, int(now.timestamp()), body)
        response = await self._webhooks.send(endpoint.url, headers, body)
        done = self._clock.now()
        if response.delivered:
            return await self._succeeded(item, done, f"HTTP {response.status}", response.status)
        if response.gone:
            # 410 Gone: the receiver asks for no more, ever (Standard Webhooks).
            await self._store.destinations.disable_endpoint(endpoint.endpoint_id, done)
            log.warning("webhook endpoint disabled after 410 Gone", extra=_facts(item))
            return await self._park(item, GONE, done)
        error = response.error or f"HTTP {response.status}"
        if response.error and response.status is not None:
            error = f"HTTP {response.status}: {response.error}"
        return await self._failed(item, done, error, response.retry_after, response.status)

    async def _email(self, item: ClaimedDelivery) -> _Outcome:
        recipient = item.recipient
        if recipient is None:
            return await self._park(item, "the recipient was removed")
        test = item.event.event_type is EventType.MAIL_TEST  # sent whatever it wants
        if not test and not recipient.wants(item.event.event_type):
            return await self._park(item, "flagged submissions are not mailed")
        if self._mailer is None:
            # Parked rather than left pending: it shows in `intake outbox list --dead`,
            # and `intake outbox retry` sends it once INTAKE_SMTP_URL is set.
            log.warning("notification mail not sent: %s", NO_MAILER, extra=_facts(item))
            return await self._park(item, NO_MAILER)
        form = await self._store.forms.get(item.event.form_id)
        form_name = form.name if form is not None else ""
        if test:
            message = render_test_mail(
                item.event.payload,
                event_id=item.event.event_id,
                form_name=form_name,
                mail_from=self._mail_from,
                to=recipient.email,
                base_url=self._base_url,
            )
        else:
            message = render_notification(
                self._fresh_links(item.event.payload, self._clock.now()),
                form_name=form_name,
                mail_from=self._mail_from,
                to=recipient.email,
                base_url=self._base_url,
            )
        try:
            await self._mailer.send(message)
        except MailRejected as error:
            return await self._park(item, f"mail rejected: {error}")
        except MailUnavailable as error:
            return await self._failed(item, self._clock.now(), f"mail server unavailable: {error}")
        return await self._succeeded(item, self._clock.now(), "mail accepted")

    def _fresh_links(self, payload: Mapping[str, object], now: datetime) -> Mapping[str, object]:
        """The payload with each file's download link made anew, valid from `now`."""
        if self._signer is None:
            return payload
        return with_fresh_links(payload, self._signer, now)

    async def _succeeded(
        self, item: ClaimedDelivery, now: datetime, result: str, status: int | None = None
    ) -> _Outcome:
        await self._store.deliveries.record_success(item.delivery.delivery_id, now, status)
        log.info("delivered", extra={**_facts(item), "result": result})
        return _Outcome.DELIVERED

    async def _failed(
        self,
        item: ClaimedDelivery,
        now: datetime,
        error: str,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> _Outcome:
        # `attempts` counts the recorded attempts before this one.
        made = item.delivery.attempts + 1
        retry_at = next_attempt_at(made, now, self._jitter(), retry_after)
        await self._store.deliveries.record_failure(
            item.delivery.delivery_id, now, error, retry_at, status
        )
        if retry_at is None:
            log.warning(
                "delivery dead after its last attempt", extra={**_facts(item), "error": error}
            )
            return _Outcome.DEAD
        log.info(
            "delivery failed; will retry",
            extra={**_facts(item), "error": error, "retry_at": retry_at.isoformat()},
        )
        return _Outcome.FAILED

    async def _park(
        self, item: ClaimedDelivery, error: str, now: datetime | None = None
    ) -> _Outcome:
        await self._store.deliveries.record_failure(
            item.delivery.delivery_id, now or self._clock.now(), error, None
        )
        log.info("delivery dead", extra={**_facts(item), "error": error})
        return _Outcome.DEAD


def with_fresh_links(
    payload: Mapping[str, object], signer: DownloadSigner, now: datetime
) -> Mapping[str, object]:
    """An event payload whose files each carry a new link (`url`, `url_expires_at`), made
    as `describe_files` makes them: the file's position in the list names it. A payload
    without files is returned as it is, so its body is the bytes it always was."""
    files = payload.get("files")
    submission_id = payload.get("submission_id")
    if not files or not isinstance(files, list) or not isinstance(submission_id, str):
        return payload
    fresh: list[object] = []
    for index, entry in enumerate(files):
        if not isinstance(entry, Mapping):
            fresh.append(entry)
            continue
        link = signer.link(submission_id, index, now)
        fresh.append({**entry, "url": link.url, "url_expires_at": link.expires_at.isoformat()})
    return {**payload, "files": fresh}


def _body(payload: Mapping[str, object]) -> bytes:
    # Compact UTF-8 JSON: the bytes signed are the bytes sent.
    return json.dumps(dict(payload), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _facts(item: ClaimedDelivery) -> dict[str, object]:
    """What a log line may say about a delivery: ids and counts, never the payload, the
    URL (it may carry a token) or the secret."""
    delivery = item.delivery
    return {
        "event_id": delivery.event_id,
        "delivery_id": delivery.delivery_id,
        "destination_id": delivery.destination_id,
        "kind": delivery.kind.value,
        "attempt": delivery.attempts + 1,
    }
