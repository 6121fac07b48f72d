"""A serving process's composition: the storage (containers.py), the rate limiter, the
challenge client, the spam filter's knowledge and Akismet, and the submission pipeline
and the owner-side services made of them.

- embedded (the default): SQLite and the in-process rate limiter;
- production: PostgreSQL and Redis, chosen by INTAKE_DATABASE_URL and INTAKE_REDIS_URL
  (each independently: SQLite with Redis works for several workers on one host);
- tests and library users: any provider overridden (`ServeOverrides` names the ports).

A serving process opens no relay senders: `intake relay` delivers (relay_runtime.py).
Nothing is built at import time; `open_serve_runtime` opens the resources and closes them.
"""

from __future__ import annotations

import operator
from contextlib import AbstractAsyncContextManager
from typing import TypedDict, Unpack

from attrs import frozen
from dependency_injector import providers

from intake.admin_runtime import make_owner_services
from intake.client_resources import (
    OpinionContainer,
    challenge_resource,
    rate_limit_fallback,
    rate_limiter_resource,
    spam_knowledge_resource,
)
from intake.config import Settings
from intake.containers import StorageContainer, opened
from intake.domain.signing import DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.challenge import ChallengeVerifier
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.rate_limiter import FallbackReports, RateLimiter
from intake.ports.spam_opinion import SpamOpinion
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.service.admin import OwnerServices
from intake.service.pipeline import PipelineSettings, SubmissionPipeline
from intake.service.spam_knowledge import SpamKnowledge
from intake.service.spam_scoring import SpamScoring


class ServeOverrides(TypedDict, total=False):
    """The ports a test or a library user may replace, by name, in `open_serve_runtime`
    and `create_app`: one given (not None) is used as it is, and a store or blob store
    given stays open (whoever made it closes it)."""

    store: Store | None
    clock: Clock | None
    id_source: IdSource | None
    rate_limiter: RateLimiter | None
    challenge: ChallengeVerifier | None
    blobs: BlobStore | None
    spam_opinion: SpamOpinion | None


@frozen
class ServeRuntime:
    """The parts a serving process holds while it runs. The HTTP routes read them from
    `app.state.runtime`."""

    settings: Settings
    store: Store
    clock: Clock
    id_source: IdSource
    rate_limiter: RateLimiter
    challenge: ChallengeVerifier
    pipeline: SubmissionPipeline
    services: OwnerServices
    blobs: BlobStore | None
    signer: DownloadSigner
    # The Redis limiter's fallback to per-process windows, for health and metrics; None
    # without Redis, or with a rate limiter given.
    rate_limit_fallback: FallbackReports | None
    # Akismet, when it is asked (docs/scoring.md, "Akismet").
    spam_opinion: SpamOpinion | None


def pipeline_settings(settings: Settings) -> PipelineSettings:
    return PipelineSettings(
        limits=settings.limits,
        rate_limits=settings.rate_limits,
        plans=settings.plans,
        upload_timeout=settings.upload_timeout,
        storage_limit=settings.workspace_storage_limit,
        client_ip=settings.store_client_ip,
    )


class ServeContainer(OpinionContainer):
    """A serving process: the storage, the rate limiter, the challenge client, the spam
    filter's knowledge and Akismet, and the pipeline and the owner-side services made of
    them. It opens no relay senders: `intake relay` delivers."""

    rate_limiter: providers.Provider[RateLimiter] = providers.Resource(
        rate_limiter_resource, settings=StorageContainer.settings
    )
    challenge: providers.Provider[ChallengeVerifier] = providers.Resource(
        challenge_resource, settings=StorageContainer.settings
    )
    spam_knowledge: providers.Provider[SpamKnowledge] = providers.Resource(
        spam_knowledge_resource,
        settings=StorageContainer.settings,
        store=StorageContainer.store,
        clock=StorageContainer.clock,
    )
    pipeline = providers.Singleton(
        SubmissionPipeline,
        store=StorageContainer.store,
        rate_limiter=rate_limiter,
        challenge=challenge,
        clock=StorageContainer.clock,
        id_source=StorageContainer.id_source,
        settings=providers.Callable(pipeline_settings, StorageContainer.settings),
        blobs=StorageContainer.blobs,
        signer=StorageContainer.signer,
        spam_scoring=providers.Singleton(SpamScoring, spam_knowledge),
        spam_opinion=OpinionContainer.spam_opinion,
    )
    services = providers.Singleton(
        make_owner_services,
        settings=StorageContainer.settings,
        store=StorageContainer.store,
        clock=StorageContainer.clock,
        id_source=StorageContainer.id_source,
        blobs=StorageContainer.blobs,
        signer=StorageContainer.signer,
        spam_knowledge=spam_knowledge,
        spam_reports=providers.Callable(operator.is_not, OpinionContainer.spam_opinion, None),
    )
    runtime = providers.Singleton(
        ServeRuntime,
        settings=StorageContainer.settings,
        store=StorageContainer.store,
        clock=StorageContainer.clock,
        id_source=StorageContainer.id_source,
        rate_limiter=rate_limiter,
        challenge=challenge,
        pipeline=pipeline,
        services=services,
        blobs=StorageContainer.blobs,
        signer=StorageContainer.signer,
        rate_limit_fallback=providers.Callable(rate_limit_fallback, rate_limiter),
        spam_opinion=OpinionContainer.spam_opinion,
    )


def serve_container(
    settings: Settings,
    opening: StoreOpening = StoreOpening.SERVE,
    **overrides: Unpack[ServeOverrides],
) -> ServeContainer:
    """A serving process's container, each port given in `overrides` (not None)
    overriding its provider."""
    given = {name: port for name, port in overrides.items() if port is not None}
    return ServeContainer(settings=settings, opening=opening, **given)


def open_serve_runtime(
    settings: Settings,
    opening: StoreOpening = StoreOpening.SERVE,
    **overrides: Unpack[ServeOverrides],
) -> AbstractAsyncContextManager[ServeRuntime]:
    """A serving process's parts, any port given in `overrides` replacing its adapter;
    closed on exit. By default a database not reachable yet leaves the process up and
    not ready (StoreOpening.SERVE)."""
    container = serve_container(settings, opening, **overrides)
    return opened(container, container.runtime)
