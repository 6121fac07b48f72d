"""What the relay runs on: the store, the blob store, the download-link signer, the
webhook sender and the mailer, and the `Relay` made of them.

The relay opens nothing else: no rate limiter (and so no Redis), no challenge client and
no submission pipeline, none of which it uses. The webhook sender has an HTTP client of
its own; the mailer is there when INTAKE_SMTP_URL is set (None otherwise: mail
deliveries are then parked). The library builds the same relay (library_runtime.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
from attrs import frozen

from intake.adapters.chat.sender import HttpChatSender
from intake.adapters.system import SystemClock
from intake.adapters.templates.pool import shared_renderer
from intake.adapters.webhook_http import DEFAULT_TIMEOUT, HttpWebhookSender
from intake.config import ConfigError, Settings
from intake.domain.signing import DownloadSigner
from intake.opinion_resource import spam_opinion_resource
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.senders import Mailer, WebhookSender
from intake.ports.spam_opinion import SpamOpinion
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.resources import Storage, enter_storage
from intake.service.relay import Relay


async def webhook_sender_resource(settings: Settings) -> AsyncIterator[WebhookSender]:
    # A client of its own, apart from the challenge providers': receivers are many
    # hosts, each answering within the sender's timeout, and none follows redirects.
    async with httpx.AsyncClient(
        follow_redirects=False,
        limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
    ) as client:
        yield HttpWebhookSender(
            client, timeout=DEFAULT_TIMEOUT, allow_private=settings.webhook_allow_private
        )


def open_mailer(settings: Settings) -> Mailer | None:
    if settings.smtp_url is None:
        return None
    from intake.adapters.mail_smtp import SmtpMailer  # noqa: PLC0415 - only when mailing

    try:
        return SmtpMailer(settings.smtp_url)
    except ValueError as error:  # its message names INTAKE_SMTP_URL, never the password
        raise ConfigError(str(error)) from None


@frozen
class RelayRuntime:
    """The parts the relay holds while it runs."""

    settings: Settings
    store: Store
    clock: Clock
    blobs: BlobStore | None
    signer: DownloadSigner
    webhook_sender: WebhookSender
    mailer: Mailer | None
    relay: Relay


@frozen
class Senders:
    """How the relay delivers: webhooks, and mail when a mailer is set."""

    webhook_sender: WebhookSender
    mailer: Mailer | None
    # Akismet, told of owners' triage, when it is configured.
    spam_opinion: SpamOpinion | None = None


async def enter_senders(
    stack: AsyncExitStack,
    settings: Settings,
    *,
    webhook_sender: WebhookSender | None = None,
    mailer: Mailer | None = None,
    spam_opinion: SpamOpinion | None = None,
) -> Senders:
    """The senders given, else the ones the settings choose; an opened webhook sender
    or Akismet client is closed by `stack`."""
    if webhook_sender is None:
        webhook_sender = await stack.enter_async_context(
            asynccontextmanager(webhook_sender_resource)(settings)
        )
    if spam_opinion is None:
        spam_opinion = await stack.enter_async_context(spam_opinion_resource(settings))
    mailer = mailer if mailer is not None else open_mailer(settings)
    return Senders(webhook_sender, mailer, spam_opinion)


def make_relay(settings: Settings, storage: Storage, clock: Clock, senders: Senders) -> Relay:
    """The relay on `storage`, as every composition that delivers builds it."""
    return Relay(
        storage.store,
        senders.webhook_sender,
        senders.mailer,
        clock,
        chat_sender=HttpChatSender(
            senders.webhook_sender, telegram_api_url=settings.telegram_api_url
        ),
        mail_from=settings.mail_from,
        base_url=settings.base_url,
        public_url=settings.public_base_url,
        signer=storage.signer,
        autoresponse_limit=settings.autoresponse_hourly_limit,
        blobs=storage.blobs,
        template_renderer=shared_renderer(),
        spam_opinion=senders.spam_opinion,
    )


@asynccontextmanager
async def open_relay_runtime(
    settings: Settings, opening: StoreOpening = StoreOpening.WRITE
) -> AsyncIterator[RelayRuntime]:
    """Opens the store as `opening` says (ports/store_opening.py), then the blob store,
    the signer and the webhook sender, and closes them in the opposite order on exit."""
    clock = SystemClock()
    async with AsyncExitStack() as stack:
        storage = await enter_storage(stack, settings, opening, clock)
        senders = await enter_senders(stack, settings)
        yield RelayRuntime(
            settings=settings,
            store=storage.store,
            clock=clock,
            blobs=storage.blobs,
            signer=storage.signer,
            webhook_sender=senders.webhook_sender,
            mailer=senders.mailer,
            relay=make_relay(settings, storage, clock, senders),
        )
