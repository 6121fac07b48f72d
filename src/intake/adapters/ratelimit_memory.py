"""An exact sliding-window limiter in process memory: the embedded default, and the
fallback when Redis cannot be reached. It holds for one process only."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from intake.domain.ratelimit import RateDecision, Window, retry_after

# Idle windows are dropped every so many hits, so memory follows the active clients.
_SWEEP_EVERY = 10_000
# A window of at most this many hits keeps them in a list: a few dozen bytes where a
# deque takes some 600, and one client address holds such windows for ten minutes
# (with many addresses, most of the embedded server's memory). A larger window (a
# form's) keeps a deque, whose oldest hits leave without moving the rest.
_SHORT_LOG = 64

Log = list[float] | deque[float]


class InProcessRateLimiter:
    def __init__(self) -> None:
        self._hits: dict[str, Log] = {}
        self._windows: dict[str, int] = {}
        self._since_sweep = 0

    async def hit(self, windows: Sequence[Window], now: float) -> RateDecision:
        return self.hit_now(windows, now)

    def hit_now(self, windows: Sequence[Window], now: float) -> RateDecision:
        """The whole check-and-count, without a suspension point: atomic on one loop."""
        self._since_sweep += 1
        if self._since_sweep >= _SWEEP_EVERY:
            self._sweep(now)
        wait = 0
        logs: list[Log] = []
        for window in windows:
            log = self._hits.get(window.key)
            if log is None:
                log = self._hits[window.key] = [] if window.rule.limit <= _SHORT_LOG else deque()
                self._windows[window.key] = window.rule.window_seconds
            _forget(log, now - window.rule.window_seconds)
            if len(log) >= window.rule.limit:
                # Refused hits are not counted, so a full log holds exactly `limit` hits
                # and admission resumes when the oldest leaves the window.
                wait = max(
                    wait, retry_after(log[-window.rule.limit], window.rule.window_seconds, now)
                )
            logs.append(log)
        if wait:
            return RateDecision(allowed=False, retry_after=wait)
        for log in logs:
            log.append(now)
        return RateDecision(allowed=True)

    @property
    def keys_held(self) -> int:
        """How many windows' logs are in memory: what a sweep of idle keys brings down."""
        return len(self._hits)

    def _sweep(self, now: float) -> None:
        self._since_sweep = 0
        for key in [
            k for k, log in self._hits.items() if not log or log[-1] <= now - self._windows[k]
        ]:
            del self._hits[key]
            del self._windows[key]


def _forget(log: Log, start: float) -> None:
    """Drops the hits at or before `start` from the front, up to the first one after it."""
    if isinstance(log, list):
        gone = 0
        while gone < len(log) and log[gone] <= start:
            gone += 1
        if gone:
            del log[:gone]
        return
    while log and log[0] <= start:
        log.popleft()
