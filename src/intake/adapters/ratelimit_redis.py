"""Exact sliding windows in Redis, shared by every worker and host (decisions.md "Rate
limits"). Each window is a sorted set of hit timestamps; one Lua script call checks and
counts all the windows of a request atomically. The calls of concurrent requests go to
Redis together, in one round trip (natural batching: a lone request goes at once), where
Redis runs them one after the other, each deciding exactly as if it had gone alone.

Time is the caller's: `now` is the worker's clock (the pipeline passes its Clock), not
Redis TIME, so the pipeline uses one instant per request and tests can drive time. Across
hosts the windows are then exact up to the clock skew between them, which NTP keeps to
milliseconds.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, RedisError

from intake.adapters.coalescing import Coalescer
from intake.adapters.redis_script_batch import ScriptBatches
from intake.domain.errors import StorageUnavailable
from intake.domain.ratelimit import RateDecision, Window, retry_after

DEFAULT_PREFIX = "intake:rl:"

# KEYS[i]: the sorted set of window i. ARGV[1]: now; ARGV[2]: a member unique to this
# call; then per window: the limit and the window in seconds. Timestamps travel as
# Python's repr and come back as Redis's shortest round-trip form, so no float is rounded
# on the way. The cutoff (hits at or before it have left) is now minus the window: the
# same double subtraction as in the in-process limiter, so the same edge, and redis.call
# passes a number on as %.17g, which Redis reads back as that double exactly. For a
# refused request the script returns, per window, the score of the hit that must leave
# before one more fits ('' when the window has room), and adds nothing; for an admitted
# one, an empty array.
_HIT_SCRIPT = """
local now = tonumber(ARGV[1])
local refused = false
local oldest = {}
for i, key in ipairs(KEYS) do
    local limit = tonumber(ARGV[2 * i + 1])
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - tonumber(ARGV[2 * i + 2]))
    local count = redis.call('ZCARD', key)
    if count >= limit then
        local leaving = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
        oldest[i] = leaving[2]
        refused = true
    else
        oldest[i] = ''
    end
end
if refused then
    return oldest
end
for i, key in ipairs(KEYS) do
    redis.call('ZADD', key, ARGV[1], ARGV[2])
    redis.call('PEXPIRE', key, ARGV[2 * i + 2] * 1000)
end
return {}
"""


# Frozen, so one for every admitted hit.
_ADMITTED = RateDecision(allowed=True)


class RateLimiterUnavailable(StorageUnavailable):
    """Redis cannot answer now. A StorageUnavailable, so a limiter used without the
    fallback turns a down Redis into a 503 with Retry-After rather than a 500."""


@contextmanager
def _map_redis_errors() -> Iterator[None]:
    """Every server or connection condition (refused, timed out, loading, read-only
    replica, out of memory, cluster down) means the same to the service: no shared
    answer now. The driver's error stays chained for the log. DataError is an argument
    the client refused to encode: a bug in this adapter, left alone."""
    try:
        yield
    except DataError:
        raise
    except RedisError as error:
        raise RateLimiterUnavailable(f"redis: {type(error).__name__}: {error}") from error
    except OSError as error:
        raise RateLimiterUnavailable(f"redis: {type(error).__name__}: {error}") from error


@dataclass(frozen=True, slots=True)
class _Hit:
    ticket: int  # the order the limiter was called in
    command: bytes  # the script call, packed


class RedisRateLimiter:
    def __init__(self, client: Redis, prefix: str = DEFAULT_PREFIX, max_batch: int = 64) -> None:
        # The window keys carry a Redis Cluster hash tag, `{form_id}`, so the windows of
        # one request share a slot; a brace in the prefix would become the tag instead.
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"a rate-limit key prefix cannot hold braces: {prefix!r}")
        self._prefix = prefix
        self._client = client
        self._script = ScriptBatches(client, _HIT_SCRIPT)
        self._batches: Coalescer[_Hit, object] = Coalescer(self._send, max_batch)
        self._tickets = 0
        # Random per limiter, then the ticket: unique among every worker's hits, at the
        # cost of one random draw per process rather than one per hit.
        self._member_prefix = secrets.token_hex(12).encode()
        self._failed_before = 0  # hits with a lower ticket waited on a failed round trip
        self._failure: RateLimiterUnavailable | None = None

    async def ping(self) -> None:
        """One round trip that counts nothing: RateLimiterUnavailable while Redis cannot
        answer."""
        with _map_redis_errors():
            await self._client.ping()

    async def hit(self, windows: Sequence[Window], now: float) -> RateDecision:
        if not windows:
            return _ADMITTED
        keys = [(self._prefix + window.key).encode() for window in windows]
        # A member of its own: two hits at the same instant are two entries, not one.
        ticket = self._tickets
        stamp = repr(now).encode()
        args = [stamp, b"%s:%s%x" % (stamp, self._member_prefix, ticket)]
        for window in windows:
            rule = window.rule
            args += [b"%d" % rule.limit, b"%d" % rule.window_seconds]
        self._tickets = ticket + 1
        reply = await self._batches.call(_Hit(ticket, self._script.command(keys, args)))
        if isinstance(reply, RedisError):  # Redis refused this call alone
            raise RateLimiterUnavailable(f"redis: {type(reply).__name__}: {reply}") from reply
        oldest = cast(list[bytes], reply)
        if not oldest:
            return _ADMITTED
        wait = max(
            retry_after(float(score), window.rule.window_seconds, now)
            for window, score in zip(windows, oldest, strict=True)
            if score
        )
        return RateDecision(allowed=False, retry_after=wait)

    async def _send(self, hits: Sequence[_Hit]) -> list[object]:
        # Hits that queued while a round trip failed fail with it at once, as they would
        # have failed side by side had each gone alone: a hung Redis then holds a request
        # up for one socket timeout, not for one per batch queued ahead of it.
        failure = self._failure
        if failure is not None and hits[-1].ticket < self._failed_before:
            raise RateLimiterUnavailable(str(failure)) from failure.__cause__
        try:
            with _map_redis_errors():
                return await self._script.run([hit.command for hit in hits])
        except RateLimiterUnavailable as error:
            self._failure, self._failed_before = error, self._tickets
            raise


@asynccontextmanager
async def open_redis_rate_limiter(
    url: str,
    *,
    prefix: str = DEFAULT_PREFIX,
    socket_timeout: float = 0.5,
    connect_timeout: float = 2.0,
) -> AsyncIterator[RedisRateLimiter]:
    """A limiter on its own connection pool, closed on exit. Nothing is sent on opening:
    a service behind FallbackRateLimiter starts while Redis is down.

    `socket_timeout` bounds each round trip (a batch's calls and all their answers), so a
    hung Redis delays a request by at most that before the fallback answers. Connecting
    gets longer (`connect_timeout`): on a busy host a loopback connect can take more than
    half a second; a refused connection fails at once either way, and while Redis is
    down only one request at a time probes it.

    A broken connection is retried once, at once, since pooled connections go stale when
    Redis restarts. The retry sends the whole round trip again: should the break come
    after Redis ran its calls, each hit of that round trip counts twice (the safe side: a
    limit is reached early, never passed). A timeout is not retried: the calls may well
    have run."""
    client = Redis.from_url(
        url,
        socket_timeout=socket_timeout,
        socket_connect_timeout=connect_timeout,
        retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
    )
    try:
        yield RedisRateLimiter(client, prefix)
    finally:
        await client.aclose()
