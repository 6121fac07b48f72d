"""The Redis limiter sends the calls of concurrent requests together, in one round trip,
and each request still gets its own exact decision; a lost script cache, a restart and a
Redis that goes away in the middle of a round trip are answered as a lone call's would be.

Each test has a private redis-server (tests/support/instances.py), so that Redis's own
counters (the requests it read, the scripts it ran) are this test's alone, and so that
it may flush, pause, restart and kill it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence

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
from intake.domain.ratelimit import RateDecision, RateRule, Window
from intake.ports.rate_limiter import RateLimiter
from tests.support.instances import RedisInstance, private_redis

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

T0 = 1_700_000_000.125
PREFIX = "intake-test:"


@pytest.fixture
def server() -> Iterator[RedisInstance]:
    with private_redis() as instance:
        yield instance


@pytest.fixture
async def control(server: RedisInstance) -> AsyncIterator[Redis]:
    """The test's own connection, to read Redis's counters and to pause or flush it."""
    client = Redis.from_url(server.url, socket_timeout=5)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def client(server: RedisInstance) -> AsyncIterator[Redis]:
    """No retries: a test sees the first failure."""
    limiter_client = Redis.from_url(server.url, socket_timeout=5, retry=Retry(NoBackoff(), 0))
    try:
        yield limiter_client
    finally:
        await limiter_client.aclose()


def window(key: str, limit: int) -> Window:
    return Window(f"t:{{form_1}}:{key}", RateRule(limit, 30))


async def together(limiter: RateLimiter, windows: Sequence[Window], n: int) -> list[RateDecision]:
    """n hits made at the same moment, as n concurrent requests make them."""
    decisions: list[RateDecision] = []

    async def one_hit() -> None:
        decisions.append(await limiter.hit(windows, T0))

    async with anyio.create_task_group() as tasks:
        for _ in range(n):
            tasks.start_soon(one_hit)
    return decisions


def allowed(decisions: Sequence[RateDecision]) -> int:
    return sum(decision.allowed for decision in decisions)


async def reads(control: Redis) -> int:
    """The requests Redis has read from its clients: a command, or a pipeline of them,
    is one (this INFO included)."""
    return int((await control.info("stats"))["total_reads_processed"])


async def script_calls(control: Redis) -> int:
    stats = await control.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


async def wait_for_a_paused_call(control: Redis) -> None:
    """Until Redis holds a client's call unanswered (it tells no event of it)."""
    with anyio.fail_after(10):
        while int((await control.info("clients"))["blocked_clients"]) < 1:  # noqa: ASYNC110
            await anyio.sleep(0.01)


async def test_concurrent_hits_go_in_one_round_trip_and_admit_exactly_the_limit(
    client: Redis, control: Redis
) -> None:
    limiter = RedisRateLimiter(client, PREFIX)
    await limiter.hit([window("warm-up", 1)], T0)  # the connection opened, the script loaded
    before = await reads(control)

    decisions = await together(limiter, [window("ip", 10), window("form", 100)], 50)

    round_trips = await reads(control) - before - 1
    assert round_trips < 5, f"{round_trips} round trips for 50 hits"
    assert allowed(decisions) == 10
    assert {d.retry_after for d in decisions if not d.allowed} == {30}
    assert await control.zcard(PREFIX + window("form", 100).key) == 10


async def test_a_batch_holds_at_most_max_batch_calls(client: Redis, control: Redis) -> None:
    limiter = RedisRateLimiter(client, PREFIX, max_batch=8)
    await limiter.hit([window("warm-up", 1)], T0)
    before = await script_calls(control)

    decisions = await together(limiter, [window("ip", 20)], 40)

    assert allowed(decisions) == 20
    assert await script_calls(control) - before == 40


async def test_a_flushed_script_cache_is_survived_without_counting_twice(
    client: Redis, control: Redis
) -> None:
    limiter = RedisRateLimiter(client, PREFIX)
    assert allowed(await together(limiter, [window("ip", 10)], 20)) == 10
    await control.script_flush()
    assert await limiter.hit([window("lone", 1)], T0) == RateDecision(allowed=True)
    await control.script_flush()
    before = await reads(control)

    refused = await together(limiter, [window("ip", 10)], 20)
    fresh = await together(limiter, [window("other-ip", 5)], 20)

    # Each batch went once, was answered NOSCRIPT, and went again behind SCRIPT LOAD.
    assert await reads(control) - before - 1 <= 4
    assert allowed(refused) == 0
    assert allowed(fresh) == 5
    # The calls answered NOSCRIPT ran nothing: the windows hold the admitted hits only.
    assert await control.zcard(PREFIX + window("ip", 10).key) == 10
    assert await control.zcard(PREFIX + window("other-ip", 5).key) == 5
    assert await control.zcard(PREFIX + window("lone", 1).key) == 1


async def test_a_restarted_redis_is_used_again_by_the_next_batch(server: RedisInstance) -> None:
    async with open_redis_rate_limiter(server.url, prefix=PREFIX) as limiter:
        assert allowed(await together(limiter, [window("ip", 10)], 20)) == 10
        server.kill()
        server.start()  # empty, without the script, and the pooled connection broken

        # The broken connection is retried once; the script is loaded again; the window
        # went with the restart.
        assert allowed(await together(limiter, [window("ip", 10)], 20)) == 10


async def test_a_redis_gone_in_the_middle_of_a_batch_leaves_each_caller_the_fallback(
    server: RedisInstance, control: Redis
) -> None:
    async with open_redis_rate_limiter(server.url, prefix=PREFIX, socket_timeout=5) as shared:
        limiter = FallbackRateLimiter(shared, InProcessRateLimiter())
        await limiter.hit([window("warm-up", 1)], T0)
        await control.client_pause(60_000, all=False)  # scripts wait; INFO still answers
        decisions: list[RateDecision] = []

        async def one_hit() -> None:
            decisions.append(await limiter.hit([window("ip", 5)], T0))

        async with anyio.create_task_group() as tasks:
            for _ in range(20):
                tasks.start_soon(one_hit)
            await wait_for_a_paused_call(control)  # the batch is in Redis, unanswered
            server.kill()  # and its retry on a new connection is refused

        # The in-process stand-in decided every hit of the batch, exactly.
        assert limiter.degraded
        assert len(decisions) == 20
        assert allowed(decisions) == 5
        assert {d.retry_after for d in decisions if not d.allowed} == {30}


async def test_hits_queued_behind_a_failed_round_trip_fail_with_it(
    client: Redis, control: Redis
) -> None:
    limiter = RedisRateLimiter(client, PREFIX)
    await limiter.hit([window("warm-up", 1)], T0)
    calls_before = await script_calls(control)
    await control.client_pause(60_000, all=False)
    failures: list[RateLimiterUnavailable] = []

    async def one_hit() -> None:
        try:
            await limiter.hit([window("ip", 5)], T0)
        except RateLimiterUnavailable as error:
            failures.append(error)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(one_hit)  # a batch of its own, paused in Redis
        await wait_for_a_paused_call(control)
        for _ in range(10):
            tasks.start_soon(one_hit)  # queued behind it
        await anyio.wait_all_tasks_blocked()
        await control.client_kill_filter(_type="normal", skipme=True)  # its connection breaks
        await control.client_unpause()

    # A hung Redis holds a request up for one timeout, not one per batch ahead of it:
    # the queued hits failed with the first, though Redis was answering again.
    assert len(failures) == 11
    assert await script_calls(control) == calls_before
    assert await limiter.hit([window("ip", 5)], T0) == RateDecision(allowed=True)


async def test_a_hung_redis_times_out_and_the_next_hit_reads_its_own_reply(
    server: RedisInstance, control: Redis
) -> None:
    async with open_redis_rate_limiter(server.url, prefix=PREFIX, socket_timeout=0.3) as limiter:
        assert await limiter.hit([window("ip", 1)], T0) == RateDecision(allowed=True)
        await control.client_pause(60_000, all=False)  # scripts wait; INFO still answers

        with pytest.raises(RateLimiterUnavailable, match="TimeoutError"):
            await limiter.hit([window("ip", 1)], T0)  # would be refused
        await control.client_unpause()

        # The connection left with that reply unread was dropped, not read from again.
        assert await limiter.hit([window("other-ip", 1)], T0) == RateDecision(allowed=True)
