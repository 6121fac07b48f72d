from __future__ import annotations

from intake.domain.model import Challenge
from intake.ports.challenge import ChallengeVerdict


class FakeChallengeVerifier:
    """Answers from a table of tokens; any other token is rejected."""

    def __init__(self, verdicts: dict[str, ChallengeVerdict] | None = None) -> None:
        self.verdicts = dict(verdicts or {})
        self.calls: list[tuple[Challenge, str, str | None]] = []

    async def verify(
        self, challenge: Challenge, token: str, remote_ip: str | None
    ) -> ChallengeVerdict:
        self.calls.append((challenge, token, remote_ip))
        return self.verdicts.get(token, ChallengeVerdict.REJECTED)
