from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from intake.domain.ratelimit import RateDecision, Window


class RateLimiter(Protocol):
    async def hit(self, windows: Sequence[Window], now: float) -> RateDecision:
        """Admits the request only if every window has room, and then counts it in every
        window, atomically. A refused request is not counted."""
        ...


class FallbackReports(Protocol):
    """A shared rate limiter that falls back to per-process windows while its server is
    down (FallbackRateLimiter), as the service's health and metrics read it."""

    @property
    def degraded(self) -> bool:
        """True while the per-process windows answer."""
        ...

    def report_fallback(self, report: Callable[[bool], None]) -> None:
        """`report(True)` each time it falls back, `report(False)` each time it recovers,
        and once at once with the present state."""
        ...
