"""The composition root: one container builds intake for each of its uses.

- embedded (the default): SQLite and the in-process rate limiter;
- production: PostgreSQL and Redis, chosen by INTAKE_DATABASE_URL and INTAKE_REDIS_URL
  (each independently: SQLite with Redis works for several workers on one host);
- tests and library users: any port replaced by a fake through `open_runtime(...)`.

The relay's senders are built here too: a webhook sender with its own HTTP client, and
a mailer when INTAKE_SMTP_URL is set (None otherwise: mail deliveries are then parked).
So are the blob store that keeps uploaded files (INTAKE_BLOB_URL; None when unset, and
then no form can take files) and the signer of download links, whose secret every
process of a deployment shares: INTAKE_DOWNLOAD_SECRET, else one made once and kept in
the database.

Nothing is built at import time; `open_runtime` opens the resources and closes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import httpx
from attrs import frozen
from dependency_injector import containers, providers

from intake.adapters.blobs.factory import open_blob_store
from intake.adapters.challenge_http import HttpChallengeVerifier
from intake.adapters.ratelimit_fallback import FallbackRateLimiter
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.ratelimit_redis import open_redis_rate_limiter
from intake.adapters.system import SecureIdSource, SystemClock
from intake.adapters.user_agent import USER_AGENT
from intake.adapters.webhook_http import DEFAULT_TIMEOUT, HttpWebhookSender, system_resolver
from intake.config import ConfigError, Settings
from intake.domain.errors import StorageUnavailable
from intake.domain.signing import DownloadLink, DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.challenge import ChallengeVerifier
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.rate_limiter import RateLimiter
from intake.ports.senders import Mailer, WebhookSender
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.service.admin import Admin
from intake.service.pipeline import PipelineSettings, SubmissionPipeline
from intake.service.relay import Relay

log = logging.getLogger("intake")

# The name under which the store keeps the download-link secret.
DOWNLOAD_SECRET_NAME = "download-links"  # noqa: S105 - a name, not the secret
DOWNLOAD_SECRET_BYTES = 32


async def _store_resource(
    settings: Settings, opening: StoreOpening = StoreOpening.PREPARE
) -> AsyncIterator[Store]:
    # Imported only when chosen: a deployment loads the drivers it uses.
    store: Store
    if settings.is_sqlite:
        from intake.adapters.sqlite import open_sqlite_store  # noqa: PLC0415

        store = await open_sqlite_store(
            settings.database_url, create=opening is not StoreOpening.READ
        )
    elif settings.is_postgres:
        from intake.adapters.postgres import open_postgres_store  # noqa: PLC0415

        store = await open_postgres_store(
            settings.database_url,
            max_size=settings.database_pool_size,
            pool_timeout=settings.database_pool_timeout,
            wait_for_server=opening is StoreOpening.SERVE,
            require_schema=opening in (StoreOpening.WRITE, StoreOpening.READ),
        )
    else:
        raise ConfigError(
            f"INTAKE_DATABASE_URL: unsupported database {settings.database_url.split(':')[0]!r}"
        )
    try:
        yield store
    finally:
        await store.close()


# The store alone, for what needs nothing else: `intake migrate` opens no runtime, whose
# parts would read tables the migration is about to make.
open_store = asynccontextmanager(_store_resource)


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


async def _blobs_resource(settings: Settings, clock: Clock) -> AsyncIterator[BlobStore | None]:
    if settings.blob_url is None:
        yield None
        return
    try:
        blobs = open_blob_store(settings.blob_url, clock=clock)
    except ValueError as error:  # its message names no credentials: the URL holds none
        raise ConfigError(f"INTAKE_BLOB_URL: {error}") from None
    try:
        yield blobs
    finally:
        await blobs.aclose()


_UNREAD = "the download-link secret has not been read from the database yet"
# How often a process that could not read the secret as it started tries again.
SECRET_RETRY_SECONDS = 1.0


class _PendingSigner(DownloadSigner):
    """Stands in while the stored secret cannot be read (a database not yet migrated, or
    unreachable as the process started): until a background task has read it, it makes
    and accepts no link, and says so as a storage failure (a 503, a delivery tried again
    later), never with a link that no other process would accept. Once read, it signs
    as the others do."""

    def loaded(self) -> DownloadSigner | None:
        signer: DownloadSigner | None = self.__dict__.get("_loaded")
        return signer

    def load(self, secret: bytes) -> None:
        # The class is frozen; the one late value lives outside its fields.
        self.__dict__["_loaded"] = DownloadSigner(secret, self.base_url, self.ttl)

    def link(self, submission_id: str, index: int, now: datetime) -> DownloadLink:
        signer = self.loaded()
        if signer is None:
            raise StorageUnavailable(_UNREAD)
        return signer.link(submission_id, index, now)

    def verify(
        self,
        submission_id: str,
        index: int,
        expires: str | None,
        signature: str | None,
        now: datetime,
    ) -> bool:
        signer = self.loaded()
        if signer is None:
            raise StorageUnavailable(_UNREAD)
        return signer.verify(submission_id, index, expires, signature, now)


async def _read_secret(store: Store) -> bytes:
    return await store.secrets.get_or_create(
        DOWNLOAD_SECRET_NAME, os.urandom(DOWNLOAD_SECRET_BYTES)
    )


async def _load_later(store: Store, pending: _PendingSigner) -> None:
    while True:
        await asyncio.sleep(SECRET_RETRY_SECONDS)
        try:
            pending.load(await _read_secret(store))
        except StorageUnavailable:
            continue
        log.info("download-link secret read; download links are available")
        return


async def _signer_resource(settings: Settings, store: Store) -> AsyncIterator[DownloadSigner]:
    base_url = settings.public_base_url
    ttl = timedelta(seconds=settings.download_ttl)
    if settings.download_secret is not None:
        yield DownloadSigner(settings.download_secret.encode("utf-8"), base_url, ttl)
        return
    try:
        secret = await _read_secret(store)
    except StorageUnavailable as error:
        # A serving worker may open before the database answers, or before it is
        # migrated: it must still open, and read the secret once it can.
        log.info(
            "download links wait for the database: %s",
            _UNREAD,
            extra={"error": str(error) or type(error).__name__},
        )
        pending = _PendingSigner(os.urandom(DOWNLOAD_SECRET_BYTES), base_url, ttl)
        task = asyncio.create_task(_load_later(store, pending))
        try:
            yield pending
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return
    yield DownloadSigner(secret, base_url, ttl)


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
    store = providers.Resource(_store_resource, settings=settings, opening=store_opening)
    rate_limiter = providers.Resource(_rate_limiter_resource, settings=settings)
    challenge = providers.Resource(_challenge_resource, settings=settings)
    blobs = providers.Resource(_blobs_resource, settings=settings, clock=clock)
    signer = providers.Resource(_signer_resource, settings=settings, store=store)
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
