"""How long real commits take, so that a filled honeypot's own commit lasts as long.

A honeypot's commit writes one counter row; a real one writes the submission, its
indexes, the outbox row and the quota. On a quiet disk that is about 0.1 ms more,
enough for a bot timing its answers to tell them apart. So each process keeps the
durations of its recent real commits, and a honeypot's commit is stretched to one of
them drawn at random: both durations then come from the same distribution."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

WINDOW = 256  # recent enough to follow the store's pace, large enough to draw from
# asyncio's timers are only as fine as the selector's (epoll waits whole milliseconds):
# the last stretch of a wait yields to the loop until the deadline instead.
TIMER_GRAIN = 0.002


async def wait_precisely(seconds: float) -> None:
    """Wait `seconds` to within microseconds, letting other requests run meanwhile."""
    deadline = time.perf_counter() + seconds
    if seconds > TIMER_GRAIN:
        await asyncio.sleep(seconds - TIMER_GRAIN)
    while time.perf_counter() < deadline:  # noqa: ASYNC110 (a deadline, not an event)
        await asyncio.sleep(0)


class CommitTiming:
    def __init__(
        self,
        *,
        timer: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], Awaitable[None]] = wait_precisely,
        choose: Callable[[Sequence[float]], float] = secrets.choice,
    ) -> None:
        self._real: deque[float] = deque(maxlen=WINDOW)
        self._timer = timer
        self._sleep = sleep
        self._choose = choose

    def start(self) -> float:
        return self._timer()

    def real_committed(self, started: float) -> None:
        self._real.append(self._timer() - started)

    async def stretch_decoy(self, started: float) -> None:
        """Wait until the decoy's commit has lasted as long as a real one drawn at random
        (not at all before any real commit is known)."""
        if not self._real:
            return
        remaining = self._choose(self._real) - (self._timer() - started)
        if remaining > 0:
            await self._sleep(remaining)
