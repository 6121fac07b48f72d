from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol

from intake.domain.model import Challenge, ChallengeProvider

# Where each provider verifies a token, and how long an answer is waited for: defaults
# of the settings, kept apart from the HTTP verifier so that reading them loads no client.
DEFAULT_VERIFY_URLS: Mapping[ChallengeProvider, str] = MappingProxyType(
    {
        ChallengeProvider.TURNSTILE: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
        ChallengeProvider.HCAPTCHA: "https://api.hcaptcha.com/siteverify",
        ChallengeProvider.RECAPTCHA: "https://www.google.com/recaptcha/api/siteverify",
    }
)

DEFAULT_TIMEOUT = 3.0


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
