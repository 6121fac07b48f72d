"""intake as a library (`Intake.open`): a serving process's composition, and the relay
with its senders, so that a program can both submit and deliver in one process. Any
port may be replaced through `PortOverrides`, or any provider of `LibraryContainer`
overridden.

Nothing is built at import time; `open_runtime` opens the resources and closes them.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Unpack

from attrs import frozen
from dependency_injector import providers

from intake.client_resources import rate_limit_fallback
from intake.config import Settings
from intake.containers import StorageContainer, opened
from intake.ports.senders import Mailer, WebhookSender
from intake.ports.store_opening import StoreOpening
from intake.relay_runtime import SendersContainer
from intake.serve_runtime import ServeContainer, ServeOverrides, ServeRuntime
from intake.service.relay import Relay

__all__ = ["LibraryContainer", "PortOverrides", "Runtime", "library_container", "open_runtime"]


class PortOverrides(ServeOverrides, total=False):
    """The ports a test or a library user may replace, by name, in `open_runtime` and
    `Intake.open`: a serving process's, and the relay's senders."""

    webhook_sender: WebhookSender | None
    mailer: Mailer | None


@frozen
class Runtime(ServeRuntime):
    """A serving process's parts, and the relay that delivers what they accept."""

    webhook_sender: WebhookSender
    mailer: Mailer | None
    relay: Relay


class LibraryContainer(ServeContainer, SendersContainer):
    """A serving process's parts and the relay's, one Akismet client for both."""

    library = providers.Singleton(
        Runtime,
        settings=StorageContainer.settings,
        store=StorageContainer.store,
        clock=StorageContainer.clock,
        id_source=StorageContainer.id_source,
        rate_limiter=ServeContainer.rate_limiter,
        challenge=ServeContainer.challenge,
        pipeline=ServeContainer.pipeline,
        services=ServeContainer.services,
        blobs=StorageContainer.blobs,
        signer=StorageContainer.signer,
        rate_limit_fallback=providers.Callable(rate_limit_fallback, ServeContainer.rate_limiter),
        spam_opinion=ServeContainer.spam_opinion,
        webhook_sender=SendersContainer.webhook_sender,
        mailer=SendersContainer.mailer,
        relay=SendersContainer.relay,
    )


def library_container(
    settings: Settings | None = None,
    *,
    store_opening: StoreOpening = StoreOpening.PREPARE,
    **overrides: Unpack[PortOverrides],
) -> LibraryContainer:
    """The library's container, each port given (not None) overriding its provider."""
    chosen = settings if settings is not None else Settings.from_env()
    given = {name: port for name, port in overrides.items() if port is not None}
    return LibraryContainer(settings=chosen, opening=store_opening, **given)


def open_runtime(
    settings: Settings | None = None,
    *,
    store_opening: StoreOpening = StoreOpening.PREPARE,
    **overrides: Unpack[PortOverrides],
) -> AbstractAsyncContextManager[Runtime]:
    """Opens everything, any port given replacing its adapter, and closes it on exit. A
    store or blob store passed in stays open: whoever made it closes it. `store_opening`
    says what the store may make and must find (ports/store_opening.py)."""
    container = library_container(settings, store_opening=store_opening, **overrides)
    return opened(container, container.library)
