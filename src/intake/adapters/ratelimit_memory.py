"""An exact sliding-window limiter in process memory: the embedded default, and the
fallback when Redis cannot be reached. It holds for one process only."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from intake.domain.ratelimit import RateDecision, Window, retry_after

# Idle windows are dropped every so many hits, so memory follows the active clients.
_SWEEP_EVERY = 10_000
# A window of at most this many hits keeps them in a list: a few dozen bytes where a
# deque takes some 600. A larger window (a form's) keeps a deque, whose oldest hits
# leave without moving the rest.
_SHORT_LOG = 64

# A key's hits in its window. Each client address holds its windows for ten minutes, so
# with many addresses they are most of the embedded server's memory, and most addresses
# are seen once: a single hit is kept as the bare time (24 bytes), a log made only at the
# second.
Hits = float | list[float] | deque[float]


class InProcessRateLimiter:
    def __init__(self) -> None:
        # Keyed by the windows' length, so that a key costs one entry and the sweep knows
        # when each table's keys fall idle without a length kept per key.
        self._tables: dict[int, dict[str, Hits]] = {}
        self._since_sweep = 0

    async def hit(self, windows: Sequence[Window], now: float) -> RateDecision:
        return self.hit_now(windows, now)

    def hit_now(self, windows: Sequence[Window], now: float) -> RateDecision:
        """The whole check-and-count, without a suspension point: atomic on one loop."""
        now = float(now)
        self._since_sweep += 1
        if self._since_sweep >= _SWEEP_EVERY:
            self._sweep(now)
        wait = 0
        counted: list[tuple[dict[str, Hits], str, Hits | None, int]] = []
        for window in windows:
            rule = window.rule
            table = self._tables.get(rule.window_seconds)
            if table is None:
                table = self._tables[rule.window_seconds] = {}
            hits = _in_window(table.get(window.key), now - rule.window_seconds)
            if hits is not None and _count(hits) >= rule.limit:
                # Refused hits are not counted, so a full log holds exactly `limit` hits
                # and admission resumes when the oldest leaves the window.
                oldest = hits if isinstance(hits, float) else hits[-rule.limit]
                wait = max(wait, retry_after(oldest, rule.window_seconds, now))
            counted.append((table, window.key, hits, rule.limit))
        if wait:
            return RateDecision(allowed=False, retry_after=wait)
        for table, key, hits, limit in counted:
            if hits is None:
                table[key] = now
            elif isinstance(hits, float):
                table[key] = [hits, now] if limit <= _SHORT_LOG else deque((hits, now))
            else:
                hits.append(now)
        return RateDecision(allowed=True)

    @property
    def keys_held(self) -> int:
        """How many windows' hits are in memory: what a sweep of idle keys brings down."""
        return sum(len(table) for table in self._tables.values())

    def _sweep(self, now: float) -> None:
        self._since_sweep = 0
        for seconds, table in self._tables.items():
            start = now - seconds
            for key in [k for k, hits in table.items() if _last(hits) <= start]:
                del table[key]


def _in_window(hits: Hits | None, start: float) -> Hits | None:
    """The hits after `start`: a single hit gone is no hits, a log drops its front."""
    if hits is None or isinstance(hits, float):
        return hits if hits is not None and hits > start else None
    if isinstance(hits, list):
        gone = 0
        while gone < len(hits) and hits[gone] <= start:
            gone += 1
        if gone:
            del hits[:gone]
        return hits
    while hits and hits[0] <= start:
        hits.popleft()
    return hits


def _count(hits: Hits) -> int:
    return 1 if isinstance(hits, float) else len(hits)


def _last(hits: Hits) -> float:
    if isinstance(hits, float):
        return hits
    return hits[-1] if hits else float("-inf")
