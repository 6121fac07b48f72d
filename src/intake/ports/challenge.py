from __future__ import annotations

import enum
from typing import Protocol

from intake.domain.model import Challenge


class ChallengeVerdict(enum.Enum):
    PASSED = "passed"
    REJECTED = "rejected"
    # The provider could not be asked or could not answer (timeout, outage, its own
    # error): the submission is kept as `unverified`, neither lost nor waved through.
    UNAVAILABLE = "unavailable"


class ChallengeVerifier(Protocol):
    async def verify(
        self, challenge: Challenge, token: str, remote_ip: str | None
    ) -> ChallengeVerdict: ...
