"""Sending one leased delivery and recording how it went: a signed webhook POST, a
notification (or test) mail, or a chat message (chat_sending.py); then delivered, failed
and due again on the retry schedule, or parked as dead. The relay (relay.py) decides
which deliveries to send and when.

An event that tells of uploaded files carries a download link for each; the link made at
commit time may have expired by the time a late retry goes out, so each one is made
afresh as it is sent (webhook and mail alike). An event without files is sent exactly
as it was stored.
"""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from email.message import EmailMessage
from functools import partial

from intake.domain import webhooks
from intake.domain.consent_mail import render_consent_mail
from intake.domain.deliveries import DestinationKind, RecipientStatus, next_attempt_at
from intake.domain.errors import StorageUnavailable
from intake.domain.form_messages import TEMPLATE_NAMES, Templates, is_autoresponse
from intake.domain.mail_templates import RenderTemplate
from intake.domain.mail_tests import render_test_mail
from intake.domain.model import EventType, Form
from intake.domain.notifications import autoresponse_address
from intake.domain.owner_mail import render_autoresponse, render_notification_mail
from intake.domain.signing import DownloadSigner
from intake.ports.clock import Clock
from intake.ports.deliveries import ClaimedDelivery
from intake.ports.senders import (
    ChatSender,
    Mailer,
    MailRejected,
    MailUnavailable,
    WebhookSender,
)
from intake.ports.spam_opinion import SpamOpinion
from intake.ports.store import Store
from intake.service.chat_sending import chat_message, verdict
from intake.service.opinion_reports import ReportOutcome, send_report
from intake.service.template_threads import off_the_loop

NOT_CONFIRMED = "the recipient has not confirmed the address"
log = logging.getLogger("intake.relay")

NO_MAILER = "no SMTP server is configured (INTAKE_SMTP_URL)"
GONE = "HTTP 410 Gone: the endpoint is now disabled"


class Outcome(enum.Enum):
    DELIVERED = "delivered"
    FAILED = "failed"
    DEAD = "dead"
    # Not attempted, or the result could not be recorded: the lease runs out and the
    # delivery comes round again.
    LEFT = "left"


class DeliverySender:
    def __init__(
        self,
        store: Store,
        webhook_sender: WebhookSender,
        mailer: Mailer | None,
        clock: Clock,
        *,
        chat_sender: ChatSender | None = None,
        mail_from: str,
        base_url: str | None,
        public_url: str | None = None,
        jitter: Callable[[], float],
        signer: DownloadSigner | None,
        render_template: RenderTemplate,
        spam_opinion: SpamOpinion | None = None,
    ) -> None:
        self._store = store
        self._webhooks = webhook_sender
        self._mailer = mailer
        self._chats = chat_sender
        self._clock = clock
        self._mail_from = mail_from
        self._base_url = base_url
        # Where the service answers even without INTAKE_BASE_URL: a consent link must
        # lead somewhere, where a notification's dashboard link may be left out.
        self._public_url = public_url or base_url
        self._jitter = jitter
        # Without one, file links are sent as the event holds them.
        self._signer = signer
        self._render_template = render_template
        self._opinion = spam_opinion

    async def send(self, item: ClaimedDelivery) -> Outcome:
        """Sends one delivery and records the result. StorageUnavailable is raised: the
        result was not recorded (the send may have happened)."""
        try:
            if item.delivery.kind is DestinationKind.WEBHOOK:
                return await self._webhook(item)
            if item.delivery.kind is DestinationKind.CHAT:
                return await self._chat(item)
            if item.delivery.kind is DestinationKind.AKISMET:
                return await self._report(item)
            return await self._email(item)
        except StorageUnavailable:
            raise
        except Exception as error:
            # A fault of ours with this one delivery (a payload the mail cannot be
            # made from, say) counts as a failed attempt, so it ends dead on the
            # schedule instead of stopping the relay at every start.
            log.exception("delivery attempt failed unexpectedly", extra=log_facts(item))
            return await self._failed(
                item, self._clock.now(), f"internal error ({type(error).__name__})"
            )

    async def _webhook(self, item: ClaimedDelivery) -> Outcome:
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
            log.warning("webhook endpoint disabled after 410 Gone", extra=log_facts(item))
            return await self._park(item, GONE, done)
        error = response.error or f"HTTP {response.status}"
        if response.error and response.status is not None:
            error = f"HTTP {response.status}: {response.error}"
        return await self._failed(item, done, error, response.retry_after, response.status)

    async def _email(self, item: ClaimedDelivery) -> Outcome:
        if is_autoresponse(item.delivery.destination_id):
            return await self._confirmation(item)
        recipient = item.recipient
        if recipient is None:
            return await self._park(item, "the recipient was removed")
        event_type = item.event.event_type
        test = event_type is EventType.MAIL_TEST  # sent whatever it wants
        consent = event_type is EventType.MAIL_CONFIRM  # the one mail a pending address gets
        if consent and recipient.status is not RecipientStatus.PENDING:
            return await self._park(item, "the recipient answered already")
        if test and not recipient.confirmed:
            return await self._park(item, NOT_CONFIRMED)
        if not (test or consent) and not recipient.wants(event_type):
            why = NOT_CONFIRMED if not recipient.confirmed else "flagged submissions are not mailed"
            return await self._park(item, why)
        if self._mailer is None:
            # Parked rather than left pending: it shows in `intake outbox list --dead`,
            # and `intake outbox retry` sends it once INTAKE_SMTP_URL is set.
            log.warning("notification mail not sent: %s", NO_MAILER, extra=log_facts(item))
            return await self._park(item, NO_MAILER)
        form = await self._store.forms.get(item.event.form_id)
        form_name = form.name if form is not None else ""
        if consent:
            workspace = await self._store.workspaces.get(item.event.workspace_id)
            message = render_consent_mail(
                item.event.payload,
                event_id=item.event.event_id,
                form_name=form_name,
                workspace_name=workspace.name if workspace is not None else "",
                mail_from=self._mail_from,
                to=recipient.email,
                base_url=self._public_url,
            )
        elif test:
            message = render_test_mail(
                item.event.payload,
                event_id=item.event.event_id,
                form_name=form_name,
                mail_from=self._mail_from,
                to=recipient.email,
                base_url=self._base_url,
            )
        else:
            notification = partial(
                render_notification_mail,
                self._fresh_links(item.event.payload, self._clock.now()),
                form_name=form_name,
                templates=form.messages.templates if form is not None else Templates(),
                mail_from=self._mail_from,
                to=recipient.email,
                base_url=self._base_url,
                render=self._render_template,
            )
            message, failed = await _made(notification, form, "notification")
            _note_fallback(item, failed)
        return await self._send_mail(self._mailer, item, message)

    async def _confirmation(self, item: ClaimedDelivery) -> Outcome:
        """The autoresponse: queued by the fan-out within its limits, sent to the
        submitter's validated address, in the owner's words."""
        if self._mailer is None:
            log.warning("confirmation mail not sent: %s", NO_MAILER, extra=log_facts(item))
            return await self._park(item, NO_MAILER)
        form = await self._store.forms.get(item.event.form_id)
        if form is None or not form.messages.autoresponse:
            return await self._park(item, "the form's autoresponder is off")
        address = autoresponse_address(item.event.payload)
        if address is None:
            return await self._park(item, "the submitter's address is no longer kept")
        confirmation = partial(
            render_autoresponse,
            item.event.payload,
            form_name=form.name,
            templates=form.messages.templates,
            mail_from=self._mail_from,
            to=address,
            render=self._render_template,
        )
        message, failed = await _made(confirmation, form, "autoresponse")
        _note_fallback(item, failed)
        return await self._send_mail(self._mailer, item, message)

    async def _send_mail(
        self, mailer: Mailer, item: ClaimedDelivery, message: EmailMessage
    ) -> Outcome:
        try:
            await mailer.send(message)
        except MailRejected as error:
            return await self._park(item, f"mail rejected: {error}")
        except MailUnavailable as error:
            return await self._failed(item, self._clock.now(), f"mail server unavailable: {error}")
        return await self._succeeded(item, self._clock.now(), "mail accepted")

    async def _chat(self, item: ClaimedDelivery) -> Outcome:
        destination = item.chat
        if destination is None:
            return await self._park(item, "the chat destination was removed")
        if self._chats is None:
            return await self._park(item, "this relay sends no chat messages")
        form = await self._store.forms.get(item.event.form_id)
        message = chat_message(
            item.event, destination, form.name if form is not None else "", self._base_url
        )
        if message is None:
            return await self._park(item, "flagged submissions are not sent to this chat")
        response = await self._chats.send(destination, message)
        done = self._clock.now()
        result = verdict(response)
        if result.delivered:
            return await self._succeeded(item, done, result.error, response.status)
        if not result.retry:
            await self._store.deliveries.record_failure(
                item.delivery.delivery_id, done, result.error, None, response.status
            )
            log.warning("chat message refused; not retried", extra=log_facts(item))
            return Outcome.DEAD
        return await self._failed(item, done, result.error, response.retry_after, response.status)

    def _fresh_links(self, payload: Mapping[str, object], now: datetime) -> Mapping[str, object]:
        """The payload with each file's download link made anew, valid from `now`."""
        if self._signer is None:
            return payload
        return with_fresh_links(payload, self._signer, now)

    async def _report(self, item: ClaimedDelivery) -> Outcome:
        result = await send_report(self._opinion, self._store, item.event)
        now = self._clock.now()
        if result.outcome is ReportOutcome.ACKNOWLEDGED:
            return await self._succeeded(item, now, result.detail)
        if result.outcome is ReportOutcome.PARKED:
            return await self._park(item, result.detail, now)
        return await self._failed(item, now, result.detail)

    async def _succeeded(
        self, item: ClaimedDelivery, now: datetime, result: str, status: int | None = None
    ) -> Outcome:
        await self._store.deliveries.record_success(item.delivery.delivery_id, now, status)
        log.info("delivered", extra={**log_facts(item), "result": result})
        return Outcome.DELIVERED

    async def _failed(
        self,
        item: ClaimedDelivery,
        now: datetime,
        error: str,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> Outcome:
        # `attempts` counts the recorded attempts before this one.
        made = item.delivery.attempts + 1
        retry_at = next_attempt_at(made, now, self._jitter(), retry_after)
        await self._store.deliveries.record_failure(
            item.delivery.delivery_id, now, error, retry_at, status
        )
        if retry_at is None:
            log.warning(
                "delivery dead after its last attempt", extra={**log_facts(item), "error": error}
            )
            return Outcome.DEAD
        log.info(
            "delivery failed; will retry",
            extra={**log_facts(item), "error": error, "retry_at": retry_at.isoformat()},
        )
        return Outcome.FAILED

    async def _park(
        self, item: ClaimedDelivery, error: str, now: datetime | None = None
    ) -> Outcome:
        await self._store.deliveries.record_failure(
            item.delivery.delivery_id, now or self._clock.now(), error, None
        )
        log.info("delivery dead", extra={**log_facts(item), "error": error})
        return Outcome.DEAD


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


async def _made(
    make: Callable[[], tuple[EmailMessage, tuple[str, ...]]], form: Form | None, kind: str
) -> tuple[EmailMessage, tuple[str, ...]]:
    """The mail `make` makes. Where the owner worded `kind`, rendering blocks (for the
    renderer's time limit at most), so it runs on a thread and the relay's other sends
    go on meanwhile; the default words are made at once."""
    templates = form.messages.templates if form is not None else Templates()
    if any(templates.get(name) for name in TEMPLATE_NAMES if name.startswith(kind)):
        return await off_the_loop(make)
    return make()


def _note_fallback(item: ClaimedDelivery, failed: tuple[str, ...]) -> None:
    """A template that failed at send time: the default was sent in its place, and the
    owner's operator learns which (never the template nor the values)."""
    if failed:
        log.warning(
            "mail template failed; the default was sent",
            extra={**log_facts(item), "form_id": item.event.form_id, "templates": ",".join(failed)},
        )


def log_facts(item: ClaimedDelivery) -> dict[str, object]:
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
