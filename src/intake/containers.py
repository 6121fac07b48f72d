"""The composition root of a serving process and of the relay: one container builds
intake for each of its uses.

- embedded (the default): SQLite and the in-process rate limiter;
- production: PostgreSQL and Redis, chosen by INTAKE_DATABASE_URL and INTAKE_REDIS_URL
  (each independently: SQLite with Redis works for several workers on one host);
- tests and library users: any port replaced by a fake through `open_runtime(...)`.

The relay's senders are built here too: a webhook sender with its own HTTP client, and
a mailer when INTAKE_SMTP_URL is set (None otherwise: mail deliveries are then parked).
The store, the blob store and the download-link signer come from resources.py, which a
management command opens without the rest (admin_runtime.py).

Nothing is built at import time; `open_runtime` opens the resources and closes them.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypedDict

import httpx
from attrs import frozen
from dependency_injector import containers, providers

from intake.adapters.challenge_http import HttpChallengeVerifier
from intake.adapters.ratelimit_fallback import FallbackRateLimiter
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.ratelimit_redis import open_redis_rate_limiter
from intake.adapters.system import SecureIdSource, SystemClock
from intake.adapters.user_agent import USER_AGENT
from intake.adapters.webhook_http import DEFAULT_TIMEOUT, HttpWebhookSender, system_resolver
from intake.config import ConfigError, Settings
from intake.domain.signing import DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.challenge import ChallengeVerifier
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.rate_limiter import RateLimiter
from intake.ports.senders import Mailer, WebhookSender
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
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


async def _webhook_sender_resource(settings: Settings) -> AsyncIterator[WebhookSender]:
    # A client of its own, apart from the challenge providers': receivers are many
    # hosts, each answering within the sender's timeout, and none follows redirects.
    async with httpx.AsyncClient(
        follow_redirects=False,
        limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
    ) as client:
        yield HttpWebhookSender(
            client, timeout=DEFAULT_TIMEOUT, allow_private=settings.webhook_allow_private
        )


def _mailer(settings: Settings) -> Mailer | None:
    if settings.smtp_url is None:
        return None
    from intake.adapters.mail_smtp import SmtpMailer  # noqa: PLC0415 - only when mailing

    try:
        return SmtpMailer(settings.smtp_url)
    except ValueError as error:  # its message names INTAKE_SMTP_URL, never the password
        raise ConfigError(str(error)) from None


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

    clock = providers.Singleton(SystemClock)
    id_source = providers.Singleton(SecureIdSource)
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
    webhook_sender = providers.Resource(_webhook_sender_resource, settings=settings)
    mailer = providers.Singleton(_mailer, settings=settings)
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


async def _resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


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
    overrides: Mapping[providers.Provider[Any], object | None] = {
        container.store: store,
        container.clock: clock,
        container.id_source: id_source,
        container.rate_limiter: rate_limiter,
        container.challenge: challenge,
        container.webhook_sender: webhook_sender,
        container.mailer: mailer,
        container.blobs: blobs,
    }
    for provider, replacement in overrides.items():
        if replacement is not None:
            provider.override(providers.Object(replacement))
    try:
        await _resolve(container.init_resources())
        yield Runtime(
            settings=container.settings(),
            store=await _resolve(container.store()),
            clock=await _resolve(container.clock()),
            id_source=await _resolve(container.id_source()),
            rate_limiter=await _resolve(container.rate_limiter()),
            challenge=await _resolve(container.challenge()),
            pipeline=await _resolve(container.pipeline()),
            admin=await _resolve(container.admin()),
            webhook_sender=await _resolve(container.webhook_sender()),
            mailer=await _resolve(container.mailer()),
            relay=await _resolve(container.relay()),
            blobs=await _resolve(container.blobs()),
            signer=await _resolve(container.signer()),
        )
    finally:
        await _resolve(container.shutdown_resources())
