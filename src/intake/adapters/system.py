"""The real clock and randomness."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class SecureIdSource:
    def random_bytes(self, n: int) -> bytes:
        return secrets.token_bytes(n)
