"""The clients a process may open beside its storage (resources.py), each an async
generator that opens one and closes it, as the containers (containers.py) start and
stop them: the rate limiter (Redis when INTAKE_REDIS_URL is set), the challenge
providers' client, the webhook sender, Akismet, and the spam filter's knowledge. The
mailer opens no connection until it sends, so it is a plain function. Akismet's client
is declared here once, for every container that holds it.

Nothing is imported before it is chosen: a process loads the clients it opens.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
from dependency_injector import providers

from intake.adapters.challenge_http import HttpChallengeVerifier
from intake.adapters.ratelimit_fallback import FallbackRateLimiter
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.ratelimit_redis import open_redis_rate_limiter
from intake.adapters.tls import client_tls
from intake.adapters.user_agent import USER_AGENT
from intake.adapters.webhook_http import DEFAULT_TIMEOUT, HttpWebhookSender
from intake.config import ConfigError, Settings
from intake.config.variables import REDIS_URL
from intake.containers import StorageContainer
from intake.ports.challenge import ChallengeVerifier
from intake.ports.clock import Clock
from intake.ports.rate_limiter import FallbackReports, RateLimiter
from intake.ports.senders import Mailer, WebhookSender
from intake.ports.spam_opinion import SpamOpinion
from intake.ports.store import Store
from intake.service.spam_knowledge import SpamKnowledge


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


def rate_limit_fallback(limiter: RateLimiter) -> FallbackReports | None:
    """The Redis limiter's fallback to per-process windows, for health and metrics; None
    without Redis."""
    return limiter if isinstance(limiter, FallbackRateLimiter) else None


async def challenge_resource(settings: Settings) -> AsyncIterator[ChallengeVerifier]:
    # The verifier owns its client, so a process given another verifier opens none.
    async with httpx.AsyncClient(
        headers={"User-Agent": USER_AGENT},
        verify=client_tls(),
        limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
    ) as client:
        yield HttpChallengeVerifier(
            client, verify_urls=settings.verify_urls, timeout=settings.challenge_timeout
        )


async def webhook_sender_resource(settings: Settings) -> AsyncIterator[WebhookSender]:
    # A client of its own, apart from the challenge providers': receivers are many
    # hosts, each answering within the sender's timeout, and none follows redirects.
    async with httpx.AsyncClient(
        follow_redirects=False,
        verify=client_tls(),
        limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
    ) as client:
        yield HttpWebhookSender(
            client, timeout=DEFAULT_TIMEOUT, allow_private=settings.webhook_allow_private
        )


def open_mailer(settings: Settings) -> Mailer | None:
    """The SMTP mailer when INTAKE_SMTP_URL is set; None otherwise (mail deliveries are
    then parked, and invitations are not mailed)."""
    if settings.smtp_url is None:
        return None
    from intake.adapters.mail_smtp import SmtpMailer  # noqa: PLC0415 - only when mailing

    try:
        return SmtpMailer(settings.smtp_url)
    except ValueError as error:  # its message names INTAKE_SMTP_URL, never the password
        raise ConfigError(str(error)) from None


async def spam_opinion_resource(settings: Settings) -> AsyncIterator[SpamOpinion | None]:
    """Akismet when INTAKE_AKISMET_API_KEY and INTAKE_AKISMET_SITE_URL are set, else none
    (docs/scoring.md, "Akismet"). Opening it asks nothing of Akismet: a process starts
    whether or not Akismet answers, and a key it refuses is logged at the first check."""
    if settings.akismet_api_key is None or settings.akismet_site_url is None:
        yield None
        return
    # Imported only when asked for: a process without Akismet loads no client.
    from intake.adapters.akismet_opinion import AkismetOpinion  # noqa: PLC0415

    opinion = AkismetOpinion(
        settings.akismet_api_key,
        settings.akismet_site_url,
        timeout=settings.akismet_timeout,
        api_url=settings.akismet_api_url,
    )
    try:
        yield opinion
    finally:
        await opinion.aclose()


async def spam_knowledge_resource(
    settings: Settings, store: Store, clock: Clock
) -> AsyncIterator[SpamKnowledge]:
    """One per process: the pipeline scores with it, the owner's triage refreshes it."""
    knowledge = SpamKnowledge(
        store.spam, store.secrets, clock, token_budget=settings.spam_cache_tokens
    )
    try:
        yield knowledge
    finally:
        await knowledge.close()


class OpinionContainer(StorageContainer):
    """The storage, and Akismet when it is configured: one client for the process,
    which both the pipeline (serve_runtime.py) and the relay (relay_runtime.py) use
    where a process holds both (library_runtime.py)."""

    spam_opinion: providers.Provider[SpamOpinion | None] = providers.Resource(
        spam_opinion_resource, settings=StorageContainer.settings
    )
