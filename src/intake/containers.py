"""The composition root of a serving process and of the library: one container builds
intake for each of its uses.

- embedded (the default): SQLite and the in-process rate limiter;
- production: PostgreSQL and Redis, chosen by INTAKE_DATABASE_URL and INTAKE_REDIS_URL
  (each independently: SQLite with Redis works for several workers on one host);
- tests and library users: any port replaced by a fake through `open_runtime(...)`.

The store, the blob store and the download-link signer come from resources.py, and the
relay's senders from relay_runtime.py: a management command (admin_runtime.py) and
`intake relay` (relay_runtime.py) each open only the ones they use.

Nothing is built at import time; `open_runtime` opens the resources and closes them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import TypedDict, TypeVar

import httpx
from attrs import frozen
from dependency_injector import containers, providers

from intake.adapters.challenge_http import HttpChallengeVerifier
from intake.adapters.ratelimit_fallback import FallbackRateLimiter
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.ratelimit_redis import open_redis_rate_limiter
from intake.adapters.system import SecureIdSource, SystemClock
from intake.adapters.user_agent import USER_AGENT
from intake.adapters.webhook_http import system_resolver
from intake.config import Settings
from intake.domain.signing import DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.challenge import ChallengeVerifier
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.rate_limiter import RateLimiter
from intake.ports.senders import Mailer, WebhookSender
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.relay_runtime import open_mailer, webhook_sender_resource
from intake.resources import (
    DOWNLOAD_SECRET_NAME,
    blobs_resource,
    open_store,
    signer_resource,
    store_resource,
)
from intake.service.admin import Admin
from intake.service.pipeline import PipelineSettings, SubmissionPipeline
from intake.service.relay import Relay

T = TypeVar("T")

__all__ = [
    "DOWNLOAD_SECRET_NAME",
    "Container",
    "PortOverrides",
    "Runtime",
    "open_runtime",
    "open_store",
]


async def _rate_limiter_resource(settings: Settings) -> AsyncIterator[RateLimiter]:
    if settings.redis_url is None:
        yield InProcessRateLimiter()
        return
    # Redis holds the windows shared by every worker; while it is unreachable each
    # process limits on its own rather than refusing real submissions.
    async with open_redis_rate_limiter(settings.redis_url) as shared:
        yield FallbackRateLimiter(shared, InProcessRateLimiter())


async def _challenge_resource(settings: Settings) -> AsyncIterator[ChallengeVerifier]:
    # The verifier owns its client, so a runtime given another verifier opens none.
    async with httpx.AsyncClient(
        headers={"User-Agent": USER_AGENT},
        limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
    ) as client:
        yield HttpChallengeVerifier(
            client, verify_urls=settings.verify_urls, timeout=settings.challenge_timeout
        )


def _pipeline_settings(settings: Settings) -> PipelineSettings:
    return PipelineSettings(
        limits=settings.limits,
        rate_limits=settings.rate_limits,
        plans=settings.plans,
        upload_timeout=settings.upload_timeout,
        storage_limit=settings.workspace_storage_limit,
    )


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    store_opening = providers.Dependency(instance_of=StoreOpening, default=StoreOpening.PREPARE)

    # Typed as their ports, which a test or a library user may put in their place.
    clock = providers.Singleton[Clock](SystemClock)
    id_source = providers.Singleton[IdSource](SecureIdSource)
    store = providers.Resource(store_resource, settings=settings, opening=store_opening)
    rate_limiter = providers.Resource(_rate_limiter_resource, settings=settings)
    challenge = providers.Resource(_challenge_resource, settings=settings)
    blobs = providers.Resource(blobs_resource, settings=settings, clock=clock)
    signer = providers.Resource(signer_resource, settings=settings, store=store)
    pipeline_settings = providers.Singleton(_pipeline_settings, settings=settings)
    pipeline = providers.Singleton(
        SubmissionPipeline,
        store=store,
        rate_limiter=rate_limiter,
        challenge=challenge,
        clock=clock,
        id_source=id_source,
        settings=pipeline_settings,
        blobs=blobs,
        signer=signer,
    )
    admin = providers.Singleton(
        Admin,
        store=store,
        clock=clock,
        id_source=id_source,
        plans=settings.provided.plans,
        webhook_allow_private=settings.provided.webhook_allow_private,
        webhook_resolver=system_resolver,
        blobs=blobs,
        signer=signer,
    )
    webhook_sender = providers.Resource(webhook_sender_resource, settings=settings)
    mailer = providers.Singleton(open_mailer, settings=settings)
    relay = providers.Singleton(
        Relay,
        store=store,
        webhook_sender=webhook_sender,
        mailer=mailer,
        clock=clock,
        mail_from=settings.provided.mail_from,
        base_url=settings.provided.base_url,
        signer=signer,
    )


class PortOverrides(TypedDict, total=False):
    """The ports a test or a library user may replace, by name, in `open_runtime`,
    `create_app` and `Intake.open`: one given (not None) is used as it is."""

    store: Store | None
    clock: Clock | None
    id_source: IdSource | None
    rate_limiter: RateLimiter | None
    challenge: ChallengeVerifier | None
    webhook_sender: WebhookSender | None
    mailer: Mailer | None
    blobs: BlobStore | None


@frozen
class Runtime:
    """Everything a running intake holds, built once per process."""

    settings: Settings
    store: Store
    clock: Clock
    id_source: IdSource
    rate_limiter: RateLimiter
    challenge: ChallengeVerifier
    pipeline: SubmissionPipeline
    admin: Admin
    webhook_sender: WebhookSender
    mailer: Mailer | None
    relay: Relay
    blobs: BlobStore | None
    signer: DownloadSigner


async def _provided(provider: providers.Provider[T]) -> T:
    # A provider that depends on a resource answers with an awaitable once the
    # container's resources are async; the others answer with the object.
    value: T | Awaitable[T] = provider()
    if isinstance(value, Awaitable):
        return await value
    return value


def _override(provider: providers.Provider[T], replacement: T | None) -> None:
    if replacement is not None:
        provider.override(providers.Object(replacement))


@asynccontextmanager
async def open_runtime(
    settings: Settings | None = None,
    *,
    store: Store | None = None,
    clock: Clock | None = None,
    id_source: IdSource | None = None,
    rate_limiter: RateLimiter | None = None,
    challenge: ChallengeVerifier | None = None,
    webhook_sender: WebhookSender | None = None,
    mailer: Mailer | None = None,
    blobs: BlobStore | None = None,
    store_opening: StoreOpening = StoreOpening.PREPARE,
) -> AsyncIterator[Runtime]:
    """Builds the container, replacing any port given, and closes it on exit. A store
    or blob store passed in stays open: whoever made it closes it. `store_opening` says
    what the store may make and must find (ports/store_opening.py)."""
    container = Container(settings=settings or Settings.from_env(), store_opening=store_opening)
    _override(container.store, store)
    _override(container.clock, clock)
    _override(container.id_source, id_source)
    _override(container.rate_limiter, rate_limiter)
    _override(container.challenge, challenge)
    _override(container.webhook_sender, webhook_sender)
    _override(container.mailer, mailer)
    _override(container.blobs, blobs)
    try:
        # The container's resources are async: opening and closing them are awaitables.
        opened = container.init_resources()
        if opened is not None:
            await opened
        yield Runtime(
            settings=container.settings(),
            store=await _provided(container.store),
            clock=await _provided(container.clock),
            id_source=await _provided(container.id_source),
            rate_limiter=await _provided(container.rate_limiter),
            challenge=await _provided(container.challenge),
            pipeline=await _provided(container.pipeline),
            admin=await _provided(container.admin),
            webhook_sender=await _provided(container.webhook_sender),
            mailer=await _provided(container.mailer),
            relay=await _provided(container.relay),
            blobs=await _provided(container.blobs),
            signer=await _provided(container.signer),
        )
    finally:
        closed = container.shutdown_resources()
        if closed is not None:
            await closed
