"""The spam opinion service a process asks and reports to: Akismet when
INTAKE_AKISMET_API_KEY and INTAKE_AKISMET_SITE_URL are set, else none (docs/scoring.md,
"Akismet"). Opening it asks nothing of Akismet: a process starts whether or not
Akismet answers, and a key it refuses is logged at the first check."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from intake.config import Settings
from intake.ports.spam_opinion import SpamOpinion


@asynccontextmanager
async def spam_opinion_resource(settings: Settings) -> AsyncIterator[SpamOpinion | None]:
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
