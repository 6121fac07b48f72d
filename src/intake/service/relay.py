"""The relay: takes committed outbox events to the forms' webhooks, mail recipients and
chat destinations.

One round (`run_once`) fans every unpublished outbox row out into one delivery per
destination, leases the deliveries that are due, sends them (a few at a time), and
records each result: delivered, failed and due again later on the retry schedule, or
parked as dead. A relay that dies mid-round records nothing; its leases expire and the
next round (of any relay) sends those deliveries again, with the same webhook-id, so
delivery is at least once and receivers can drop the duplicate. docs/relay.md tells the
whole story. Sending one delivery and recording its result is delivery_sending.py's.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from datetime import timedelta

import anyio
from attrs import frozen

from intake.domain.deliveries import DEFAULT_MAIL_FROM
from intake.domain.errors import StorageUnavailable
from intake.domain.form_messages import DEFAULT_AUTORESPONSE_HOURLY_LIMIT
from intake.domain.mail_templates import no_template_renderer
from intake.domain.signing import DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.deliveries import ClaimedDelivery
from intake.ports.senders import ChatSender, Mailer, WebhookSender
from intake.ports.spam_opinion import SpamOpinion
from intake.ports.store import Store
from intake.ports.templates import TemplateRenderer
from intake.service.delivery_sending import DeliverySender, Outcome, log_facts
from intake.service.forwarding import erase_forwarded

log = logging.getLogger("intake.relay")


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


class Relay:
    def __init__(
        self,
        store: Store,
        webhook_sender: WebhookSender,
        mailer: Mailer | None,
        clock: Clock,
        *,
        chat_sender: ChatSender | None = None,
        mail_from: str = DEFAULT_MAIL_FROM,
        base_url: str | None = None,
        public_url: str | None = None,
        lease: timedelta = timedelta(minutes=2),
        lease_margin: timedelta = timedelta(seconds=30),
        batch: int = 100,
        concurrency: int = 16,
        poll_interval: timedelta = timedelta(seconds=5),
        jitter: Callable[[], float] = random.random,
        signer: DownloadSigner | None = None,
        blobs: BlobStore | None = None,
        autoresponse_limit: int = DEFAULT_AUTORESPONSE_HOURLY_LIMIT,
        template_renderer: TemplateRenderer | None = None,
        spam_opinion: SpamOpinion | None = None,
    ) -> None:
        if batch < 1 or concurrency < 1:
            raise ValueError("batch and concurrency must be at least 1")
        if lease <= lease_margin:
            raise ValueError("the lease must be longer than the lease margin")
        self._store = store
        self._clock = clock
        self._sender = DeliverySender(
            store,
            webhook_sender,
            mailer,
            clock,
            chat_sender=chat_sender,
            mail_from=mail_from,
            base_url=base_url,
            public_url=public_url,
            jitter=jitter,
            signer=signer,
            # Without one, every mail goes in its default words.
            render_template=no_template_renderer
            if template_renderer is None
            else template_renderer.render,
            spam_opinion=spam_opinion,
        )
        self._lease = lease
        # Where forward-only forms' files are erased from once forwarded.
        self._blobs = blobs
        self._autoresponse_limit = autoresponse_limit
        # A delivery is not started with less than this left on its lease: a send that
        # outlived its lease could run beside another relay's send of the same delivery.
        # More than the webhook sender's whole-exchange timeout (15 s).
        self._lease_margin = lease_margin
        self._batch = batch
        self._concurrency = concurrency
        # The shortest retry delay is 5 s, so waking at least this often (or when a new
        # event is committed) finds every delivery soon after it is due.
        self._poll_interval = poll_interval
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
        # After the results are recorded: what every destination now has, a forward-only
        # form keeps no longer.
        await erase_forwarded(self._store.submissions, self._blobs)
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
            taken = await self._store.deliveries.fan_out(
                self._clock.now(), self._batch, self._autoresponse_limit
            )
            total += taken
            if taken < self._batch:
                return total

    async def _deliver_all(
        self,
        claimed: list[ClaimedDelivery],
        limiter: anyio.CapacityLimiter,
        stop: anyio.Event | None,
    ) -> RelayRound:
        outcomes: list[Outcome] = []

        async def deliver(item: ClaimedDelivery) -> None:
            async with limiter:
                outcome = await self._deliver(item, stop)
            outcomes.append(outcome)
            self._report(
                RelayRound(
                    delivered=int(outcome is Outcome.DELIVERED),
                    failed=int(outcome is Outcome.FAILED),
                    dead=int(outcome is Outcome.DEAD),
                )
            )

        async with anyio.create_task_group() as group:
            for item in claimed:
                group.start_soon(deliver, item)
        return RelayRound(
            delivered=outcomes.count(Outcome.DELIVERED),
            failed=outcomes.count(Outcome.FAILED),
            dead=outcomes.count(Outcome.DEAD),
        )

    async def _deliver(self, item: ClaimedDelivery, stop: anyio.Event | None) -> Outcome:
        if stop is not None and stop.is_set():
            return Outcome.LEFT
        if self._clock.now() + self._lease_margin > item.leased_until:
            # Waited too long behind the others; the next round takes it afresh.
            return Outcome.LEFT
        try:
            return await self._sender.send(item)
        except StorageUnavailable as error:
            # The send may have happened; the lease expires and it is sent again, as
            # at-least-once allows.
            log.warning(
                "delivery result not recorded: the database is unavailable",
                extra={**log_facts(item), "error": str(error) or type(error).__name__},
            )
            return Outcome.LEFT
