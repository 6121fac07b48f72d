"""What a serving process runs on: the store, the blob store, the download-link signer,
the rate limiter, the challenge client, and the submission pipeline and the owner-side
services made of them.

- embedded (the default): SQLite and the in-process rate limiter;
- production: PostgreSQL and Redis, chosen by INTAKE_DATABASE_URL and INTAKE_REDIS_URL
  (each independently: SQLite with Redis works for several workers on one host);
- tests and library users: any port replaced through `ServeOverrides`.

A serving process opens no relay senders: `intake relay` delivers (relay_runtime.py).
Nothing is built at import time; `open_serve_runtime` opens the resources and closes them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TypedDict, Unpack

import httpx
from attrs import frozen

from intake.adapters.challenge_http import HttpChallengeVerifier
from intake.adapters.ratelimit_fallback import FallbackRateLimiter
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.ratelimit_redis import open_redis_rate_limiter
from intake.adapters.system import SecureIdSource, SystemClock
from intake.adapters.user_agent import USER_AGENT
from intake.admin_runtime import make_owner_services
from intake.config import ConfigError, Settings
from intake.config.variables import REDIS_URL
from intake.domain.signing import DownloadSigner
from intake.opinion_resource import spam_opinion_resource
from intake.ports.blobs import BlobStore
from intake.ports.challenge import ChallengeVerifier
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.rate_limiter import FallbackReports, RateLimiter
from intake.ports.spam_opinion import SpamOpinion
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.resources import enter_storage
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


@asynccontextmanager
async def rate_limiter_resource(
    settings: Settings, *, check_redis: bool = True
) -> AsyncIterator[RateLimiter]:
    """`check_redis`: ask Redis at once whether it answers, as a serving process does
    (False: the URL is checked, and nothing is asked of Redis)."""
    if settings.redis_url is None:
        yield InProcessRateLimiter()
        return
    # Redis holds the windows shared by every worker; while it is unreachable each
    # process limits on its own rather than refusing real submissions.
    async with AsyncExitStack() as stack:
        try:
            shared = await stack.enter_async_context(open_redis_rate_limiter(settings.redis_url))
        except ValueError as error:  # redis-py's refusal of the URL names no credentials
            raise ConfigError(f"{REDIS_URL.name}: {error}") from None
        limiter = FallbackRateLimiter(shared, InProcessRateLimiter())
        # A Redis down from the start is logged now, not at the first submission.
        if check_redis:
            await limiter.check_primary(shared.ping)
        yield limiter


@asynccontextmanager
async def challenge_resource(settings: Settings) -> AsyncIterator[ChallengeVerifier]:
    # The verifier owns its client, so a runtime given another verifier opens none.
    async with httpx.AsyncClient(
        headers={"User-Agent": USER_AGENT},
        limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
    ) as client:
        yield HttpChallengeVerifier(
            client, verify_urls=settings.verify_urls, timeout=settings.challenge_timeout
        )


def pipeline_settings(settings: Settings) -> PipelineSettings:
    return PipelineSettings(
        limits=settings.limits,
        rate_limits=settings.rate_limits,
        plans=settings.plans,
        upload_timeout=settings.upload_timeout,
        storage_limit=settings.workspace_storage_limit,
        client_ip=settings.store_client_ip,
    )


async def enter_serving(
    stack: AsyncExitStack,
    settings: Settings,
    opening: StoreOpening,
    overrides: ServeOverrides,
) -> ServeRuntime:
    """Opens what `overrides` does not give, each closed by `stack` in the opposite
    order: the store as `opening` says (ports/store_opening.py), the blob store, the
    signer, the rate limiter and the challenge client."""
    clock = overrides.get("clock")
    if clock is None:
        clock = SystemClock()
    storage = await enter_storage(
        stack,
        settings,
        opening,
        clock,
        store=overrides.get("store"),
        blobs=overrides.get("blobs"),
    )
    id_source = overrides.get("id_source")
    if id_source is None:
        id_source = SecureIdSource()
    limiter = overrides.get("rate_limiter")
    fallback: FallbackReports | None = None
    if limiter is None:
        limiter = await stack.enter_async_context(rate_limiter_resource(settings))
        if isinstance(limiter, FallbackRateLimiter):
            fallback = limiter
    challenge = overrides.get("challenge")
    if challenge is None:
        challenge = await stack.enter_async_context(challenge_resource(settings))
    # One per process: the pipeline scores with it, the owner's triage refreshes it.
    knowledge = SpamKnowledge(
        storage.store.spam,
        storage.store.secrets,
        clock,
        token_budget=settings.spam_cache_tokens,
    )
    stack.push_async_callback(knowledge.close)
    opinion = overrides.get("spam_opinion")
    if opinion is None:
        opinion = await stack.enter_async_context(spam_opinion_resource(settings))
    pipeline = SubmissionPipeline(
        store=storage.store,
        rate_limiter=limiter,
        challenge=challenge,
        clock=clock,
        id_source=id_source,
        settings=pipeline_settings(settings),
        blobs=storage.blobs,
        signer=storage.signer,
        spam_scoring=SpamScoring(knowledge),
        spam_opinion=opinion,
    )
    return ServeRuntime(
        settings=settings,
        store=storage.store,
        clock=clock,
        id_source=id_source,
        rate_limiter=limiter,
        challenge=challenge,
        pipeline=pipeline,
        services=make_owner_services(
            settings, storage, clock, id_source, knowledge, spam_reports=opinion is not None
        ),
        blobs=storage.blobs,
        signer=storage.signer,
        rate_limit_fallback=fallback,
        spam_opinion=opinion,
    )


@asynccontextmanager
async def open_serve_runtime(
    settings: Settings,
    opening: StoreOpening = StoreOpening.SERVE,
    **overrides: Unpack[ServeOverrides],
) -> AsyncIterator[ServeRuntime]:
    """A serving process's parts, any port given in `overrides` replacing its adapter;
    closed on exit. By default a database not reachable yet leaves the process up and
    not ready (StoreOpening.SERVE)."""
    async with AsyncExitStack() as stack:
        yield await enter_serving(stack, settings, opening, overrides)
