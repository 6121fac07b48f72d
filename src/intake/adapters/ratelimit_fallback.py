"""The shared limiter with a per-process stand-in: no real submission is lost because
Redis is down. While it is, each process limits on its own (so N workers admit up to N
times the limit) and says so loudly; once Redis answers again the shared limits resume."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence

from intake.adapters.ratelimit_redis import RateLimiterUnavailable
from intake.domain.ratelimit import RateDecision, Window
from intake.ports.rate_limiter import RateLimiter

log = logging.getLogger("intake.ratelimit")


class FallbackRateLimiter:
    def __init__(
        self,
        primary: RateLimiter,
        fallback: RateLimiter,
        clock_for_retry: Callable[[], float] | None = None,
        *,
        retry_every: float = 1.0,
        warn_every: float = 60.0,
    ) -> None:
        """`clock_for_retry` is a monotonic clock in seconds (time.monotonic unless a
        test drives it); it times the back-off and the warnings, never the windows.
        While the primary is down it is tried again once every `retry_every` seconds,
        by one request at a time, so a down Redis costs the others nothing."""
        self._primary = primary
        self._fallback = fallback
        self._monotonic = clock_for_retry or time.monotonic
        self._retry_every = retry_every
        self._warn_every = warn_every
        self._down_since: float | None = None
        self._next_try = 0.0
        self._last_warning = -math.inf
        self._probing = False
        self._reports: list[Callable[[bool], None]] = []

    @property
    def degraded(self) -> bool:
        """True while the fallback answers, for health reports."""
        return self._down_since is not None

    def report_fallback(self, report: Callable[[bool], None]) -> None:
        """`report(True)` each time the fallback takes over, `report(False)` each time
        the primary answers again, and once now with the present state (a metric)."""
        self._reports.append(report)
        report(self.degraded)

    async def check_primary(self, ping: Callable[[], Awaitable[object]]) -> None:
        """Tries the primary once, as the process starts (`ping`: a request that counts
        nothing): one down from the start is said at once, not at the first submission,
        and the fallback answers from the first request."""
        try:
            await ping()
        except RateLimiterUnavailable as error:
            self._primary_failed(error)

    async def hit(self, windows: Sequence[Window], now: float) -> RateDecision:
        probe = self._down_since is not None
        if probe and (self._probing or self._monotonic() < self._next_try):
            return await self._fallback.hit(windows, now)
        if probe:
            self._probing = True
        try:
            decision = await self._primary.hit(windows, now)
        except RateLimiterUnavailable as error:
            self._primary_failed(error)
            return await self._fallback.hit(windows, now)
        finally:
            if probe:
                self._probing = False
        if self._down_since is not None:
            self._primary_recovered(self._down_since)
        return decision

    def _primary_failed(self, error: RateLimiterUnavailable) -> None:
        failed_at = self._monotonic()
        self._next_try = failed_at + self._retry_every
        if self._down_since is None:
            self._down_since = failed_at
            self._report(True)
        # Concurrent requests fail together; one warning per `warn_every` says it all.
        if failed_at - self._last_warning >= self._warn_every:
            self._last_warning = failed_at
            log.warning(
                "Redis unreachable: rate limits are held per process until it returns"
                " (down for %.0f s: %s)",
                failed_at - self._down_since,
                error,
            )

    def _primary_recovered(self, down_since: float) -> None:
        self._down_since = None
        self._last_warning = -math.inf
        self._report(False)
        log.info(
            "Redis reachable again after %.0f s: rate limits are shared again",
            self._monotonic() - down_since,
        )

    def _report(self, degraded: bool) -> None:
        for report in self._reports:
            report(degraded)
