"""The rate-limiter contract (decisions.md "Rate limits"), run against the in-process
limiter, the Redis limiter, and the fallback answering while Redis is down; then what
only Redis has (shared state, expiring keys) and the fallback's own behaviour."""

from __future__ import annotations

import logging
import random
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from intake.adapters.ratelimit_fallback import FallbackRateLimiter
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.ratelimit_redis import (
    RateLimiterUnavailable,
    RedisRateLimiter,
    open_redis_rate_limiter,
)
from intake.domain.errors import StorageUnavailable
from intake.domain.ratelimit import RateDecision, RateRule, Window
from intake.ports.rate_limiter import RateLimiter

pytestmark = pytest.mark.anyio

# Nothing listens on port 1: connections are refused at once.
CLOSED_URL = "redis://127.0.0.1:1/0"
FALLBACK_LOGGER = "intake.ratelimit"

# An epoch instant whose fractions are exact in binary, so `now + retry_after` is exact.
T0 = 1_700_000_000.125


def _client(url: str, connect_timeout: float = 5.0) -> Redis:
    # No retries: a test should see the first failure. Connecting may take a while on a
    # loaded machine when many tasks open connections at once (the concurrency tests);
    # tests of an unreachable server pass a short timeout.
    return Redis.from_url(
        url,
        socket_timeout=5,
        socket_connect_timeout=connect_timeout,
        retry=Retry(NoBackoff(), 0),
    )


@asynccontextmanager
async def _redis(url: str) -> AsyncIterator[Redis]:
    client = _client(url)
    try:
        yield client
    finally:
        await client.aclose()


@asynccontextmanager
async def _prefix(client: Redis) -> AsyncIterator[str]:
    """A prefix no other test uses; its keys are deleted afterwards."""
    prefix = f"intake-test:{secrets.token_hex(8)}:"
    try:
        yield prefix
    finally:
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)


@pytest.fixture(params=["memory", "redis", "fallback"])
async def limiter(request: pytest.FixtureRequest) -> AsyncIterator[RateLimiter]:
    if request.param == "memory":
        yield InProcessRateLimiter()
    elif request.param == "redis":
        # Asked for here, not as an argument: the other two start no Redis.
        url = request.getfixturevalue("redis_url")
        async with _redis(url) as client, _prefix(client) as prefix:
            yield RedisRateLimiter(client, prefix)
    else:
        # Redis down from the start, and never tried again: the degraded mode keeps the
        # contract too, within the process.
        down = _client(CLOSED_URL, connect_timeout=0.2)
        try:
            yield FallbackRateLimiter(
                RedisRateLimiter(down), InProcessRateLimiter(), clock_for_retry=lambda: 0.0
            )
        finally:
            await down.aclose()


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[Redis]:
    async with _redis(redis_url) as client:
        yield client


@pytest.fixture
async def prefix(redis_client: Redis) -> AsyncIterator[str]:
    async with _prefix(redis_client) as unique:
        yield unique


def window(key: str, limit: int, seconds: int) -> Window:
    # The form id in a hash tag, as the domain's key names have it.
    return Window(f"t:{{form_1}}:{key}", RateRule(limit, seconds))


async def admitted(limiter: RateLimiter, windows: Sequence[Window], now: float) -> bool:
    return (await limiter.hit(windows, now)).allowed


# The contract, for every implementation.


async def test_a_window_admits_its_limit_and_refuses_one_more(limiter: RateLimiter) -> None:
    burst = [window("ip", 5, 30)]

    results = [await admitted(limiter, burst, T0 + i) for i in range(5)]
    refused = await limiter.hit(burst, T0 + 5)

    assert results == [True] * 5
    assert refused == RateDecision(allowed=False, retry_after=25)


async def test_a_hit_leaves_the_window_exactly_window_seconds_after_it(
    limiter: RateLimiter,
) -> None:
    one = [window("ip", 1, 30)]
    await limiter.hit(one, T0)

    assert not await admitted(limiter, one, T0 + 29.999)
    assert await admitted(limiter, one, T0 + 30)


async def test_timestamps_keep_their_microseconds(limiter: RateLimiter) -> None:
    one = [window("ip", 1, 30)]
    start = 1_700_000_000.123456
    await limiter.hit(one, start)

    assert not await admitted(limiter, one, start + 29.999999)
    assert await admitted(limiter, one, start + 30)


async def test_refused_hits_are_not_counted(limiter: RateLimiter) -> None:
    two = [window("ip", 2, 30)]
    await limiter.hit(two, T0)
    await limiter.hit(two, T0 + 20)

    for second in range(1, 30):
        assert not await admitted(limiter, two, T0 + 20 + second / 3)

    # Only the two admitted hits are in the window: the first has left it.
    assert await admitted(limiter, two, T0 + 30)


async def test_hits_at_the_same_instant_count_separately(limiter: RateLimiter) -> None:
    three = [window("ip", 3, 30)]

    results = [await admitted(limiter, three, T0) for _ in range(4)]

    assert results == [True, True, True, False]


async def test_retry_after_is_the_whole_seconds_until_a_hit_is_admitted(
    limiter: RateLimiter,
) -> None:
    three = [window("ip", 3, 30)]
    for offset in (0, 10.5, 20.25):
        await limiter.hit(three, T0 + offset)

    now = T0 + 25
    for expected in (5, 11, 10):
        decision = await limiter.hit(three, now)
        assert decision == RateDecision(allowed=False, retry_after=expected)
        assert not await admitted(limiter, three, now + decision.retry_after - 1)
        now += decision.retry_after
        assert await admitted(limiter, three, now)


async def test_retry_after_is_at_least_one_second(limiter: RateLimiter) -> None:
    one = [window("ip", 1, 30)]
    await limiter.hit(one, T0)

    assert await limiter.hit(one, T0 + 29.875) == RateDecision(allowed=False, retry_after=1)
    assert await limiter.hit(one, T0) == RateDecision(allowed=False, retry_after=30)


async def test_retry_after_waits_for_the_last_full_window_to_have_room(
    limiter: RateLimiter,
) -> None:
    windows = [window("burst", 2, 10), window("sustained", 3, 60)]
    await limiter.hit(windows, T0)
    await limiter.hit(windows, T0 + 1)

    assert await limiter.hit(windows, T0 + 2) == RateDecision(allowed=False, retry_after=8)
    assert await admitted(limiter, windows, T0 + 10)
    # The burst window has room again; the sustained one holds T0, T0+1 and T0+10.
    assert await limiter.hit(windows, T0 + 20) == RateDecision(allowed=False, retry_after=40)
    assert await admitted(limiter, windows, T0 + 60)


async def test_a_refusal_by_one_window_counts_in_none(limiter: RateLimiter) -> None:
    strict, loose = window("strict", 1, 30), window("loose", 5, 30)
    await limiter.hit([strict, loose], T0)
    for second in range(1, 10):
        assert not await admitted(limiter, [loose, strict], T0 + second)

    # The loose window counted the first hit only, so four more fit.
    results = [await admitted(limiter, [loose], T0 + 10 + i) for i in range(5)]

    assert results == [True, True, True, True, False]


async def test_keys_are_independent(limiter: RateLimiter) -> None:
    first, second = window("ip-1", 1, 30), window("ip-2", 1, 30)
    await limiter.hit([first], T0)

    assert await admitted(limiter, [second], T0)
    assert not await admitted(limiter, [first], T0)
    assert not await admitted(limiter, [second], T0)


async def test_no_windows_admit_everything(limiter: RateLimiter) -> None:
    assert await limiter.hit([], T0) == RateDecision(allowed=True)


async def test_concurrent_hits_admit_exactly_the_limit(limiter: RateLimiter) -> None:
    windows = [window("ip", 10, 30), window("form", 100, 600)]
    decisions: list[RateDecision] = []

    async def one_hit() -> None:
        decisions.append(await limiter.hit(windows, T0))

    async with anyio.create_task_group() as tasks:
        for _ in range(50):
            tasks.start_soon(one_hit)

    assert sum(d.allowed for d in decisions) == 10
    assert {d.retry_after for d in decisions if not d.allowed} == {30}
    # The roomy window counted the ten admitted hits and none of the refused ones.
    assert await admitted(limiter, [window("form", 11, 600)], T0 + 1)
    assert await limiter.hit([window("form", 11, 600)], T0 + 2) == RateDecision(
        allowed=False, retry_after=598
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_decisions_match_the_in_process_reference_over_a_random_run(
    limiter: RateLimiter, seed: int
) -> None:
    reference = InProcessRateLimiter()
    rng = random.Random(seed)
    rules = {"b": (3, 5), "s": (6, 20), "f": (10, 60)}
    now = T0
    for step in range(300):
        # Steps that land on window edges (whole seconds) as well as between them.
        now += rng.choice([0, 0, 0.125, 0.5, 1, 1, 2, 5, 7.25])
        ip = rng.choice(["ip-1", "ip-2"])
        windows = [window(f"b:{ip}", *rules["b"]), window(f"s:{ip}", *rules["s"])]
        windows += [window("f", *rules["f"])] if rng.random() < 0.8 else []

        expected = await reference.hit(windows, now)
        assert await limiter.hit(windows, now) == expected, f"step {step} at {now - T0}"


# What only Redis has: one state for every worker, in keys that expire.


async def test_redis_keys_expire_with_their_window(redis_client: Redis, prefix: str) -> None:
    limiter = RedisRateLimiter(redis_client, prefix)
    windows = [window("burst", 5, 30), window("sustained", 30, 600)]

    await limiter.hit(windows, time.time())

    for each in windows:
        ttl = await redis_client.pttl(prefix + each.key)
        assert 0 < ttl <= each.rule.window_seconds * 1000


async def test_two_workers_share_one_limit_exactly(
    redis_client: Redis, prefix: str, redis_url: str
) -> None:
    other = _client(redis_url)
    try:
        workers = [RedisRateLimiter(redis_client, prefix), RedisRateLimiter(other, prefix)]
        windows = [window("ip", 7, 30)]
        decisions: list[RateDecision] = []

        async def one_hit(worker: RedisRateLimiter) -> None:
            decisions.append(await worker.hit(windows, T0))

        async with anyio.create_task_group() as tasks:
            for i in range(40):
                tasks.start_soon(one_hit, workers[i % 2])

        assert sum(d.allowed for d in decisions) == 7
        assert not await admitted(workers[0], windows, T0 + 29)
        assert not await admitted(workers[1], windows, T0 + 29)
        assert await admitted(workers[1], windows, T0 + 30)
    finally:
        await other.aclose()


async def test_a_prefix_cannot_hold_the_hash_tag_braces(redis_client: Redis) -> None:
    with pytest.raises(ValueError, match="braces"):
        RedisRateLimiter(redis_client, "intake:{rl}:")


async def test_an_unreachable_redis_raises_rate_limiter_unavailable() -> None:
    down = _client(CLOSED_URL, connect_timeout=0.2)
    try:
        with pytest.raises(RateLimiterUnavailable) as raised:
            await RedisRateLimiter(down).hit([window("ip", 1, 30)], T0)
    finally:
        await down.aclose()

    # Without the fallback the service answers 503, as for any storage failure.
    assert isinstance(raised.value, StorageUnavailable)


async def test_the_opened_limiter_counts_in_the_redis_at_its_url(
    redis_client: Redis, prefix: str, redis_url: str
) -> None:
    async with open_redis_rate_limiter(redis_url, prefix=prefix, socket_timeout=5) as limiter:
        assert await admitted(limiter, [window("ip", 1, 30)], T0)
        assert not await admitted(limiter, [window("ip", 1, 30)], T0 + 1)

    assert await redis_client.exists(prefix + window("ip", 1, 30).key) == 1


async def test_the_opened_limiter_fails_fast_when_redis_is_down() -> None:
    started = time.monotonic()
    async with open_redis_rate_limiter(CLOSED_URL, socket_timeout=0.2) as limiter:
        with pytest.raises(RateLimiterUnavailable):
            await limiter.hit([window("ip", 1, 30)], T0)

    # One immediate retry, no back-off: a down Redis costs the request little.
    assert time.monotonic() - started < 1


# The fallback: no real submission is lost because Redis is down.


class SwitchableLimiter:
    """A primary that can be taken down and brought back, counting the calls it gets."""

    def __init__(self) -> None:
        self.inner = InProcessRateLimiter()
        self.down = False
        self.calls = 0

    async def hit(self, windows: Sequence[Window], now: float) -> RateDecision:
        self.calls += 1
        if self.down:
            raise RateLimiterUnavailable("redis: ConnectionError: refused")
        return await self.inner.hit(windows, now)


class ManualClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == FALLBACK_LOGGER and r.levelno == logging.WARNING
    ]


async def test_the_fallback_answers_while_redis_is_unreachable_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=FALLBACK_LOGGER)
    down = _client(CLOSED_URL, connect_timeout=0.2)
    try:
        limiter = FallbackRateLimiter(RedisRateLimiter(down), InProcessRateLimiter())
        one = [window("ip", 1, 30)]

        first = await limiter.hit(one, T0)
        second = await limiter.hit(one, T0 + 1)
    finally:
        await down.aclose()

    assert first == RateDecision(allowed=True)
    assert second == RateDecision(allowed=False, retry_after=29)
    assert limiter.degraded
    [warning] = warnings_in(caplog)
    assert warning.startswith(
        "Redis unreachable: rate limits are held per process until it returns"
    )
    assert "ConnectionError" in warning


async def test_a_down_primary_is_tried_again_only_after_the_back_off() -> None:
    primary, clock = SwitchableLimiter(), ManualClock()
    primary.down = True
    limiter = FallbackRateLimiter(primary, InProcessRateLimiter(), clock, retry_every=1.0)
    many = [window("ip", 100, 30)]

    for _ in range(10):
        await limiter.hit(many, T0)
    clock.t += 0.999
    await limiter.hit(many, T0)
    assert primary.calls == 1

    clock.t += 0.001
    await limiter.hit(many, T0)
    await limiter.hit(many, T0)
    assert primary.calls == 2


async def test_a_recovered_primary_is_used_again_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=FALLBACK_LOGGER)
    primary, clock = SwitchableLimiter(), ManualClock()
    fallback = InProcessRateLimiter()
    limiter = FallbackRateLimiter(primary, fallback, clock)
    one = [window("ip", 1, 30)]
    primary.down = True
    assert await admitted(limiter, one, T0)  # counted by the fallback only

    primary.down = False
    clock.t += 1
    assert await admitted(limiter, one, T0 + 1)  # the primary's window was empty
    assert not await admitted(limiter, one, T0 + 2)

    assert primary.calls == 3
    assert not limiter.degraded
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert infos == ["Redis reachable again after 1 s: rate limits are shared again"]


async def test_the_warning_repeats_at_most_once_per_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=FALLBACK_LOGGER)
    primary, clock = SwitchableLimiter(), ManualClock()
    primary.down = True
    limiter = FallbackRateLimiter(primary, InProcessRateLimiter(), clock, warn_every=60)
    many = [window("ip", 1000, 30)]

    for _ in range(119):  # one probe a second for two minutes, less one
        await limiter.hit(many, T0)
        clock.t += 1

    assert primary.calls == 119
    assert len(warnings_in(caplog)) == 2
    assert "down for 60 s" in warnings_in(caplog)[1]


async def test_one_request_at_a_time_probes_a_down_primary() -> None:
    release = anyio.Event()

    class HangingPrimary:
        calls = 0

        async def hit(self, windows: Sequence[Window], now: float) -> RateDecision:
            self.calls += 1
            if self.calls > 1:
                await release.wait()
            raise RateLimiterUnavailable("redis: TimeoutError: timed out")

    primary, clock = HangingPrimary(), ManualClock()
    limiter = FallbackRateLimiter(primary, InProcessRateLimiter(), clock)
    many = [window("ip", 100, 30)]
    await limiter.hit(many, T0)
    clock.t += 1
    answered: list[RateDecision] = []

    async def one_hit() -> None:
        answered.append(await limiter.hit(many, T0))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(one_hit)  # the probe, which hangs
        await anyio.wait_all_tasks_blocked()
        for _ in range(5):
            await one_hit()  # answered at once by the fallback
        assert len(answered) == 5
        release.set()

    assert primary.calls == 2
    assert all(d.allowed for d in answered)
