from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from intake.domain.ratelimit import RateDecision, Window


class RateLimiter(Protocol):
    async def hit(self, windows: Sequence[Window], now: float) -> RateDecision:
        """Admits the request only if every window has room, and then counts it in every
        window, atomically. A refused request is not counted."""
        ...
