"""Who is calling with an API key, and whether they may: the one place keys are checked,
for the server-side submission endpoint and the management API alike."""

from __future__ import annotations

from intake.domain import ids
from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.model import ApiKey, Scope
from intake.domain.ratelimit import RateLimits, management_windows
from intake.ports.api_keys import ApiKeyRepository
from intake.ports.clock import Clock
from intake.ports.pipeline_store import KeyLookup
from intake.ports.rate_limiter import RateLimiter


async def live_key(keys: KeyLookup, authorization: str | None) -> ApiKey:
    """The key an `Authorization: Bearer ...` header names. A malformed header, another
    scheme, an unknown or a revoked key are one refusal alike: 401 unauthorized."""
    scheme, _, secret = (authorization or "").strip().partition(" ")
    secret = secret.strip()
    if scheme.lower() != "bearer" or not ids.is_well_formed_api_key(secret):
        raise IntakeError.of(ErrorCode.UNAUTHORIZED)
    digest = ids.hash_secret(secret)
    key = await keys.find_by_hash(digest)
    if key is None or not ids.same_hash(key.key_hash, digest) or key.revoked:
        raise IntakeError.of(ErrorCode.UNAUTHORIZED)
    return key


class ApiAccess:
    """The management API's door: a live key, within its rate limits, with the scope the
    operation needs."""

    def __init__(
        self, keys: ApiKeyRepository, rate_limiter: RateLimiter, clock: Clock, limits: RateLimits
    ) -> None:
        self._keys = keys
        self._rate_limiter = rate_limiter
        self._clock = clock
        self._limits = limits

    async def authorize(self, authorization: str | None, scope: Scope) -> ApiKey:
        """The caller's key; IntakeError 401 unauthorized, 429 rate_limited (every
        request of a live key counts, refused or not by its scope) or 403 forbidden."""
        key = await live_key(self._keys, authorization)
        windows = management_windows(self._limits, key.key_id)
        decision = await self._rate_limiter.hit(windows, self._clock.now().timestamp())
        if not decision.allowed:
            raise IntakeError.of(ErrorCode.RATE_LIMITED, retry_after=decision.retry_after)
        if not key.allows(scope):
            raise IntakeError.of(ErrorCode.FORBIDDEN)
        return key
