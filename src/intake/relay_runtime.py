"""The relay's composition: the storage (containers.py), the webhook sender, the mailer
and Akismet, and the `Relay` made of them.

The relay opens nothing else: no rate limiter (and so no Redis), no challenge client and
no submission pipeline, none of which it uses. The webhook sender has an HTTP client of
its own; the mailer is there when INTAKE_SMTP_URL is set (None otherwise: mail
deliveries are then parked). The library composes the same relay (library_runtime.py).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import timedelta

from attrs import frozen
from dependency_injector import providers

from intake.adapters.chat.sender import HttpChatSender
from intake.adapters.templates.pool import shared_renderer
from intake.client_resources import OpinionContainer, open_mailer, webhook_sender_resource
from intake.config import Settings
from intake.containers import StorageContainer, opened
from intake.domain.signing import DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.senders import Mailer, WebhookSender
from intake.ports.spam_opinion import SpamOpinion
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.service.relay import Relay
from intake.service.retention_sweep import RetentionSweep


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
    sweep: RetentionSweep


def make_relay(
    settings: Settings,
    *,
    store: Store,
    clock: Clock,
    blobs: BlobStore | None,
    signer: DownloadSigner,
    webhook_sender: WebhookSender,
    mailer: Mailer | None,
    spam_opinion: SpamOpinion | None,
) -> Relay:
    """The relay, as every composition that delivers builds it."""
    return Relay(
        store,
        webhook_sender,
        mailer,
        clock,
        chat_sender=HttpChatSender(webhook_sender, telegram_api_url=settings.telegram_api_url),
        mail_from=settings.mail_from,
        base_url=settings.base_url,
        public_url=settings.public_base_url,
        signer=signer,
        autoresponse_limit=settings.autoresponse_hourly_limit,
        blobs=blobs,
        template_renderer=shared_renderer(),
        spam_opinion=spam_opinion,
    )


def make_retention_sweep(
    settings: Settings, *, store: Store, clock: Clock, blobs: BlobStore | None
) -> RetentionSweep:
    return RetentionSweep(
        store,
        blobs,
        clock,
        client_ip_full=timedelta(hours=settings.client_ip_full_hours),
        settle_after=timedelta(days=settings.spam_settle_days),
    )


class SendersContainer(OpinionContainer):
    """The storage, and how the relay delivers: webhooks, mail when a mailer is set, and
    Akismet, told of owners' triage, when it is configured."""

    webhook_sender: providers.Provider[WebhookSender] = providers.Resource(
        webhook_sender_resource, settings=StorageContainer.settings
    )
    mailer: providers.Provider[Mailer | None] = providers.Singleton(
        open_mailer, settings=StorageContainer.settings
    )
    relay = providers.Singleton(
        make_relay,
        settings=StorageContainer.settings,
        store=StorageContainer.store,
        clock=StorageContainer.clock,
        blobs=StorageContainer.blobs,
        signer=StorageContainer.signer,
        webhook_sender=webhook_sender,
        mailer=mailer,
        spam_opinion=OpinionContainer.spam_opinion,
    )


class RelayContainer(SendersContainer):
    """`intake relay`: the storage, the senders and the relay."""

    runtime = providers.Singleton(
        RelayRuntime,
        settings=StorageContainer.settings,
        store=StorageContainer.store,
        clock=StorageContainer.clock,
        blobs=StorageContainer.blobs,
        signer=StorageContainer.signer,
        webhook_sender=SendersContainer.webhook_sender,
        mailer=SendersContainer.mailer,
        relay=SendersContainer.relay,
        sweep=providers.Singleton(
            make_retention_sweep,
            settings=StorageContainer.settings,
            store=StorageContainer.store,
            clock=StorageContainer.clock,
            blobs=StorageContainer.blobs,
        ),
    )


def open_relay_runtime(
    settings: Settings, opening: StoreOpening = StoreOpening.WRITE
) -> AbstractAsyncContextManager[RelayRuntime]:
    """Opens the store as `opening` says (ports/store_opening.py), then the blob store,
    the signer and the senders, and closes them, dependents first, on exit."""
    container = RelayContainer(settings=settings, opening=opening)
    return opened(container, container.runtime)
