from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta


class FakeClock:
    """A clock that moves only when told to: tests never sleep to pass time."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 15, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)

    def set(self, moment: datetime) -> None:
        self._now = moment


class SeededIdSource:
    """Repeatable randomness for tests."""

    def __init__(self, seed: int = 0) -> None:
        self._random = random.Random(seed)  # noqa: S311 - test determinism, not secrecy

    def random_bytes(self, n: int) -> bytes:
        return self._random.randbytes(n)
